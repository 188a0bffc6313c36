/*
 * compiler/edit.h - atc's edits of a model's inputs and outputs:
 *   --out_nodes="node:0;node2:1"   those node outputs become the model's
 *       outputs, in that order (or "tensor;tensor2": value names, the
 *       form atc documents for Caffe's top names); what no longer reaches
 *       an output is dropped by the specialise pass's dead-node removal.
 *       Inputs stay inputs.
 *   --output_type=FP32|FP16|UINT8  every float output converted to it;
 *       or "node:0:FP16;node2:1:UINT8" per output (its producer and
 *       output index).  A Cast is inserted before each such output, which
 *       keeps its name; UINT8 is a QuantizeLinear with scale 1 and zero
 *       point 0 (rounds half to even and saturates to 0..255, where a
 *       plain Cast truncates and leaves out-of-range values undefined).
 *   --input_fp16_nodes="x;y"   those float32 inputs take float16: the
 *       input keeps its value id (the gear spec names it) and a Cast to
 *       float32 after it feeds what it fed.
 *
 * As in gearspec.h, edit_parse() (cli/editflags.c) checks the flag
 * strings alone (usage errors, exit 2) and edit_apply() checks them
 * against the model and edits it (exit 1), after gear_apply and
 * pin_apply, before the passes.  Each applied flag is recorded.
 */
#ifndef GEARC_EDIT_H
#define GEARC_EDIT_H

#include "ir.h"

typedef struct OutRef {
	char *name;    /* node name, or value name when index is -1 */
	int32_t index; /* output index, -1: name is a value's */
	int32_t dtype; /* --output_type's per-output form: its dtype */
} OutRef;

typedef struct ParsedEdits {
	int32_t nout;
	OutRef *out;	    /* --out_nodes, in order */
	int32_t all_type;   /* --output_type=TYPE: DT_*, else 0 */
	int32_t ntypes;
	OutRef *types;	    /* --output_type's per-output form */
	int32_t nfp16;
	char **fp16;	    /* --input_fp16_nodes */
	const char *given[3]; /* the flags as given, for the .om's options */
} ParsedEdits;

void edit_parsed_release(ParsedEdits *p);
int edit_apply(Model *m, const ParsedEdits *p);

/* ---- graph surgery the edits and preprocessing share -------------------- */

/* Every use of value old by g's first nodes [0, limit) (inputs, and
 * their subgraphs' outer references) and by g's outputs becomes new_id:
 * nodes appended after limit read old. */
void graph_replace_uses(Graph *g, ValId old, ValId new_id, int32_t limit);
/* A node of one input and one output value, new, named after out. */
ValId graph_add_unary(Graph *g, const char *op, ValId in, const char *out);
/* A float32 weight named after base. */
ValId graph_add_f32(Graph *g, const char *base, const float *v,
		    int32_t rank, const int64_t *dims);
/* An int64 weight named after base. */
ValId graph_add_i64(Graph *g, const char *base, const int64_t *v,
		    int32_t rank, const int64_t *dims);

#endif
