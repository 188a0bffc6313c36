/*
 * tests/test_intew.c - the Cast (runtime/convert.c) and integer and
 * float16 elementwise (runtime/intew.c) fast paths against the reference
 * kernels (GEARRT_NO_FAST=1), on the one-op models of
 * tests/fixtures/intew (tests/gen_intew_models.py): every Cast between
 * float32, float16, double, int8, uint8, int32, int64 and bool, and the
 * binary ops (same shape, a last-axis vector, a scalar first), unary ops,
 * Clip and Where on int8, uint8, int32, int64 and float16.  Inputs come
 * tame (finite, small, no zero), wild (extremes, zero, -1, NaN,
 * infinities, every float16 bit pattern at random) and wild with no
 * integer zero (Div computes, MIN / -1 among it): the fast path must
 * then fail where the reference fails (an integer division by zero, a
 * float Cast to an integer out of its range), else give the same bytes
 * (any NaN matching any NaN).
 */
#include <dirent.h>
#include <math.h>

#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"

enum { MAX_IN = 4, MAX_OUT = 3 };

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

/* Inputs: tame, wild, or wild with every integer 0 made -1 (so that
 * Div computes, MIN / -1 among it). */
enum { TAME, WILD, NONZERO, NKINDS };

/* Element i of an input of dtype dt of that kind at p. */
static void fill_one(int dt, void *p, size_t i, int kind, uint32_t *s)
{
	bool wild = kind != TAME;
	static const double fw[] = { 0.0, -0.0, 1.5, -1.5, 2.5, 127.9, 128,
				     -128.9, -129, 255.5, 256, NAN, INFINITY,
				     -INFINITY, 1e10, 65504, 65520, 3e-8,
				     -2147483648.0, 2147483520.0 };
	static const int64_t iw[] = { 0, -1, 1, INT64_MIN, INT64_MAX,
				      INT32_MIN, INT32_MAX, -128, 127, 255 };
	uint32_t r = lcg(s);
	double f = wild && r % 3 == 0 ? fw[r % 20]
				      : (double)(int)(r % 20001 - 10000) / 97;
	uint64_t bits = (uint64_t)lcg(s) << 40 ^ (uint64_t)lcg(s) << 16 ^ r;
	int64_t v = wild ? (r % 3 == 0 ? iw[r % 10] : (int64_t)bits)
			 : 1 + (int64_t)(r % 100);
	if (!wild && (r & 1))
		v = -v;
	if (kind == NONZERO && i % 5 == 2) /* MIN / -1 now and then */
		v = r & 1 ? -1
		    : dt == GEARRT_INT8 ? INT8_MIN
		    : dt == GEARRT_INT32 ? INT32_MIN : INT64_MIN;
	if (kind == NONZERO && (!v || (dt == GEARRT_UINT8 && !(uint8_t)v) ||
				(dt == GEARRT_INT8 && !(int8_t)v) ||
				(dt == GEARRT_INT32 && !(int32_t)v)))
		v = -1;
	switch (dt) {
	case GEARRT_FLOAT32: ((float *)p)[i] = (float)f; break;
	case GEARRT_FLOAT64: ((double *)p)[i] = f; break;
	case GEARRT_FLOAT16:
		((uint16_t *)p)[i] = wild && r % 2 ? (uint16_t)lcg(s)
				     : minifloat_from(f, 5, 10);
		break;
	case GEARRT_BOOL: ((uint8_t *)p)[i] = r & 1; break;
	case GEARRT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case GEARRT_UINT8: ((uint8_t *)p)[i] = (uint8_t)(wild ? v : r % 100 + 1);
		break;
	case GEARRT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case GEARRT_INT64: ((int64_t *)p)[i] = v; break;
	default: cr_assert_fail("dtype %d", dt);
	}
}

static size_t elem_size(int dt)
{
	switch (dt) {
	case GEARRT_FLOAT64: case GEARRT_INT64: return 8;
	case GEARRT_FLOAT32: case GEARRT_INT32: return 4;
	case GEARRT_FLOAT16: return 2;
	default: return 1;
	}
}

typedef struct Result {
	gearrt_status st;
	size_t n;
	gearrt_tensor out[MAX_OUT];
	void *data[MAX_OUT];
	int tasks, fast;
} Result;

static Result run(const char *om, bool no_fast, int kind)
{
	Result res = { 0 };
	gearrt_model *m;
	gearrt_session *s;
	setenv("GEARRT_NO_FAST", no_fast ? "1" : "0", 1);
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
	size_t nin = gearrt_input_count(m);
	gearrt_tensor in[MAX_IN];
	uint32_t seed = 28;
	cr_assert(nin <= MAX_IN);
	for (size_t i = 0; i < nin; i++) {
		cr_assert_eq(gearrt_input_info(m, i, &in[i]), GEARRT_OK);
		size_t cnt = 1;
		for (int32_t d = 0; d < in[i].rank; d++)
			cnt *= (size_t)in[i].dims[d];
		in[i].size = cnt * elem_size(in[i].dtype);
		in[i].data = malloc(in[i].size + 1);
		for (size_t e = 0; e < cnt; e++)
			fill_one(in[i].dtype, in[i].data, e, kind, &seed);
	}
	res.n = gearrt_output_count(m);
	cr_assert(res.n <= MAX_OUT);
	res.st = gearrt_run(s, in, nin, res.out, res.n);
	for (size_t k = 0; res.st == GEARRT_OK && k < res.n; k++) {
		res.data[k] = malloc(res.out[k].size + 1);
		memcpy(res.data[k], res.out[k].data, res.out[k].size);
	}
	const Prepared *p = rt_session_ctx(s)->prep[0];
	for (int32_t i = 0; p && i < p->ntasks; i++) {
		if (p->tasks[i].n->op == OP_Identity)
			continue; /* a copy to a graph output */
		res.tasks++;
		res.fast += p->tasks[i].fast.run != NULL;
	}
	for (size_t i = 0; i < nin; i++)
		free(in[i].data);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return res;
}

static bool is_nan(int dt, const uint8_t *p)
{
	uint16_t h;
	float f;
	double d;
	switch (dt) {
	case GEARRT_FLOAT16:
		memcpy(&h, p, 2);
		return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
	case GEARRT_FLOAT32: memcpy(&f, p, 4); return f != f;
	case GEARRT_FLOAT64: memcpy(&d, p, 8); return d != d;
	default: return false;
	}
}

static const char *const kinds[NKINDS] = { "tame", "wild", "nonzero" };

static void compare(const char *name, const Result *ref, const Result *fast,
		    int kind)
{
	cr_assert_eq(fast->st, ref->st, "%s (%s): fast status %d, reference %d",
		     name, kinds[kind], fast->st, ref->st);
	for (size_t k = 0; ref->st == GEARRT_OK && k < ref->n; k++) {
		int dt = ref->out[k].dtype;
		size_t es = elem_size(dt), n = ref->out[k].size / es;
		const uint8_t *a = ref->data[k], *b = fast->data[k];
		cr_assert_eq(fast->out[k].size, ref->out[k].size);
		for (size_t i = 0; i < n; i++)
			cr_assert(!memcmp(a + i * es, b + i * es, es) ||
					  (is_nan(dt, a + i * es) &&
					   is_nan(dt, b + i * es)),
				  "%s (%s): output %zu element %zu differs",
				  name, kinds[kind], k, i);
	}
}

static void result_free(Result *r)
{
	for (size_t k = 0; k < r->n; k++)
		free(r->data[k]);
}

/* Every fixture whose name starts with prefix, compiled with extra[]
 * (NULL ended): a fast path takes every node (but Identity copies) and
 * matches the reference. */
static void check_all(const char *prefix, const char *const *extra)
{
	char *dir = temp_dir();
	DIR *d = opendir("tests/fixtures/intew");
	struct dirent *e;
	int models = 0;
	cr_assert(d);
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, strlen(prefix)) || len < 6)
			continue;
		char name[256], model[300];
		snprintf(name, sizeof(name), "%.*s", (int)(len - 5), e->d_name);
		snprintf(model, sizeof(model), "intew/%s", name);
		char *om = compile_fixture(dir, name, model, extra);
		for (int kind = 0; kind < NKINDS; kind++) {
			Result ref = run(om, true, kind), fast = run(om, false,
								      kind);
			cr_expect_eq(fast.fast, fast.tasks,
				     "%s: %d of %d nodes on a fast path", name,
				     fast.fast, fast.tasks);
			compare(name, &ref, &fast, kind);
			result_free(&ref);
			result_free(&fast);
		}
		free(om);
		models++;
	}
	closedir(d);
	cr_assert_gt(models, 0);
	remove_tree(dir);
	free(dir);
}

Test(intew, cast_every_pair, .timeout = 120)
{
	/* double to float16 would round twice through float32 */
	check_all("cast_", NULL);
}

/* float16 ops compiled as float16 (else gearc computes them in float32,
 * through the float32 kernels). */
static const char *const keep16[] = { "--keep-fp16", NULL };

Test(intew, binary_ops, .timeout = 120)
{
	static const char *const ops[] = { "add_", "sub_", "mul_", "div_",
					   "div3_", "max_", "min_", "equal_",
					   "less_", "greater_" };
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		check_all(ops[i], keep16);
}

Test(intew, unary_ops_clip_where, .timeout = 120)
{
	static const char *const ops[] = { "relu_", "neg_", "abs_", "clip_",
					   "where_" };
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		check_all(ops[i], keep16);
}
