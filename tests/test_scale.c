/* tests/test_scale.c - graphs far larger than real networks, generated
 * here (never committed): the memory planner and `gearc verify` must
 * stay O(n log n) on them (issue 19, items 3 and 4).  Timing limits are
 * CPU seconds of optimized builds; under the sanitizers the graphs are
 * smaller and only the results are checked. */
#include <criterion/criterion.h>
#include <sys/resource.h>
#include <time.h>

#include "testrun.h"

#include "cli/cli.h"
#include "passes/memplan.h"
#include "serializer/om.h"
#include "synth.h"

#if defined(__SANITIZE_ADDRESS__)
#define SCALE_TIMED false
#define SCALE_DIV 20
#else
#define SCALE_TIMED true
#define SCALE_DIV 1
#endif

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double children_cpu(void)
{
	struct rusage u;
	getrusage(RUSAGE_CHILDREN, &u);
	return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
	       (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

/* 200,000 Relu outputs live at once (they all feed one Sum): the plan
 * is the lower bound, one 64-byte buffer each, and takes under 2 s (it
 * took minutes when every placement gathered and sorted every live
 * buffer). */
Test(scale, planning_200k_tensors_live_at_once, .timeout = 120)
{
	int32_t n = 200000 / SCALE_DIV;
	Model *m = synth_compile(synth_wide(n), NULL, 0, 0, 0, 1);
	cr_assert(m, "%s", last_error());
	double t0 = cpu_now();
	cr_assert_eq(pass_memplan(m, &(PassOptions){ .jobs = 1 }), 0, "%s",
		     last_error());
	double t = cpu_now() - t0;
	const MemPlan *p = m->graph->plan;
	cr_assert(p);
	cr_expect_eq(p->lower_bound_bytes, 64 * (uint64_t)n);
	cr_expect_eq(p->arena_bytes, p->lower_bound_bytes, "arena %llu",
		     (unsigned long long)p->arena_bytes);
	if (SCALE_TIMED)
		cr_expect_lt(t, 2.0, "planning took %.2f s", t);
	model_free(m);
}

/* A chain of 1,000,000 Relu nodes, each in place of the one before: the
 * plan checks in under 2 s, the whole of `gearc verify` (reading the
 * 25 MB file, raising it, re-running inference: about 5 s on an idle
 * core) under 20 s of CPU.  The in-place check used to scan every block
 * per in-place block: 100k nodes took 36 s, 1M would take hours. */
Test(scale, verifying_a_1m_node_chain, .timeout = 300)
{
	int32_t n = 1000000 / SCALE_DIV;
	Model *m = synth_compile(synth_chain(n), NULL, 0, 0, 0, 1);
	cr_assert(m, "%s", last_error());
	cr_assert_eq(m->graph->plan->nblocks, n - 1);
	char *d = temp_dir(), *om = path_in(d, "chain.om");
	cr_assert_eq(om_write(m, om), 0, "%s", last_error());
	model_free(m);
	OmFile f;
	cr_assert_eq(om_open(&f, om), 0, "%s", last_error());
	double t0 = cpu_now();
	cr_expect_eq(verify_plans(&f), 0, "%s", last_error());
	double t = cpu_now() - t0;
	om_close(&f);
	double c0 = children_cpu();
	Run r = run_gearc("verify", om);
	double tc = children_cpu() - c0;
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "shapes: ok\n"), "%s", r.out);
	if (SCALE_TIMED) {
		cr_expect_lt(t, 2.0, "the plan checks took %.2f s", t);
		cr_expect_lt(tc, 20.0, "gearc verify took %.2f s", tc);
	}
	run_free(&r);
	remove_tree(d);
	free(om);
	free(d);
}
