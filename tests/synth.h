/*
 * tests/synth.h - synthetic models built in memory, shaped like the models
 * gearc is for: a ResNet-style classifier (batch gears), a multi-scale
 * detector (image-size gears), a CRNN text recognizer (width gears), a
 * 1-D convolutional voice-activity detector (time gears), and two harder
 * cases for the planner: a DenseNet (many long, overlapping lifetimes) and
 * a transformer encoder (sequence-length gears).  The memory
 * plan tests and `make bench` use them; weights are zeros.
 *
 *	Model *m = synth_resnet(106);        // about 750 nodes
 *	... gear_apply(m, &parsed) ... run_passes(m, &opts) ...
 *
 * Every input has -1 where the gears go; the SYNTH_* strings give the
 * matching --input_shape.
 */
#ifndef GEARC_SYNTH_H
#define GEARC_SYNTH_H

#include "cli/cli.h"
#include "compiler/onnx.h"
#include "testutil.h"

typedef struct Synth {
	Model *m;
	Graph *g;
	int n; /* names made so far */
} Synth;

static inline const char *sy_name(Synth *s, const char *what)
{
	return arena_printf(&s->m->arena, "%s%d", what, s->n++);
}

static inline ValId sy_zeros(Synth *s, const char *what, Shape sh)
{
	return tu_weight(s->g, sy_name(s, what), DT_FLOAT, sh);
}

/* Conv of x (cin channels, spatial rank sr) to cout channels, square
 * kernel k, stride st, "same" padding. */
static inline ValId sy_conv(Synth *s, ValId x, int64_t cin, int64_t cout,
			    int64_t k, int64_t st, int sr)
{
	int64_t wd[MAX_RANK] = { cout, cin, k, k, k }, ks[3] = { k, k, k };
	int64_t strides[3] = { st, st, st }, pads[6];
	for (int i = 0; i < 2 * sr; i++)
		pads[i] = k / 2;
	ValId w = sy_zeros(s, "w", shape_of(2 + sr, wd));
	ValId b = sy_zeros(s, "b", SHAPE(cout));
	Node *n = tu_node(s->g, "Conv", sy_name(s, "conv"), IDS(x, w, b), 1);
	tu_ints(s->g, n, "kernel_shape", ks, sr);
	tu_ints(s->g, n, "strides", strides, sr);
	tu_ints(s->g, n, "pads", pads, 2 * sr);
	return tu_out(n, 0);
}

static inline ValId sy_unary(Synth *s, const char *op, ValId x)
{
	return tu_out(tu_node(s->g, op, sy_name(s, op), IDS(x), 1), 0);
}

static inline ValId sy_binary(Synth *s, const char *op, ValId a, ValId b)
{
	return tu_out(tu_node(s->g, op, sy_name(s, op), IDS(a, b), 1), 0);
}

static inline ValId sy_bn(Synth *s, ValId x, int64_t c)
{
	ValId p[4];
	for (int i = 0; i < 4; i++)
		p[i] = sy_zeros(s, "bn", SHAPE(c));
	return tu_out(tu_node(s->g, "BatchNormalization", sy_name(s, "bn"),
			      IDS(x, p[0], p[1], p[2], p[3]), 1),
		      0);
}

static inline ValId sy_maxpool(Synth *s, ValId x, int64_t kh, int64_t kw)
{
	Node *n = tu_node(s->g, "MaxPool", sy_name(s, "pool"), IDS(x), 1);
	tu_ints(s->g, n, "kernel_shape", INTS(kh, kw));
	tu_ints(s->g, n, "strides", INTS(kh, kw));
	return tu_out(n, 0);
}

static inline ValId sy_reshape(Synth *s, ValId x, const int64_t *dims,
			       int32_t n)
{
	ValId t = tu_weight_ints(s->g, sy_name(s, "shape"), dims, n);
	return sy_binary(s, "Reshape", x, t);
}

static inline ValId sy_transpose(Synth *s, ValId x, const int64_t *perm,
				 int32_t n)
{
	Node *nd = tu_node(s->g, "Transpose", sy_name(s, "tr"), IDS(x), 1);
	tu_ints(s->g, nd, "perm", perm, n);
	return tu_out(nd, 0);
}

static inline ValId sy_matmul_add(Synth *s, ValId x, int64_t cin,
				  int64_t cout)
{
	ValId w = sy_zeros(s, "fc", SHAPE(cin, cout));
	ValId b = sy_zeros(s, "fcb", SHAPE(cout));
	return sy_binary(s, "Add", sy_binary(s, "MatMul", x, w), b);
}

static inline Synth sy_begin(const char *name)
{
	Synth s = { .m = tu_model(13) };
	s.g = s.m->graph;
	s.g->name = arena_strdup(&s.m->arena, name);
	s.m->path = s.g->name;
	return s;
}

static inline Model *sy_end(Synth *s, ValId out)
{
	s->g->outputs = arena_alloc(&s->m->arena, sizeof(ValId));
	s->g->outputs[0] = out;
	s->g->noutputs = 1;
	s->g->vals[out].flags |= VF_GRAPH_OUT;
	if (graph_toposort(s->g) < 0)
		return NULL;
	return s->m;
}

/* Conv-BN-Relu-Conv-BN (+ shortcut, projected when the shape changes)
 * -Add-Relu. */
static inline ValId sy_basic_block(Synth *s, ValId x, int64_t cin,
				   int64_t cout, int64_t st)
{
	ValId y = sy_unary(s, "Relu", sy_bn(s, sy_conv(s, x, cin, cout, 3, st, 2),
					    cout));
	y = sy_bn(s, sy_conv(s, y, cout, cout, 3, 1, 2), cout);
	ValId sc = x;
	if (st != 1 || cin != cout)
		sc = sy_bn(s, sy_conv(s, x, cin, cout, 1, st, 2), cout);
	return sy_unary(s, "Relu", sy_binary(s, "Add", y, sc));
}

#define SYNTH_RESNET_SHAPE "x:-1,3,32,32"

/* ResNet-style: stem, 4 stages of `blocks` blocks in all (7 nodes each, 9
 * where a stage starts), head GlobalAveragePool-Flatten-Gemm-Softmax. */
static inline Model *synth_resnet(int blocks)
{
	Synth s = sy_begin("resnet");
	ValId x = tu_input(s.g, "x", DT_FLOAT, SHAPE(-1, 3, 32, 32));
	ValId y = sy_unary(&s, "Relu", sy_bn(&s, sy_conv(&s, x, 3, 16, 3, 1, 2),
					     16));
	int64_t c = 16;
	for (int i = 0; i < blocks; i++) {
		int stage = 4 * i / blocks;
		int64_t cout = 16 << stage;
		bool starts = i > 0 && 4 * (i - 1) / blocks != stage;
		y = sy_basic_block(&s, y, c, cout, starts ? 2 : 1);
		c = cout;
	}
	y = sy_unary(&s, "GlobalAveragePool", y);
	Node *f = tu_node(s.g, "Flatten", sy_name(&s, "flat"), IDS(y), 1);
	y = tu_out(f, 0);
	ValId w = sy_zeros(&s, "gemm", SHAPE(10, c)), b = sy_zeros(&s, "gb", SHAPE(10));
	Node *gm = tu_node(s.g, "Gemm", sy_name(&s, "gemm"), IDS(y, w, b), 1);
	tu_int(s.g, gm, "transB", 1);
	y = sy_unary(&s, "Softmax", tu_out(gm, 0));
	return sy_end(&s, y);
}

#define SYNTH_DETECTOR_SHAPE "img:1,3,-1,-1"

/* Multi-scale detector: a strided backbone, heads on the last three
 * stages (Conv-Relu-Conv to 6 channels, Reshape [1,6,-1], Transpose),
 * concatenated into [1, boxes, 6] and squashed by Sigmoid. */
static inline Model *synth_detector(void)
{
	Synth s = sy_begin("detector");
	ValId x = tu_input(s.g, "img", DT_FLOAT, SHAPE(1, 3, -1, -1));
	ValId y = sy_unary(&s, "Relu", sy_conv(&s, x, 3, 16, 3, 2, 2));
	ValId heads[3];
	int64_t c = 16;
	for (int st = 0; st < 5; st++) {
		int64_t cout = c * 2 > 128 ? 128 : c * 2;
		y = sy_basic_block(&s, y, c, cout, 2);
		y = sy_basic_block(&s, y, cout, cout, 1);
		c = cout;
		if (st >= 2) {
			ValId h = sy_unary(&s, "Relu",
					   sy_conv(&s, y, c, 64, 3, 1, 2));
			h = sy_conv(&s, h, 64, 6, 1, 1, 2);
			h = sy_reshape(&s, h, INTS(1, 6, -1));
			heads[st - 2] = sy_transpose(&s, h, INTS(0, 2, 1));
		}
	}
	Node *cat = tu_node(s.g, "Concat", sy_name(&s, "cat"),
			    IDS(heads[0], heads[1], heads[2]), 1);
	tu_int(s.g, cat, "axis", 1);
	return sy_end(&s, sy_unary(&s, "Sigmoid", tu_out(cat, 0)));
}

#define SYNTH_RECOGNIZER_SHAPE "x:1,3,32,-1"

/* CRNN-style text recognizer: Conv-BN-Relu-MaxPool stages taking the
 * height from 32 to 1, Reshape [1,C,-1], Transpose to [1,W,C], two
 * MatMul+Add layers, Softmax over the classes. */
static inline Model *synth_recognizer(void)
{
	Synth s = sy_begin("recognizer");
	ValId y = tu_input(s.g, "x", DT_FLOAT, SHAPE(1, 3, 32, -1));
	int64_t c = 3;
	for (int st = 0; st < 5; st++) {
		int64_t cout = 32 << (st < 3 ? st : 3);
		y = sy_unary(&s, "Relu",
			     sy_bn(&s, sy_conv(&s, y, c, cout, 3, 1, 2), cout));
		y = sy_unary(&s, "Relu",
			     sy_bn(&s, sy_conv(&s, y, cout, cout, 3, 1, 2), cout));
		y = sy_maxpool(&s, y, 2, st < 2 ? 2 : 1);
		c = cout;
	}
	y = sy_reshape(&s, y, INTS(1, 256, -1));
	y = sy_transpose(&s, y, INTS(0, 2, 1));
	y = sy_unary(&s, "Relu", sy_matmul_add(&s, y, 256, 128));
	y = sy_matmul_add(&s, y, 128, 97);
	Node *sm = tu_node(s.g, "Softmax", sy_name(&s, "sm"), IDS(y), 1);
	tu_int(s.g, sm, "axis", 2);
	return sy_end(&s, tu_out(sm, 0));
}

#define SYNTH_VAD_SHAPE "feats:1,40,-1"

/* Voice-activity detector: 1-D Conv-Relu layers over [1,40,T] features
 * with a residual Add, Transpose to [1,T,C], MatMul+Add, Sigmoid. */
static inline Model *synth_vad(void)
{
	Synth s = sy_begin("vad");
	ValId y = tu_input(s.g, "feats", DT_FLOAT, SHAPE(1, 40, -1));
	y = sy_unary(&s, "Relu", sy_conv(&s, y, 40, 64, 5, 1, 1));
	for (int i = 0; i < 6; i++) {
		ValId h = sy_unary(&s, "Relu", sy_conv(&s, y, 64, 64, 3, 1, 1));
		h = sy_conv(&s, h, 64, 64, 3, 1, 1);
		y = sy_unary(&s, "Relu", sy_binary(&s, "Add", h, y));
	}
	y = sy_transpose(&s, y, INTS(0, 2, 1));
	y = sy_unary(&s, "Tanh", sy_matmul_add(&s, y, 64, 32));
	y = sy_matmul_add(&s, y, 32, 1);
	return sy_end(&s, sy_unary(&s, "Sigmoid", y));
}

#define SYNTH_DENSENET_SHAPE "x:-1,3,32,32"

/* DenseNet-style: blocks whose layers each read the Concat of every
 * earlier feature map of the block (long, overlapping lifetimes of many
 * sizes), with Conv-MaxPool transitions. */
static inline Model *synth_densenet(void)
{
	Synth s = sy_begin("densenet");
	ValId x = tu_input(s.g, "x", DT_FLOAT, SHAPE(-1, 3, 32, 32));
	ValId y = sy_unary(&s, "Relu", sy_conv(&s, x, 3, 24, 3, 1, 2));
	int64_t c = 24;
	for (int blk = 0; blk < 3; blk++) {
		ValId feats[8] = { y };
		int64_t have = c;
		for (int l = 1; l < 7; l++) {
			Node *cat = tu_node(s.g, "Concat", sy_name(&s, "cat"),
					    feats, l, 1);
			tu_int(s.g, cat, "axis", 1);
			ValId h = sy_unary(&s, "Relu", sy_bn(&s, tu_out(cat, 0),
							     have));
			h = sy_unary(&s, "Relu", sy_conv(&s, h, have, 48, 1, 1, 2));
			feats[l] = sy_conv(&s, h, 48, 12, 3, 1, 2);
			have += 12;
		}
		Node *cat = tu_node(s.g, "Concat", sy_name(&s, "cat"), feats, 7,
				    1);
		tu_int(s.g, cat, "axis", 1);
		c = have / 2;
		y = sy_conv(&s, tu_out(cat, 0), have, c, 1, 1, 2);
		if (blk < 2)
			y = sy_maxpool(&s, y, 2, 2);
	}
	y = sy_unary(&s, "GlobalAveragePool", y);
	y = tu_out(tu_node(s.g, "Flatten", sy_name(&s, "flat"), IDS(y), 1), 0);
	return sy_end(&s, sy_unary(&s, "Softmax", y));
}

#define SYNTH_TRANSFORMER_SHAPE "tokens:1,-1,64"

/* Transformer encoder layers over [1,T,64] embeddings: Q, K, V
 * projections, heads split by Reshape and Transpose, Softmax(QK^T)V,
 * heads merged, output projection and residual Add, then a MatMul-Relu-
 * MatMul feed-forward block with its residual Add. */
static inline Model *synth_transformer(void)
{
	Synth s = sy_begin("transformer");
	ValId x = tu_input(s.g, "tokens", DT_FLOAT, SHAPE(1, -1, 64));
	for (int layer = 0; layer < 4; layer++) {
		ValId qkv[3];
		for (int k = 0; k < 3; k++) {
			ValId p = sy_matmul_add(&s, x, 64, 64);
			p = sy_reshape(&s, p, INTS(1, -1, 4, 16));
			if (k == 1) /* K transposed for QK^T */
				qkv[k] = sy_transpose(&s, p, INTS(0, 2, 3, 1));
			else
				qkv[k] = sy_transpose(&s, p, INTS(0, 2, 1, 3));
		}
		ValId a = sy_binary(&s, "MatMul", qkv[0], qkv[1]);
		ValId scale = sy_zeros(&s, "scale", SHAPE(1));
		a = sy_binary(&s, "Mul", a, scale);
		Node *sm = tu_node(s.g, "Softmax", sy_name(&s, "sm"), IDS(a), 1);
		tu_int(s.g, sm, "axis", -1);
		a = sy_binary(&s, "MatMul", tu_out(sm, 0), qkv[2]);
		a = sy_transpose(&s, a, INTS(0, 2, 1, 3));
		a = sy_reshape(&s, a, INTS(1, -1, 64));
		a = sy_matmul_add(&s, a, 64, 64);
		x = sy_binary(&s, "Add", x, a);
		ValId f = sy_unary(&s, "Relu", sy_matmul_add(&s, x, 64, 256));
		f = sy_matmul_add(&s, f, 256, 64);
		x = sy_binary(&s, "Add", x, f);
	}
	return sy_end(&s, sy_unary(&s, "Tanh", x));
}

/* The scale cases (tests/test_scale.c): n Relu nodes of one [1,16]
 * input feeding one Sum, so all n outputs are live at once; and a chain
 * of n Relu nodes, each in place of the one before. */
static inline Model *synth_wide(int32_t n)
{
	Synth s = sy_begin("wide");
	ValId x = tu_input(s.g, "x", DT_FLOAT, SHAPE(1, 16));
	ValId *r = xmalloc((size_t)n * sizeof(ValId));
	for (int32_t i = 0; i < n; i++)
		r[i] = sy_unary(&s, "Relu", x);
	ValId y = tu_out(tu_node(s.g, "Sum", "sum", r, n, 1), 0);
	free(r);
	return sy_end(&s, y);
}

static inline Model *synth_chain(int32_t n)
{
	Synth s = sy_begin("chain");
	ValId x = tu_input(s.g, "x", DT_FLOAT, SHAPE(1, 16));
	for (int32_t i = 0; i < n; i++)
		x = sy_unary(&s, "Relu", x);
	return sy_end(&s, x);
}

/* Applies the gear options (NULL input_shape: none) and runs every pass;
 * NULL with the error set on failure. */
static inline Model *synth_compile(Model *m, const char *input_shape,
				   const char *batch, const char *image,
				   const char *dims, int jobs)
{
	GearOptions go = { .input_shape = input_shape,
			   .dynamic_batch_size = batch,
			   .dynamic_image_size = image,
			   .dynamic_dims = dims };
	PassOptions o = { .jobs = jobs,
			  .fold_limit = 64 * 1024 };
	ParsedGears pg;
	int rc = gear_parse(&pg, &go);
	if (!rc)
		rc = gear_apply(m, &pg);
	if (!rc)
		rc = run_passes(m, &o);
	gear_parsed_release(&pg);
	if (rc < 0) {
		model_free(m);
		return NULL;
	}
	return m;
}

static inline bool synth_integral(int dt)
{
	return dt == DT_BOOL || (dt >= DT_UINT8 && dt <= DT_INT64) ||
	       dt == DT_UINT32 || dt == DT_UINT64;
}

/* Compiles an ONNX backend test (DIR/model.onnx) statically at the shapes
 * of DIR/test_data_set_0, integer inputs as constants, as make
 * conformance does; NULL if gearc cannot compile it yet. */
static inline Model *backend_compile(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	Model *m = onnx_load(path);
	if (!m)
		return NULL;
	Graph *g = m->graph;
	int32_t kept = 0;
	for (int32_t k = 0; k < g->ninputs; k++) {
		snprintf(path, sizeof(path), "%s/test_data_set_0/input_%d.pb",
			 dir, k);
		const Tensor *t = onnx_load_tensor(m, path);
		Value *v = &g->vals[g->inputs[k]];
		if (!t) {
			model_free(m);
			return NULL;
		}
		v->dtype = t->dtype;
		v->shape = t->shape;
		v->dim_params = NULL;
		if (synth_integral(t->dtype)) {
			v->kind = VAL_WEIGHT;
			v->konst = t;
		} else {
			g->inputs[kept++] = g->inputs[k];
		}
	}
	g->ninputs = kept;
	PassOptions o = { .jobs = 1, .fold_limit = 64 * 1024 };
	if (run_passes(m, &o) < 0) {
		model_free(m);
		return NULL;
	}
	return m;
}

#endif
