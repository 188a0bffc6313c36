/*
 * compiler/gearspec.h - --input_shape and the gear options.
 *
 * Two steps, so the CLI can tell the two exit statuses apart:
 *   gear_parse()  (cli/gearflags.c, declared in cli/cli.h: the grammar is
 *                 the command line's) checks the flag strings alone (syntax, counts, duplicates,
 *                 which options go together).  Its errors are usage errors:
 *                 exit status 2.
 *   gear_apply()  checks the parsed options against the model (names exist
 *                 and are inputs, ranks and static dims agree, every input
 *                 with unknown dims is listed, ...), sets the static dims
 *                 of --input_shape on the graph inputs, and builds
 *                 m->gears and m->mode.  Its errors are exit status 1.
 * Every error is one line naming the flag and the offending value/input.
 *
 * Syntax (all checked by gear_parse, cli/gearflags.c):
 *   --input_shape="name:d0,d1,...;name2:..."
 *       Entries split on ';'; name and dims split at the LAST ':' (ONNX
 *       names may contain ':'); the name is trimmed of spaces and tabs.
 *       A dim is an integer >= 0 (0: a zero-size tensor, as ONNX allows)
 *       or -1 (a gear dim); at most MAX_RANK dims; a name may appear only
 *       once.  No dims at all ("sr:") is a scalar (rank 0), atc's syntax
 *       for one.  No empty entry, so no trailing ';' (atc rejects it too).
 *   --dynamic_batch_size="1,8,16"          gears split on ','
 *   --dynamic_image_size="224,224;448,448" gears split on ';', H,W each
 *   --dynamic_dims="1,32;1,64"             gears split on ';', one value
 *                                          per -1 of --input_shape
 *       One trailing gear separator is ignored, as atc does ("1,8," and
 *       "1,32;1,64;" are accepted); anything else empty ("1,,8", ";;",
 *       "1,32;;1,64", ",1") is an error.  Values are positive integers
 *       that fit in int64; spaces and tabs around a value are ignored.
 *       2 to GEAR_MAX gears, no two alike.
 *   --input_format=NCHW|NHWC|ND            (default NCHW) where H and W
 *       are for --dynamic_image_size; ND is an error with it.
 *   --input_shape also takes trtexec's "x:1x3x224x224" (entries split on
 *       ',' or ';') and OpenVINO's "x[1,3,224,224]" (dims on ',' or
 *       blanks, '?' for -1, entries on ',' or ';'); gear_parse turns
 *       both into the form above, which is what the .om records.  One
 *       form per flag.
 *   --dynamic_dims="batch:1,4;past_sequence_length:128,256" - the named
 *       form, keyed by the model's dim_param names: the gears are every
 *       combination of the entries' values, the last entry varying
 *       fastest (here 4 gears).  Every input dim carrying a named
 *       dim_param becomes a gear dim; --input_shape is optional (inputs
 *       it does not list take the model's shape with those -1s).
 *
 * The gear table.  Row g of ParsedGears.table and GearSpec.table gives
 * the value of every -1 of --input_shape, entries in --input_shape order,
 * axes in increasing order; nvals is the total number of -1s.  All three
 * modes share this layout:
 *   dims:       the row is the gear as the user wrote it.
 *   batch:      the gear's one value, repeated for each input with a -1
 *               (each such input has exactly one -1, at dim 0).
 *   image size: the gear's (H,W), repeated for each input with -1s (each
 *               has exactly two, at H and W, H first in both layouts).
 * E.g. --input_shape="a:-1,3;b:-1,5" --dynamic_batch_size="1,8" gives
 * nvals 2 and the table {1,1, 8,8}.
 */
#ifndef GEARC_GEARSPEC_H
#define GEARC_GEARSPEC_H

#include "ir.h"

typedef struct ShapeEntry {
	char *name;
	int32_t rank;
	int64_t dims[MAX_RANK]; /* -1: gear dim */
} ShapeEntry;

#define GEAR_MIN 2
#define GEAR_MAX 100

enum { FMT_NCHW = 0, FMT_NHWC = 1, FMT_ND = 2 };

/* The options recorded in Model.options, in this order. */
enum {
	GOPT_INPUT_SHAPE,
	GOPT_INPUT_FORMAT,
	GOPT_DYNAMIC_BATCH_SIZE,
	GOPT_DYNAMIC_IMAGE_SIZE,
	GOPT_DYNAMIC_DIMS,
	GOPT_COUNT
};
/* "input_shape", "input_format", ... (the flag without "--"). */
const char *gear_option_key(int gopt);

/* One entry of the named --dynamic_dims form: a dim_param and its
 * values, e.g. "past_sequence_length:128,256". */
typedef struct NamedDim {
	char *name;
	int32_t n;
	int64_t *vals;
} NamedDim;

typedef struct ParsedGears {
	int32_t mode; /* GearMode: MODE_STATIC when no gear option */
	int32_t format; /* 0 NCHW, 1 NHWC, 2 ND */
	int32_t nshapes;
	ShapeEntry *shapes; /* --input_shape entries, in order */
	int32_t ngears, nvals; /* nvals values per gear: one per -1 */
	int64_t *table;        /* ngears * nvals, layout above */
	char *given[GOPT_COUNT]; /* copies of the option strings, or NULL */
	/* The named --dynamic_dims form: ngears is the product of the
	 * entries' counts; nvals and table wait for the model
	 * (gear_apply), as do shapes the model gives. */
	int32_t nnamed;
	NamedDim *named;
} ParsedGears;

/* Frees what gear_parse (cli/gearflags.c) put in *p and empties it. */
void gear_parsed_release(ParsedGears *p);

/* User text in a message (gear_parse's and gear_apply's): at most
 * QUOTE_MAX bytes of p[0..len) (cut at a UTF-8 boundary, "..." added),
 * quotes and backslashes escaped, control bytes as \xNN, so a message
 * stays one line of bounded length.  Returns q->s. */
enum { QUOTE_MAX = 64 };
typedef struct Quote {
	char s[4 * QUOTE_MAX + 4];
} Quote;
const char *gear_quote(Quote *q, const char *p, size_t len);
/* How many gear dims (-1) entry e has. */
int32_t gear_count_dyn(const ShapeEntry *e);

/* Checks p against m->graph's inputs and applies it: each listed input's
 * Value.shape becomes its --input_shape dims (-1 kept at gear dims),
 * m->mode is set, m->gears is built from m->arena (NULL for a static
 * compile) and the given options are recorded with model_add_option() in
 * GOPT order.  Returns 0, or -1 with an error set (exit status 1); on
 * error m is unchanged.  Rules:
 *   - each name is a tensor input of the graph (not an initializer);
 *   - its rank equals the model's declared rank, if known;
 *   - each static dim equals the model's dim where that is known (>= 0);
 *   - a -1 only where the model's dim is unknown;
 *   - every input whose model shape has an unknown dim or rank is listed.
 */
int gear_apply(Model *m, const ParsedGears *p);

/* The printf format of gear g's label ("Batch_3", atc's name for a
 * gear's subgraph): its branch graph's name and its nodes' label
 * (passes/gear.c), Gear.label in the .om (serializer/lower.c). */
#define GEAR_LABEL "Batch_%d"

/* The exact shape of gear input k (0 <= k < s->ninputs) at gear g: its
 * --input_shape dims with the gear's values at the -1s. */
Shape gear_input_shape(const GearSpec *s, int32_t k, int32_t g);
/* The gear at which input k is largest: the largest product of its
 * dynamic values (a product past INT64_MAX counts as INT64_MAX), the
 * first such gear on ties. */
int32_t gear_max_index(const GearSpec *s, int32_t k);
/* gear_input_shape(s, k, gear_max_index(s, k)). */
Shape gear_max_shape(const GearSpec *s, int32_t k);
/* Index in s->inputs of the gear input with ValId v, or -1. */
int32_t gear_input_index(const GearSpec *s, ValId v);

#endif
