/*
 * tests/test_cpu.c - compiler/cpu.c: the ISA cap, the cores a process may
 * use (its affinity mask, its cgroup's quota, v1 and v2, read from a
 * hierarchy built here), and threads = 0 in a session taking them.
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <sched.h>
#include <sys/wait.h>

#include "compiler/cpu.h"
#include "runtime/gearrt.h"
#include "runtime/rt.h"
#include "testrun.h"

/* GEARRT_MAX_ISA caps this test binary's process, as gearc run's: each
 * test runs in a process of its own, so the suites run at each cap
 * (make check-isa). */
__attribute__((constructor)) static void cap_from_env(void)
{
	gearrt_options o = { 0 };
	gearrt_options_from_env(&o);
	if (o.max_isa && rt_isa_cap(o.max_isa) < 0) {
		fprintf(stderr, "tests: GEARRT_MAX_ISA: %s\n", last_error());
		exit(2);
	}
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	write_file(p, text, strlen(text));
}

Test(cpu, cgroup_quota_is_the_least_of_a_path_and_its_parents)
{
	char *root = temp_dir(), a[512], b[512];
	snprintf(a, sizeof(a), "%s/srv", root);
	snprintf(b, sizeof(b), "%s/srv/job", root);
	cr_assert(mkdir(a, 0755) == 0 && mkdir(b, 0755) == 0);
	/* v2: the job's own limit is 3 CPUs, its parent's 1.5 */
	put(b, "cpu.max", "300000 100000\n");
	put(a, "cpu.max", "150000 100000\n");
	put(root, "cpu.max", "max 100000\n");
	cr_expect_float_eq(cpu_cgroup_quota(root, "/srv/job", true), 1.5,
			   1e-9);
	put(a, "cpu.max", "max 100000\n");
	cr_expect_float_eq(cpu_cgroup_quota(root, "/srv/job", true), 3, 1e-9);
	put(b, "cpu.max", "max 100000\n");
	cr_expect_eq(cpu_cgroup_quota(root, "/srv/job", true), 0);
	/* v1: -1 is no quota */
	put(b, "cpu.cfs_quota_us", "50000\n");
	put(b, "cpu.cfs_period_us", "100000\n");
	put(a, "cpu.cfs_quota_us", "-1\n");
	put(a, "cpu.cfs_period_us", "100000\n");
	cr_expect_float_eq(cpu_cgroup_quota(root, "/srv/job", false), 0.5,
			   1e-9);
	remove_tree(root);
	free(root);
}

Test(cpu, cap_hides_features_above_the_level)
{
	char all[256], capped[256];
	CpuLevel was = cpu_level(); /* GEARRT_MAX_ISA's, or none */
	cpu_features(all, sizeof(all));
	bool avx2 = cpu_has(CPU_AVX2);
	cpu_cap(CPU_LEVEL_SSE41);
	cpu_features(capped, sizeof(capped));
	cr_expect(!cpu_has(CPU_AVX2) && !cpu_has(CPU_AVX512F) &&
			  !cpu_has(CPU_FMA),
		  "capped at sse41: %s", capped);
	cr_expect(!strstr(capped, "avx"), "%s", capped);
	cpu_cap(was);
	cr_expect_eq(cpu_has(CPU_AVX2), avx2, "the cap back: %s", all);
	cr_expect_eq(cpu_level_parse("avx2"), CPU_LEVEL_AVX2);
	cr_expect_eq(cpu_level_parse("AVX2"), -1);
	cr_expect_str_eq(cpu_level_name(CPU_LEVEL_BASELINE), "baseline");
}

Test(cpu, threads_zero_takes_the_cores_the_process_may_use)
{
	/* in a child pinned to one CPU: threads = 0 is 1 thread there */
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			_exit(3);
		_exit(cpu_usable_cores() == 1 ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "pinned to CPU 0, cpu_usable_cores() is not 1");
	char *dir = temp_dir();
	char *om = compile_fixture(dir, "demo", "demo_cnn",
				   (const char *[]){ "--input_shape=x:1,3,32,32",
						     NULL });
	gearrt_model *m;
	gearrt_session *s;
	cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK);
	gearrt_options o = { .threads = 0 };
	cr_assert_eq(gearrt_session_create(m, &o, &s), GEARRT_OK);
	cr_expect_eq(rt_session_ctx(s)->threads, cpu_usable_cores());
	gearrt_session_destroy(s);
	gearrt_model_close(m);
	remove_tree(dir);
	free(dir);
	free(om);
}
