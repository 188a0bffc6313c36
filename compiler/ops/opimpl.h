/*
 * compiler/ops/opimpl.h - what an op hook sees, and every hook's prototype.
 *
 * A hook gets an OpCtx for one node.  infer hooks set the dtype and shape
 * of every output with op_set_out() (a dim they cannot know is -1, and
 * VF_DATA_DEP marks one that depends on data values); fold hooks compute
 * the outputs' contents from constant inputs with op_set_const().  On a
 * user-visible problem a hook returns op_error(c, ...), which names the
 * node and op.
 */
#ifndef GEARC_OPIMPL_H
#define GEARC_OPIMPL_H

#include "../ir.h"

typedef struct OpCtx {
	Model *model;
	Graph *g;
	Node *n;
	int64_t opset;	    /* default-domain opset version */
	int64_t fold_limit; /* max bytes of a folded output */
} OpCtx;

/* Input i, or NULL if omitted or past the end. */
Value *op_in(OpCtx *c, int i);
/* Constant contents of input i, or NULL if not known. */
const Tensor *op_const_in(OpCtx *c, int i);
/* Output i, or NULL if omitted or past the end. */
Value *op_out(OpCtx *c, int i);
/* Sets output i's dtype and shape (no-op if the output is omitted). */
void op_set_out(OpCtx *c, int i, int dtype, const Shape *s);
/* Sets output i's contents (and so its dtype and shape). */
void op_set_const(OpCtx *c, int i, const Tensor *t);
/* Formats "node 'NAME' (OP): <message>" as the error; returns -1. */
int op_error(OpCtx *c, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* ---- hooks (one line per hook, grouped by family file) ---------------- */

#endif
