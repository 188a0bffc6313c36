/* compiler/preproc.c - AIPP and mean/scale preprocessing as ONNX nodes
 * before the model's input, folded into its first Conv where that is
 * exact (compiler/preproc.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit.h"
#include "preproc.h"

void pre_parsed_release(ParsedPre *p)
{
	for (int32_t i = 0; i < p->n; i++)
		free(p->e[i].input);
	free(p->e);
	memset(p, 0, sizeof(*p));
}

/* ---- building nodes --------------------------------------------------------- */

typedef struct Build {
	Graph *g;
	int64_t opset;
	const char *base; /* the input's name: node names start with it */
	ValId cur;	  /* the tensor the next step reads */
	int32_t nodes;	  /* nodes added */
} Build;

/* A node of op (in domain) reading the current tensor (input 0; the
 * caller sets the rest), whose output becomes it. */
static Node *step_in(Build *b, const char *op, const char *domain,
		     const char *what, int32_t nin)
{
	Graph *g = b->g;
	const char *name = graph_fresh_name(
		g, arena_printf(g->arena, "%s/%s", b->base, what));
	ValId out = graph_add_value(g, name, VAL_NODE);
	Node *n = graph_add_node(g, name, op, domain, nin, 1);
	n->inputs[0] = b->cur;
	n->outputs[0] = out;
	b->cur = out;
	b->nodes++;
	return n;
}

static Node *step(Build *b, const char *op, const char *what, int32_t nin)
{
	return step_in(b, op, "", what, nin);
}

static void set_int(Graph *g, Node *n, const char *name, int64_t v)
{
	node_add_attr(g, n, name, ATTR_INT)->i = v;
}

static ValId i64s(Build *b, const char *what, const int64_t *v, int64_t n)
{
	return graph_add_i64(b->g, arena_printf(b->g->arena, "%s/%s", b->base,
						what),
			     v, 1, &n);
}

static ValId f32s(Build *b, const char *what, const float *v, int32_t rank,
		  const int64_t *dims)
{
	return graph_add_f32(b->g, arena_printf(b->g->arena, "%s/%s", b->base,
						what),
			     v, rank, dims);
}

static void cast(Build *b, int dt)
{
	set_int(b->g, step(b, "Cast", "cast", 1), "to", dt);
}

/* Slice along axes[0..n) from starts to ends (opset 10 made them
 * inputs). */
static void slice(Build *b, const char *what, const int64_t *starts,
		  const int64_t *ends, const int64_t *axes, int64_t n)
{
	if (b->opset < 10) {
		Node *s = step(b, "Slice", what, 1);
		node_add_ints(b->g, s, "starts", starts, (int32_t)n);
		node_add_ints(b->g, s, "ends", ends, (int32_t)n);
		node_add_ints(b->g, s, "axes", axes, (int32_t)n);
		return;
	}
	ValId st = i64s(b, "starts", starts, n), en = i64s(b, "ends", ends, n),
	      ax = i64s(b, "axes", axes, n);
	Node *s = step(b, "Slice", what, 4);
	s->inputs[1] = st;
	s->inputs[2] = en;
	s->inputs[3] = ax;
}

static void transpose(Build *b, const int64_t *perm, int32_t rank)
{
	node_add_ints(b->g, step(b, "Transpose", "layout", 1), "perm", perm,
		      rank);
}

/* Channels picked in the order idx gives, along axis. */
static void gather(Build *b, const int64_t *idx, int64_t n, int64_t axis)
{
	ValId k = i64s(b, "channels", idx, n);
	Node *s = step(b, "Gather", "swap", 2);
	s->inputs[1] = k;
	set_int(b->g, s, "axis", axis);
}

static void binary(Build *b, const char *op, const char *what, ValId w)
{
	step(b, op, what, 2)->inputs[1] = w;
}

/* ---- the steps -------------------------------------------------------------- */

/* What the frame is, from the spec and the model input's shape. */
typedef struct Frame {
	int32_t rank, c_axis; /* the model's channel axis */
	int64_t model[MAX_RANK]; /* the model input's dims */
	int64_t c, c_in;      /* model channels, frame channels */
	int64_t perm[MAX_RANK]; /* frame layout -> model layout */
	bool transposed;
	int32_t frank;	      /* the frame's rank (YUV420SP: 3) */
} Frame;

/* The channel order after the swap, in perm[0..c): frame channel
 * perm[k] becomes channel k. */
static bool swap_order(const PreSpec *s, int64_t c, int64_t *perm)
{
	for (int64_t k = 0; k < c; k++)
		perm[k] = k;
	if (s->reverse)
		for (int64_t k = 0; k < c; k++)
			perm[k] = c - 1 - k;
	else if (s->swap && c == 3 && s->format != PF_YUV420SP)
		perm[0] = 2, perm[2] = 0; /* R<->B (YUV420SP's U,V: its node) */
	for (int64_t k = 0; k < c; k++)
		if (perm[k] != k)
			return true;
	return false;
}

/* Crop, the frame's channel selection, on the raw frame (NHWC). */
static void crop_and_select(Build *b, const PreSpec *s)
{
	if (s->crop) {
		int64_t st[2] = { s->crop_y, s->crop_x },
			en[2] = { s->crop_y + s->crop_h, s->crop_x + s->crop_w },
			ax[2] = { 1, 2 };
		slice(b, "crop", st, en, ax, 2);
	}
	if (s->format == PF_XRGB8888 || s->format == PF_RGBX8888) {
		bool x_first = s->format == PF_XRGB8888 && !s->ax_swap;
		int64_t st = x_first ? 1 : 0, en = st + 3, ax = 3;
		slice(b, "channels", &st, &en, &ax, 1);
	}
}

/* atc's colour space conversion on NHWC float pixels. */
static void csc(Build *b, const PreSpec *s)
{
	float ib[3], mt[9], ob[3];
	int64_t three = 3, mdims[2] = { 3, 3 };
	bool any_ib = false, any_ob = false;
	for (int r = 0; r < 3; r++) {
		ib[r] = (float)s->in_bias[r];
		ob[r] = (float)s->out_bias[r];
		any_ib |= ib[r] != 0;
		any_ob |= ob[r] != 0;
		/* out_r = sum_k M[r][k] in_k: MatMul by M^T, divided by 256
		 * exactly (a power of two) */
		for (int k = 0; k < 3; k++)
			mt[k * 3 + r] = (float)(s->matrix[r][k] / 256.0);
	}
	if (any_ib)
		binary(b, "Sub", "csc_in_bias",
		       f32s(b, "csc_in_bias", ib, 1, &three));
	binary(b, "MatMul", "csc", f32s(b, "csc_matrix", mt, 2, mdims));
	step(b, "Floor", "csc_shift", 1);
	if (any_ob)
		binary(b, "Add", "csc_out_bias",
		       f32s(b, "csc_out_bias", ob, 1, &three));
	float lo = 0, hi = 255;
	if (b->opset < 11) {
		Node *c = step(b, "Clip", "csc_clip", 1);
		node_add_attr(b->g, c, "min", ATTR_FLOAT)->f = lo;
		node_add_attr(b->g, c, "max", ATTR_FLOAT)->f = hi;
		return;
	}
	ValId l = f32s(b, "csc_min", &lo, 0, NULL),
	      h = f32s(b, "csc_max", &hi, 0, NULL);
	Node *c = step(b, "Clip", "csc_clip", 3);
	c->inputs[1] = l;
	c->inputs[2] = h;
}

/* YUV420SP_U8's frame [N, src_h*3/2, src_w] as the model's float NCHW
 * channels: crop, U/V order, csc in one node (compiler/ops/image.h). */
static void yuv420sp(Build *b, const PreSpec *s)
{
	Graph *g = b->g;
	Node *n = step_in(b, "Yuv420sp", GEARC_DOMAIN, "yuv420sp", 1);
	if (s->swap)
		set_int(g, n, "vu", 1);
	if (s->crop) {
		int64_t c[4] = { s->crop_y, s->crop_x, s->crop_h, s->crop_w };
		node_add_ints(g, n, "crop", c, 4);
	}
	if (!s->csc)
		return;
	int64_t m[9], ib[3], ob[3];
	for (int r = 0; r < 3; r++) {
		for (int k = 0; k < 3; k++) /* integers (cli/preflags.c) */
			m[r * 3 + k] = (int64_t)s->matrix[r][k];
		ib[r] = (int64_t)s->in_bias[r];
		ob[r] = (int64_t)s->out_bias[r];
	}
	node_add_ints(g, n, "matrix", m, 9);
	node_add_ints(g, n, "input_bias", ib, 3);
	node_add_ints(g, n, "output_bias", ob, 3);
}

/* Per-channel values as a tensor that broadcasts along the model's
 * channel axis: [C,1,1] for NCHW. */
static ValId chan_tensor(Build *b, const Frame *f, const char *what,
			 const float *v)
{
	int64_t dims[MAX_RANK];
	int32_t rank = f->rank - f->c_axis;
	for (int32_t d = 0; d < rank; d++)
		dims[d] = d ? 1 : f->c;
	return f32s(b, what, v, rank, dims);
}

static void pad(Build *b, const PreSpec *s, const Frame *f)
{
	int64_t pads[2 * MAX_RANK] = { 0 };
	int32_t r = f->rank;
	pads[r - 2] = s->pad_t, pads[r - 1] = s->pad_l;
	pads[2 * r - 2] = s->pad_b, pads[2 * r - 1] = s->pad_r;
	if (b->opset < 11) {
		Node *p = step(b, "Pad", "padding", 1);
		node_add_ints(b->g, p, "pads", pads, 2 * r);
		node_add_attr(b->g, p, "value", ATTR_FLOAT)->f = s->pad_value;
		return;
	}
	ValId pv = i64s(b, "pads", pads, 2 * r);
	ValId cv = f32s(b, "padding_value", &s->pad_value, 0, NULL);
	Node *p = step(b, "Pad", "padding", 3);
	p->inputs[1] = pv;
	p->inputs[2] = cv;
}

/* ---- folding into the first Conv ---------------------------------------- */

typedef struct Fold {
	int32_t nconv;
	int32_t conv[16];
	bool padded; /* some Conv pads its input */
	const char *why; /* why it does not fold, or NULL */
} Fold;

/* A value's constant contents: a weight's, or a Constant node's tensor
 * (exporters such as paddle2onnx make every weight one), before
 * inference would fold it. */
static const Tensor *const_of(const Graph *g, ValId v)
{
	if (v < 0)
		return NULL;
	const Value *x = &g->vals[v];
	if (x->konst)
		return x->konst;
	if (x->producer < 0 || g->nodes[x->producer].op != OP_Constant)
		return NULL;
	const Attr *a = node_attr(&g->nodes[x->producer], "value");
	return a && a->type == ATTR_TENSOR ? a->t : NULL;
}

static bool conv_pads(const Node *n)
{
	const int64_t *p;
	int32_t np = attr_ints(n, "pads", &p);
	for (int32_t i = 0; i < np; i++)
		if (p[i])
			return true;
	const char *ap = attr_str(n, "auto_pad", "NOTSET");
	return !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
}

/* Whether every reader of v among g's first n nodes is a Conv that takes
 * it as X with constant float weights of c input channels, group 1. */
static void can_fold(const Graph *g, ValId v, int32_t n, int64_t c, Fold *f)
{
	memset(f, 0, sizeof(*f));
	for (int32_t i = 0; i < g->noutputs; i++)
		if (g->outputs[i] == v)
			f->why = "the input is also an output";
	for (int32_t i = 0; i < n && !f->why; i++) {
		const Node *nd = &g->nodes[i];
		bool reads = false;
		for (int32_t k = 0; k < nd->ninputs; k++)
			reads |= nd->inputs[k] == v;
		if (node_has_subgraphs(nd))
			reads = true;
		if (!reads)
			continue;
		const Tensor *w = nd->ninputs > 1 ? const_of(g, nd->inputs[1])
						  : NULL;
		bool has_bias = nd->ninputs > 2 && nd->inputs[2] >= 0;
		const Tensor *bias = has_bias ? const_of(g, nd->inputs[2])
					      : NULL;
		if (nd->op != OP_Conv || nd->inputs[0] != v ||
		    (nd->ninputs > 1 && nd->inputs[1] == v))
			f->why = arena_printf(g->arena, "'%s' (%s) reads it",
					      nd->name, nd->op_type);
		else if (!w || w->dtype != DT_FLOAT || w->shape.rank != 4 ||
			 w->shape.dims[1] != c || attr_int(nd, "group", 1) != 1)
			f->why = arena_printf(g->arena, "Conv '%s' has no "
					      "constant float weights over its "
					      "%lld channels", nd->name,
					      (long long)c);
		else if (has_bias && (!bias || bias->dtype != DT_FLOAT))
			f->why = arena_printf(g->arena, "Conv '%s' has no "
					      "constant bias", nd->name);
		else if (f->nconv == (int32_t)ARRAY_SIZE(f->conv))
			f->why = "too many Convs read it";
		else {
			f->conv[f->nconv++] = i;
			f->padded |= conv_pads(nd);
		}
	}
	if (!f->why && !f->nconv)
		f->why = "nothing reads it";
}

/* Conv i's weights take the swap (frame channel perm[k] is model channel
 * k) and the scale; its bias the offset unless offset is NULL. */
static void fold_conv(Graph *g, int32_t i, const int64_t *perm,
		      const float *scale, const float *offset)
{
	Node *n = &g->nodes[i];
	const Tensor *w = const_of(g, n->inputs[1]);
	const Tensor *b = n->ninputs > 2 ? const_of(g, n->inputs[2]) : NULL;
	int64_t o = w->shape.dims[0], c = w->shape.dims[1],
		k = w->shape.dims[2] * w->shape.dims[3];
	float *nw = xmalloc((size_t)(o * c * k) * sizeof(float));
	float *nb = xcalloc((size_t)o, sizeof(float));
	const float *ow = w->data;
	for (int64_t oi = 0; oi < o; oi++) {
		double acc = b ? ((const float *)b->data)[oi] : 0;
		for (int64_t ci = 0; ci < c; ci++)
			for (int64_t j = 0; j < k; j++) {
				float x = ow[(oi * c + ci) * k + j];
				/* frame channel perm[ci] feeds model ci */
				nw[(oi * c + perm[ci]) * k + j] = x * scale[ci];
				if (offset)
					acc += (double)x * offset[ci];
			}
		nb[oi] = (float)acc;
	}
	const char *base = n->name && *n->name ? n->name : "conv";
	ValId wv = graph_add_f32(g, arena_printf(g->arena, "%s/W_preproc",
						 base),
				 nw, 4, w->shape.dims);
	ValId bv = graph_add_f32(g, arena_printf(g->arena, "%s/B_preproc",
						 base),
				 nb, 1, &o);
	n = &g->nodes[i];
	if (n->ninputs < 3) {
		ValId *in = arena_array(g->arena, 3, sizeof(ValId));
		in[0] = n->inputs[0];
		in[1] = n->inputs[1];
		n->inputs = in;
		n->ninputs = 3;
	}
	n->inputs[1] = wv;
	if (offset || b)
		n->inputs[2] = bv;
	else
		n->inputs[2] = -1;
	free(nw);
	free(nb);
}

/* ---- the spec against the model ----------------------------------------- */

static ValId find_input(const Graph *g, const PreSpec *s)
{
	if (s->input) {
		for (int32_t i = 0; i < g->ninputs; i++)
			if (!strcmp(g->vals[g->inputs[i]].name, s->input))
				return g->inputs[i];
		return error("%s: '%s' is not an input of the model", s->what,
			     s->input);
	}
	if (s->rank >= g->ninputs)
		return error("%s: related_input_rank %d, but the model has %d "
			     "input%s", s->what, s->rank, g->ninputs,
			     g->ninputs == 1 ? "" : "s");
	return g->inputs[s->rank];
}

/* The frame's dims in its own layout: AIPP's [N, src_h, src_w, C_in]. */
static int frame_shape(const PreSpec *s, const Value *v, Frame *f,
		       int64_t *dims)
{
	const char *name = v->name;
	int64_t h = f->model[2], w = f->model[3];
	if (s->format == PF_NONE) {
		for (int32_t d = 0; d < f->rank; d++)
			dims[d] = f->model[f->perm[d]];
		return 0;
	}
	if ((s->crop || s->pad) && (h < 0 || w < 0))
		return error("%s: input '%s' has gear dims at H or W; crop and "
			     "padding need its size fixed (atc's rule too)",
			     s->what, name);
	if (s->format == PF_YUV420SP && (h < 0 || w < 0))
		return error("%s: input '%s' has gear dims at H or W; "
			     "YUV420SP_U8 needs its size fixed (the frame is "
			     "[N, H*3/2, W])", s->what, name);
	int64_t in_h = h - s->pad_t - s->pad_b, in_w = w - s->pad_l - s->pad_r;
	if (h >= 0 && (in_h <= 0 || in_w <= 0))
		return error("%s: padding %lld+%lld x %lld+%lld leaves no image "
			     "in input '%s' [%lldx%lld]", s->what,
			     (long long)s->pad_t, (long long)s->pad_b,
			     (long long)s->pad_l, (long long)s->pad_r, name,
			     (long long)h, (long long)w);
	if (s->crop && (s->crop_h != in_h || s->crop_w != in_w))
		return error("%s: crop_size %lldx%lld (h x w), but input '%s' "
			     "takes %lldx%lld after padding", s->what,
			     (long long)s->crop_h, (long long)s->crop_w, name,
			     (long long)in_h, (long long)in_w);
	int64_t sh = s->src_h ? s->src_h : s->crop ? 0 : in_h;
	int64_t sw = s->src_w ? s->src_w : s->crop ? 0 : in_w;
	if (s->crop && (!sh || !sw))
		return error("%s: crop needs src_image_size_w and "
			     "src_image_size_h", s->what);
	if (!s->crop && h >= 0 && (sh != in_h || sw != in_w))
		return error("%s: src_image_size %lldx%lld (h x w), but input "
			     "'%s' takes %lldx%lld; crop or pad to fit",
			     s->what, (long long)sh, (long long)sw, name,
			     (long long)in_h, (long long)in_w);
	if (s->crop && (s->crop_y + s->crop_h > sh || s->crop_x + s->crop_w > sw))
		return error("%s: the crop (%lld,%lld)+%lldx%lld does not fit "
			     "the %lldx%lld source image", s->what,
			     (long long)s->crop_y, (long long)s->crop_x,
			     (long long)s->crop_h, (long long)s->crop_w,
			     (long long)sh, (long long)sw);
	if (s->format == PF_YUV420SP) {
		if (sh % 2 || sw % 2)
			return error("%s: YUV420SP_U8 takes an even image size, "
				     "but input '%s' takes %lldx%lld (h x w)",
				     s->what, name, (long long)sh,
				     (long long)sw);
		dims[0] = f->model[0];
		dims[1] = sh / 2 * 3;
		dims[2] = sw;
		f->frank = 3;
		return 0;
	}
	dims[0] = f->model[0];
	dims[1] = h < 0 ? h : sh;
	dims[2] = w < 0 ? w : sw;
	dims[3] = f->c_in;
	return 0;
}

/* The frame's layout and channels against the model's input. */
static int frame_of(const PreSpec *s, const Value *v, Frame *f)
{
	const char *name = v->name;
	memset(f, 0, sizeof(*f));
	f->rank = f->frank = v->shape.rank;
	if (v->tkind != TK_TENSOR || v->dtype != DT_FLOAT)
		return error("%s: input '%s' is %s; preprocessing feeds a "
			     "float32 input", s->what, name,
			     dtype_name(v->dtype) ? dtype_name(v->dtype)
						  : "of unknown dtype");
	if (f->rank < 0)
		return error("%s: input '%s' has no known rank; give its shape "
			     "with --input_shape", s->what, name);
	for (int32_t d = 0; d < f->rank; d++) {
		f->model[d] = v->shape.dims[d];
		f->perm[d] = d;
	}
	bool image = s->format != PF_NONE || s->nhwc;
	if (image && f->rank != 4)
		return error("%s: input '%s' has rank %d; an image input is "
			     "NCHW, rank 4", s->what, name, f->rank);
	f->c_axis = f->rank >= 2 ? 1 : 0;
	f->c = f->rank ? f->model[f->c_axis] : 1;
	if ((image || s->nscale > 1 || s->swap || s->reverse) && f->c < 0)
		return error("%s: input '%s' has no fixed channel count (dim %d "
			     "is -1)", s->what, name, f->c_axis);
	if (s->format == PF_NONE && s->nscale > 1 && s->nscale != f->c)
		return error("%s: %d values for input '%s', which has %lld "
			     "channels", s->what, s->nscale, name,
			     (long long)f->c);
	int64_t want = s->format == PF_YUV400 ? 1 : 3;
	if (s->format != PF_NONE && f->c != want)
		return error("%s: input '%s' has %lld channels, but the %s "
			     "format gives %lld", s->what, name,
			     (long long)f->c,
			     s->format == PF_YUV400	    ? "YUV400_U8"
			     : s->format == PF_YUV420SP ? "YUV420SP_U8"
							: "RGB",
			     (long long)want);
	f->c_in = s->format == PF_XRGB8888 || s->format == PF_RGBX8888 ? 4
		  : s->format == PF_YUV400				 ? 1
									 : f->c;
	if (s->nhwc && s->format != PF_YUV420SP) {
		/* frame dim d is model dim perm[d] */
		static const int64_t nhwc[4] = { 0, 2, 3, 1 };
		memcpy(f->perm, nhwc, sizeof(nhwc));
		f->transposed = true;
	}
	return 0;
}

/* The gear spec follows the input's new layout: same gear values, dims
 * and gear axes permuted. */
static void move_gear_input(Model *m, ValId in, const Frame *f,
			    const int64_t *dims)
{
	for (int32_t k = 0; m->gears && k < m->gears->ninputs; k++) {
		GearInput *gi = &m->gears->inputs[k];
		if (gi->val != in)
			continue;
		gi->shape = shape_of(f->frank, dims);
		gi->ndyn = 0;
		for (int32_t d = 0; d < f->frank; d++)
			if (dims[d] == -1)
				gi->dyn_axes[gi->ndyn++] = d;
	}
}

static char *fold_note(const PreSpec *s, const Value *v, const Fold *fo,
		       const Graph *g, bool partial)
{
	char *note = xmalloc(512);
	if (partial)
		snprintf(note, 512, "%s: input '%s': Conv '%s' pads its input, "
			 "so only the scale folds into its weights; the "
			 "offset stays an Add before it", s->what, v->name,
			 g->nodes[fo->conv[0]].name);
	else
		snprintf(note, 512, "%s: input '%s': the preprocessing does not "
			 "fold into a Conv (%s); it runs as separate nodes",
			 s->what, v->name, fo->why);
	return note;
}

static int apply_one(Model *m, const PreSpec *s, char **note)
{
	Graph *g = m->graph;
	ValId in = find_input(g, s);
	Frame f;
	int64_t dims[MAX_RANK];
	if (in < 0 || frame_of(s, &g->vals[in], &f) < 0 ||
	    frame_shape(s, &g->vals[in], &f, dims) < 0)
		return -1;
	Value *v = &g->vals[in];
	Build b = { g, model_opset(m), v->name, in, 0 };
	int32_t n0 = g->nnodes;
	int64_t perm[4];
	bool swapped = swap_order(s, f.c, perm);
	float scale[4], offset[4];
	bool any_scale = false, any_offset = false;
	for (int64_t c = 0; c < f.c && c < 4; c++) {
		int32_t k = s->nscale > 1 ? (int32_t)c : 0;
		scale[c] = s->nscale ? (float)s->scale[k] : 1;
		offset[c] = s->nscale ? (float)s->offset[k] : 0;
		any_scale |= scale[c] != 1;
		any_offset |= offset[c] != 0;
	}
	if (f.c > 4 && s->nscale > 0)
		return error("%s: input '%s' has %lld channels; at most 4 take "
			     "mean and scale", s->what, v->name,
			     (long long)f.c);
	Fold fo;
	can_fold(g, in, n0, f.c, &fo);
	/* with a colour conversion the swap comes before it: a Gather */
	bool fold = !fo.why && !s->pad && f.c <= 4 &&
		    (any_scale || any_offset || (swapped && !s->csc));
	int64_t fperm[4] = { 0, 1, 2, 3 };
	if (swapped && !s->csc)
		memcpy(fperm, perm, sizeof(perm));
	bool partial = fold && fo.padded && any_offset;
	for (int64_t c = 0; partial && c < f.c; c++)
		if (scale[c] == 0)
			fold = partial = false;
	if (!fold && (any_scale || any_offset || swapped)) {
		if (!fo.why)
			fo.why = "padding comes after it";
		*note = fold_note(s, v, &fo, g, false);
	} else if (partial) {
		*note = fold_note(s, v, &fo, g, true);
	}
	/* the frame: uint8 NHWC for AIPP (YUV420SP: its own), or the
	 * source type and layout */
	if (s->format == PF_YUV420SP) {
		yuv420sp(&b, s);
	} else {
		crop_and_select(&b, s);
		if (s->csc) {
			cast(&b, DT_FLOAT);
			if (swapped)
				gather(&b, perm, f.c, 3);
			csc(&b, s);
		}
		if (f.transposed)
			transpose(&b, (const int64_t[]){ 0, 3, 1, 2 }, 4);
		if (!s->csc && s->src_type != DT_FLOAT)
			cast(&b, DT_FLOAT);
	}
	if (!fold && swapped && !s->csc)
		gather(&b, perm, f.c, f.c_axis);
	if (fold) {
		float t[4];
		for (int64_t c = 0; c < f.c; c++)
			t[c] = offset[c] / scale[c];
		if (partial)
			binary(&b, "Add", "offset",
			       chan_tensor(&b, &f, "offset", t));
		for (int32_t i = 0; i < fo.nconv; i++)
			fold_conv(g, fo.conv[i], fperm, scale,
				  partial ? NULL : offset);
	} else {
		if (any_scale)
			binary(&b, "Mul", "scale",
			       chan_tensor(&b, &f, "scale", scale));
		if (any_offset)
			binary(&b, "Add", "offset",
			       chan_tensor(&b, &f, "offset", offset));
	}
	if (s->pad)
		pad(&b, s, &f);
	if (b.cur == in) /* nothing to do: the model reads its input */
		return 0;
	ValId out = b.cur;
	graph_replace_uses(g, in, out, n0);
	v = &g->vals[in];
	value_copy_type(&g->vals[out], v);
	v->dtype = s->src_type;
	v->shape = shape_of(f.frank, dims);
	v->dim_params = NULL;
	move_gear_input(m, in, &f, dims);
	return 0;
}

/* OpenVINO's flags may name one input by name in one flag and as "the
 * first input" in another: one spec. */
static int merge(PreSpec *dst, const PreSpec *src, const char *input)
{
	if (dst->format != PF_NONE || src->format != PF_NONE ||
	    (dst->nscale && src->nscale))
		return error("%s: input '%s' is preprocessed twice (two entries "
			     "name it)", src->what, input);
	dst->nhwc |= src->nhwc;
	dst->reverse |= src->reverse;
	if (src->src_type != DT_FLOAT)
		dst->src_type = src->src_type;
	if (src->nscale) {
		dst->nscale = src->nscale;
		memcpy(dst->scale, src->scale, sizeof(dst->scale));
		memcpy(dst->offset, src->offset, sizeof(dst->offset));
	}
	return 0;
}

int preproc_apply(Model *m, const ParsedPre *p, char **note)
{
	*note = NULL;
	if (!p->n)
		return 0;
	ValId *ids = xcalloc((size_t)p->n, sizeof(ValId));
	PreSpec *sp = xcalloc((size_t)p->n, sizeof(PreSpec));
	bool *merged = xcalloc((size_t)p->n, sizeof(bool));
	int rc = 0;
	memcpy(sp, p->e, (size_t)p->n * sizeof(PreSpec));
	for (int32_t i = 0; rc == 0 && i < p->n; i++) {
		if ((ids[i] = find_input(m->graph, &sp[i])) < 0)
			rc = -1;
		for (int32_t k = 0; rc == 0 && k < i && !merged[i]; k++)
			if (!merged[k] && ids[k] == ids[i]) {
				rc = merge(&sp[k], &sp[i],
					   m->graph->vals[ids[i]].name);
				merged[i] = true;
			}
	}
	for (int32_t i = 0; rc == 0 && i < p->n; i++) {
		char *one = NULL;
		if (!merged[i])
			rc = apply_one(m, &sp[i], &one);
		if (one && !*note)
			*note = one;
		else
			free(one);
	}
	free(ids);
	free(sp);
	free(merged);
	if (rc == 0 && graph_toposort(m->graph) < 0)
		rc = -1;
	for (int i = 0; rc == 0 && i < 8; i++)
		if (p->given[i][0])
			model_add_option(m, p->given[i][0], p->given[i][1]);
	return rc;
}
