/*
 * tests/test_scratch.c - the kernels that take scratch memory at run time
 * (ReduceX float and int, ArgMax/ArgMin, TopK, Split): sessions on eight
 * threads give one thread's outputs, and runs after the first allocate
 * nothing and leave the model as it was.  Models:
 * tests/gen_scratch_models.py.
 */
#include "runtime/rt.h"
#include "testrun.h"
#include "testutil.h"
#include "tests/scratch_run.h"

/* tests/allocount.c: heap allocations by the code linked in. */
extern long alloc_count;

typedef struct Opened {
	char *dir;
	gearrt_model *m;
	gearrt_session *s;
} Opened;

/* tests/fixtures/NAME.onnx compiled as it is (static) and opened. */
static Opened open_fixture(const char *name)
{
	Opened o = { .dir = temp_dir() };
	char model[256], out[512], om[520];
	snprintf(model, sizeof(model), "--model=tests/fixtures/%s.onnx", name);
	snprintf(out, sizeof(out), "--output=%s/%s", o.dir, name);
	snprintf(om, sizeof(om), "%s/%s.om", o.dir, name);
	Run r = run_gearc(model, out, "-q");
	cr_assert_eq(r.status, 0, "compile %s: %s", name, r.err);
	run_free(&r);
	cr_assert_eq(gearrt_model_open(om, &o.m), GEARRT_OK, "%s",
		     gearrt_last_error());
	cr_assert_eq(gearrt_session_create(o.m, NULL, &o.s), GEARRT_OK);
	return o;
}

static void close_fixture(Opened *o)
{
	gearrt_session_destroy(o->s);
	gearrt_model_close(o->m);
	remove_tree(o->dir);
	free(o->dir);
}

/* Bytes the model's arena (its graphs, its weights) has handed out. */
static size_t model_bytes(const gearrt_model *m)
{
	return m->m->arena.used;
}

Test(scratch, eight_sessions_on_eight_threads_give_one_threads_outputs)
{
	Opened o = open_fixture("scratch_ops");
	ScrIo io;
	cr_assert_eq(scr_open(o.m, &io), 0);
	cr_expect_eq(scr_threads(o.m, &io, 8, 300), 0,
		     "runs on 8 threads failed or differed from one thread's");
	scr_close(&io);
	close_fixture(&o);
}

Test(scratch, runs_after_the_first_allocate_nothing_and_leave_the_model)
{
	Opened o = open_fixture("scratch_ops");
	ScrIo io;
	cr_assert_eq(scr_open(o.m, &io), 0);
	uint8_t *out = malloc(io.out_bytes);
	cr_assert_eq(scr_run(o.s, &io, out), GEARRT_OK, "%s",
		     gearrt_last_error());
	long allocs = alloc_count;
	size_t held = model_bytes(o.m);
	for (int i = 0; i < 500; i++)
		cr_assert_eq(scr_run(o.s, &io, out), GEARRT_OK);
	cr_expect_eq(alloc_count, allocs, "%ld heap allocations in 500 runs",
		     alloc_count - allocs);
	cr_expect_eq(model_bytes(o.m), held, "500 runs took %zu bytes from "
		     "the model's arena", model_bytes(o.m) - held);
	free(out);
	scr_close(&io);
	close_fixture(&o);
}
