/*
 * compiler/gearspec.h - --input_shape and the gear options (DESIGN section 2).
 *
 * Two steps, so the CLI can tell the two exit statuses apart:
 *   gear_parse()  checks the flag strings alone (syntax, counts, duplicates,
 *                 which options go together).  Its errors are usage errors:
 *                 exit status 2.
 *   gear_apply()  checks the parsed options against the model (names exist
 *                 and are inputs, ranks and static dims agree, every input
 *                 with unknown dims is listed, ...), sets the static dims
 *                 of --input_shape on the graph inputs, and builds
 *                 m->gears and m->mode.  Its errors are exit status 1.
 * Every error is one line naming the flag and the offending value/input.
 */
#ifndef GEARC_GEARSPEC_H
#define GEARC_GEARSPEC_H

#include "ir.h"

typedef struct GearOptions {
	const char *input_shape; /* NULL when not given */
	const char *dynamic_batch_size;
	const char *dynamic_image_size;
	const char *dynamic_dims;
	const char *input_format; /* NULL: NCHW */
} GearOptions;

typedef struct ShapeEntry {
	char *name;
	int32_t rank;
	int64_t dims[MAX_RANK]; /* -1: gear dim */
} ShapeEntry;

typedef struct ParsedGears {
	int32_t mode; /* GearMode: MODE_STATIC when no gear option */
	int32_t format; /* 0 NCHW, 1 NHWC, 2 ND */
	int32_t nshapes;
	ShapeEntry *shapes; /* --input_shape entries, in order */
	int32_t ngears, nvals; /* nvals values per gear */
	int64_t *table;        /* ngears * nvals */
} ParsedGears;

int gear_parse(ParsedGears *p, const GearOptions *o);
void gear_parsed_release(ParsedGears *p);
int gear_apply(Model *m, const ParsedGears *p);

#endif
