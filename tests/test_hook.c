/*
 * tests/test_hook.c - gearrt_options.on_node, the hook `gearc run
 * --dump-tensors` writes every tensor from: each node once, in run
 * order, its outputs row-major however the runtime held them, the
 * values fused away named, not called by gearrt_session_prepare's run
 * on zeros, and a callback's failure a failed run naming the node.
 */
#include <math.h>

#include "runtime/rt.h"
#include "testrun.h"

enum { MAX_SEEN = 64 };

typedef struct Seen {
	int calls;
	int fail_at; /* return 3 at this call (1-based), 0: never */
	char name[MAX_SEEN][64], out[MAX_SEEN][64], kernel[MAX_SEEN][32];
	float *data[MAX_SEEN];
	size_t count[MAX_SEEN];
	char fused[512]; /* "node:value," for every fused name */
} Seen;

static int on_node(void *user, const gearrt_node_info *n)
{
	Seen *s = user;
	int i = s->calls++;
	cr_assert_lt(i, MAX_SEEN);
	snprintf(s->name[i], sizeof(s->name[i]), "%s", n->name);
	snprintf(s->kernel[i], sizeof(s->kernel[i]), "%s", n->kernel);
	cr_assert_geq(n->noutputs, 1);
	const gearrt_tensor *o = &n->outputs[0];
	snprintf(s->out[i], sizeof(s->out[i]), "%s", o->name);
	if (o->dtype == GEARRT_FLOAT32) {
		s->count[i] = o->size / sizeof(float);
		s->data[i] = malloc(o->size + 1);
		memcpy(s->data[i], o->data, o->size);
	}
	for (size_t k = 0; k < n->nfused; k++)
		snprintf(s->fused + strlen(s->fused),
			 sizeof(s->fused) - strlen(s->fused), "%s:%s,",
			 n->name, n->fused[k]);
	return s->fail_at == s->calls ? 3 : 0;
}

static void seen_free(Seen *s)
{
	for (int i = 0; i < s->calls; i++)
		free(s->data[i]);
}

/* Runs static om once on fixed inputs, with the hook, after preparing
 * its graph ahead; *nhwc gets the tensors the run held channels-last. */
static gearrt_status run_hooked(const char *om, bool no_fast, Seen *seen,
				int *nhwc, int *ntasks)
{
	gearrt_model *m;
	gearrt_session *s;
	gearrt_options opt = { .no_fast = no_fast, .on_node = on_node,
			       .on_node_user = seen };
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(m, &opt, &s), GEARRT_OK);
	cr_assert_eq(gearrt_session_prepare(s, NULL, 0), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_expect_eq(seen->calls, 0, "the run on zeros called on_node");
	gearrt_tensor in;
	cr_assert_eq(gearrt_input_info(m, 0, &in), GEARRT_OK);
	size_t cnt = 1;
	for (int32_t d = 0; d < in.rank; d++)
		cnt *= (size_t)in.dims[d];
	float *x = malloc(cnt * sizeof(float));
	for (size_t i = 0; i < cnt; i++)
		x[i] = (float)((i * 7919) % 2001) / 1000.0f - 1.0f;
	in.data = x;
	in.size = cnt * sizeof(float);
	gearrt_tensor out = { 0 };
	gearrt_status st = gearrt_run(s, &in, 1, &out, 1);
	Prepared *p = rt_session_ctx(s)->prep[0];
	*nhwc = 0;
	for (ValId v = 0; v < p->g->nvals; v++)
		*nhwc += rt_nhwc(p, v);
	*ntasks = p->ntasks;
	free(x);
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	return st;
}

Test(hook, every_node_once_row_major_as_the_reference)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "fast_nhwc", "fast_nhwc", NULL);
	Seen ref = { 0 }, fast = { 0 };
	int nhwc_ref, nhwc_fast, nt_ref, nt_fast;
	cr_assert_eq(run_hooked(om, true, &ref, &nhwc_ref, &nt_ref),
		     GEARRT_OK, "%s", gearrt_last_error());
	cr_assert_eq(run_hooked(om, false, &fast, &nhwc_fast, &nt_fast),
		     GEARRT_OK, "%s", gearrt_last_error());
	cr_expect_eq(nhwc_ref, 0);
	cr_expect_gt(nhwc_fast, 0, "no tensor was NHWC: nothing is tested");
	cr_expect_eq(ref.calls, nt_ref);
	cr_assert_eq(fast.calls, nt_fast);
	cr_assert_eq(ref.calls, fast.calls);
	for (int i = 0; i < ref.calls; i++) {
		cr_assert_str_eq(ref.out[i], fast.out[i], "node %d", i);
		cr_assert_eq(ref.count[i], fast.count[i], "'%s'", ref.out[i]);
		for (size_t k = 0; k < ref.count[i]; k++) {
			float a = fast.data[i][k], b = ref.data[i][k];
			cr_assert(fabsf(a - b) <= 1e-5f + 1e-4f * fabsf(b),
				  "'%s' (%s) element %zu: %g, the reference "
				  "%g", fast.out[i], fast.kernel[i], k, a, b);
		}
	}
	seen_free(&ref);
	seen_free(&fast);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(hook, names_the_values_fused_away)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "demo", "demo_cnn",
				   (const char *[]){ "--input_shape=x:1,3,32,32",
						     NULL });
	Seen s = { 0 };
	int nhwc, nt;
	cr_assert_eq(run_hooked(om, false, &s, &nhwc, &nt), GEARRT_OK, "%s",
		     gearrt_last_error());
	/* conv1 -> BatchNormalization -> Relu, conv2 -> Relu (the fixture,
	 * tests/gen_fixtures.py) */
	cr_expect_str_eq(s.fused, "conv1:c1,conv1:b1,conv2:c2,");
	cr_expect_str_eq(s.out[0], "r1");
	seen_free(&s);
	remove_tree(dir);
	free(dir);
	free(om);
}

Test(hook, a_failing_callback_fails_the_run_naming_the_node)
{
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "demo", "demo_cnn",
				   (const char *[]){ "--input_shape=x:1,3,32,32",
						     NULL });
	Seen s = { .fail_at = 2 };
	int nhwc, nt;
	cr_assert_eq(run_hooked(om, false, &s, &nhwc, &nt), GEARRT_E_RUN);
	cr_expect_eq(s.calls, 2);
	const char *e = gearrt_last_error();
	cr_expect(strstr(e, "node 'pool1' (MaxPool): on_node returned 3"),
		  "%s", e);
	seen_free(&s);
	remove_tree(dir);
	free(dir);
	free(om);
}
