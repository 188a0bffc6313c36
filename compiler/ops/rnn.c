/*
 * compiler/ops/rnn.c - the recurrent ops RNN, GRU and LSTM.
 *
 * Inputs: X, W [D, G*H, I], R [D, G*H, H], optional B [D, 2*G*H],
 * sequence_lens [batch] (int32), initial_h, (LSTM) initial_c and
 * P [D, 3*H], where G is 1 (RNN), 3 (GRU) or 4 (LSTM), D the number of
 * directions (2 for "bidirectional", else 1) and H hidden_size (the
 * attribute, else read off the weights).  With layout 0 (the default, the
 * only one before opset 14) X is [seq, batch, I], Y [seq, D, batch, H]
 * and Y_h, Y_c [D, batch, H]; with layout 1 X is [batch, seq, I], Y
 * [batch, seq, D, H] and Y_h, Y_c [batch, D, H].  Every output is
 * optional.
 */
#include <string.h>

#include "opimpl.h"

typedef struct Rnn {
	int64_t dirs, hidden, seq, batch, input;
} Rnn;

/* *known must equal v where both are known; an unknown *known takes v. */
static int agree(OpCtx *c, int64_t *known, int64_t v, const char *what,
		 int i)
{
	const Value *in = op_in(c, i);
	char buf[128];
	if (v < 0)
		return 0;
	if (*known >= 0 && *known != v)
		return op_error(c, "input %d ('%s', shape %s) gives %s = %lld, "
				"expected %lld", i, in->name,
				shape_str(&in->shape, buf, sizeof(buf)), what,
				(long long)v, (long long)*known);
	*known = v;
	return 0;
}

/* A dim that must be a multiple m of the hidden size: gives H. */
static int hidden_from(OpCtx *c, Rnn *r, int i, int32_t axis, int64_t m)
{
	const Value *in = op_in(c, i);
	char buf[128];
	int64_t d = in ? shape_dim(&in->shape, axis) : DIM_UNKNOWN;
	if (d < 0)
		return 0;
	if (d % m)
		return op_error(c, "input %d ('%s') has shape %s; dim %d must "
				"be a multiple of %lld", i, in->name,
				shape_str(&in->shape, buf, sizeof(buf)), axis,
				(long long)m);
	return agree(c, &r->hidden, d / m, "hidden_size", i);
}

int infer_rnn(OpCtx *c)
{
	int op = c->n->op;
	int64_t gates = op == OP_LSTM ? 4 : op == OP_GRU ? 3 : 1;
	int64_t layout = c->opset >= 14 ? attr_int(c->n, "layout", 0) : 0;
	const char *dir = attr_str(c->n, "direction", "forward");
	const Attr *hs = nn_attr(c->n, "hidden_size", ATTR_INT);
	int nin = op == OP_LSTM ? 8 : 6;
	Value *x = op_need_in(c, 0);
	Rnn r = { .hidden = DIM_UNKNOWN, .seq = DIM_UNKNOWN };
	if (!x || !op_need_in(c, 1) || !op_need_in(c, 2) ||
	    op_check_dtype(c, 0, DTS_FLOAT) < 0)
		return -1;
	for (int i = 1; i < nin; i++) {
		int32_t rank = i == 3 || i == 7 ? 2 : i == 4 ? 1 : 3;
		if (i == 4 ? op_check_dtype(c, i, DTS(DT_INT32)) < 0
			   : op_check_same_dtype(c, i, 0) < 0)
			return -1;
		if (op_check_rank(c, i, rank, rank) < 0)
			return -1;
	}
	if (op_check_rank(c, 0, 3, 3) < 0)
		return -1;
	if (!strcmp(dir, "forward") || !strcmp(dir, "reverse"))
		r.dirs = 1;
	else if (!strcmp(dir, "bidirectional"))
		r.dirs = 2;
	else
		return op_error(c, "direction is '%s', expected forward, "
				"reverse or bidirectional", dir);
	if (layout != 0 && layout != 1)
		return op_error(c, "layout is %lld, expected 0 or 1",
				(long long)layout);
	if (hs) {
		if (hs->i < 1)
			return op_error(c, "hidden_size is %lld, expected >= 1",
					(long long)hs->i);
		r.hidden = hs->i;
	}
	const Shape *xs = &x->shape;
	r.seq = shape_dim(xs, layout ? 1 : 0);
	r.batch = shape_dim(xs, layout ? 0 : 1);
	r.input = shape_dim(xs, 2);
	/* hidden size and directions from W, R, B, initial_h/c, P */
	if (hidden_from(c, &r, 2, 2, 1) < 0 || hidden_from(c, &r, 1, 1, gates) < 0 ||
	    hidden_from(c, &r, 2, 1, gates) < 0 ||
	    hidden_from(c, &r, 3, 1, 2 * gates) < 0 ||
	    hidden_from(c, &r, 5, 2, 1) < 0 ||
	    (op == OP_LSTM && (hidden_from(c, &r, 6, 2, 1) < 0 ||
			       hidden_from(c, &r, 7, 1, 3) < 0)))
		return -1;
	for (int i = 1; i < nin; i++) {
		const Value *in = op_in(c, i);
		if (!in || i == 4)
			continue;
		int32_t da = (i == 5 || i == 6) && layout ? 1 : 0;
		if (agree(c, &r.dirs, shape_dim(&in->shape, da),
			  "num_directions", i) < 0)
			return -1;
		if ((i == 5 || i == 6) &&
		    agree(c, &r.batch, shape_dim(&in->shape, layout ? 0 : 1),
			  "batch_size", i) < 0)
			return -1;
	}
	if (agree(c, &r.input, shape_dim(&op_in(c, 1)->shape, 2),
		  "input_size", 1) < 0)
		return -1;
	const Value *sl = op_in(c, 4);
	if (sl && agree(c, &r.batch, shape_dim(&sl->shape, 0), "batch_size",
			4) < 0)
		return -1;
	Shape y = { .rank = 4 }, yh = { .rank = 3 };
	if (layout) {
		y.dims[0] = r.batch, y.dims[1] = r.seq, y.dims[2] = r.dirs;
		yh.dims[0] = r.batch, yh.dims[1] = r.dirs;
	} else {
		y.dims[0] = r.seq, y.dims[1] = r.dirs, y.dims[2] = r.batch;
		yh.dims[0] = r.dirs, yh.dims[1] = r.batch;
	}
	y.dims[3] = yh.dims[2] = r.hidden;
	op_set_out(c, 0, x->dtype, &y);
	op_set_out(c, 1, x->dtype, &yh);
	if (op == OP_LSTM)
		op_set_out(c, 2, x->dtype, &yh);
	return 0;
}
