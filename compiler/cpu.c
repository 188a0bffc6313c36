/* compiler/cpu.c - the CPU's features, read once (compiler/cpu.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cpu.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

static const struct {
	const char *name;
	CpuLevel level; /* the cap at which it starts to count */
} feature[CPU_NFEATURES] = {
	[CPU_SSE41] = { "sse4.1", CPU_LEVEL_SSE41 },
	[CPU_PCLMUL] = { "pclmul", CPU_LEVEL_SSE41 },
	[CPU_AVX] = { "avx", CPU_LEVEL_AVX },
	[CPU_AVX2] = { "avx2", CPU_LEVEL_AVX2 },
	[CPU_FMA] = { "fma", CPU_LEVEL_AVX2 },
	[CPU_F16C] = { "f16c", CPU_LEVEL_AVX2 },
	[CPU_AVX_VNNI] = { "avx_vnni", CPU_LEVEL_AVX2 },
	[CPU_AVX512F] = { "avx512f", CPU_LEVEL_AVX512 },
	[CPU_AVX512BW] = { "avx512bw", CPU_LEVEL_AVX512 },
	[CPU_AVX512VL] = { "avx512vl", CPU_LEVEL_AVX512 },
	[CPU_AVX512VNNI] = { "avx512_vnni", CPU_LEVEL_AVX512 },
	[CPU_AVX512BF16] = { "avx512_bf16", CPU_LEVEL_AVX512 },
	[CPU_AVX512FP16] = { "avx512_fp16", CPU_LEVEL_AVX512 },
	[CPU_AMX_BF16] = { "amx_bf16", CPU_LEVEL_AVX512 },
	[CPU_AMX_INT8] = { "amx_int8", CPU_LEVEL_AVX512 },
	[CPU_NEON] = { "neon", CPU_LEVEL_BASELINE },
	[CPU_DOTPROD] = { "dotprod", CPU_LEVEL_AVX2 },
	[CPU_ARM_BF16] = { "bf16", CPU_LEVEL_AVX512 },
	[CPU_SVE] = { "sve", CPU_LEVEL_AVX512 },
};

static const char *const level_names[] = {
	"baseline", "sse41", "avx", "avx2", "avx512", "native",
};

static bool has[CPU_NFEATURES];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static _Atomic int cap = CPU_LEVEL_NATIVE;
static _Atomic unsigned hidden; /* cpu_hide's features, bit f */
/* cpu_isa()'s level, -1 until first asked for (cpu.h) */
_Atomic int cpu_isa_now = -1;

#if defined(__x86_64__)
/* The register state the OS saves (XCR0), 0 without OSXSAVE. */
static uint64_t xcr0(void)
{
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static void read_features(void)
{
	unsigned a, b, c, d, a1 = 0, b1 = 0, c1 = 0, d1 = 0;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	uint64_t x = c >> 27 & 1 ? xcr0() : 0;
	bool avx = (x & 6) == 6, zmm = (x & 0xe6) == 0xe6;
	bool tiles = (x & 0x60000) == 0x60000;
	unsigned b7 = 0, c7 = 0, d7 = 0;
	if (__get_cpuid_count(7, 0, &a, &b7, &c7, &d7))
		__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
	has[CPU_SSE41] = c >> 19 & 1;
	has[CPU_PCLMUL] = c >> 1 & 1;
	has[CPU_AVX] = avx && c >> 28 & 1;
	has[CPU_FMA] = avx && c >> 12 & 1;
	has[CPU_F16C] = avx && c >> 29 & 1;
	has[CPU_AVX2] = avx && b7 >> 5 & 1;
	has[CPU_AVX_VNNI] = avx && a1 >> 4 & 1;
	has[CPU_AVX512F] = zmm && b7 >> 16 & 1;
	has[CPU_AVX512BW] = zmm && b7 >> 30 & 1;
	has[CPU_AVX512VL] = zmm && b7 >> 31 & 1;
	has[CPU_AVX512VNNI] = zmm && c7 >> 11 & 1;
	has[CPU_AVX512BF16] = zmm && a1 >> 5 & 1;
	has[CPU_AVX512FP16] = zmm && d7 >> 23 & 1;
	has[CPU_AMX_BF16] = tiles && d7 >> 22 & 1;
	has[CPU_AMX_INT8] = tiles && d7 >> 25 & 1;
}
#elif defined(__aarch64__)
static void read_features(void)
{
	unsigned long h = getauxval(AT_HWCAP), h2 = getauxval(AT_HWCAP2);
	has[CPU_NEON] = h & HWCAP_ASIMD;
	has[CPU_DOTPROD] = h & HWCAP_ASIMDDP;
	has[CPU_SVE] = h & HWCAP_SVE;
#ifdef HWCAP2_BF16
	has[CPU_ARM_BF16] = h2 & HWCAP2_BF16;
#else
	(void)h2;
#endif
}
#else
static void read_features(void) {}
#endif

bool cpu_has(CpuFeature f)
{
	pthread_once(&once, read_features);
	return f < CPU_NFEATURES && has[f] &&
	       feature[f].level <= (CpuLevel)atomic_load(&cap) &&
	       !(atomic_load(&hidden) >> f & 1);
}

void cpu_hide(CpuFeature f, bool hide)
{
	if (hide)
		atomic_fetch_or(&hidden, 1u << f);
	else
		atomic_fetch_and(&hidden, ~(1u << f));
	cpu_isa_init();
}

/* The kernels' level (cpu_isa) within the cap. */
static int isa_of(void)
{
	if (cpu_has(CPU_AVX512F) && cpu_has(CPU_AVX512BW) &&
	    cpu_has(CPU_AVX512VL) && cpu_has(CPU_FMA))
		return CPU_LEVEL_AVX512;
	if (cpu_has(CPU_AVX2) && cpu_has(CPU_FMA))
		return CPU_LEVEL_AVX2;
	return CPU_LEVEL_BASELINE;
}

int cpu_isa_init(void)
{
	int v = isa_of();
	atomic_store(&cpu_isa_now, v);
	return v;
}

void cpu_cap(CpuLevel level)
{
	atomic_store(&cap, (int)level);
	cpu_isa_init();
}

const char *cpu_isa_name(CpuLevel level)
{
	return level >= CPU_LEVEL_AVX512 ? "avx512"
	       : level >= CPU_LEVEL_AVX2 ? "avx2"
#if defined(__x86_64__)
					 : "sse2";
#elif defined(__aarch64__)
					 : "neon";
#else
					 : "c";
#endif
}

CpuLevel cpu_level(void) { return (CpuLevel)atomic_load(&cap); }

int cpu_level_parse(const char *s)
{
	for (int i = 0; i <= CPU_LEVEL_NATIVE; i++)
		if (!strcmp(s, level_names[i]))
			return i;
	return -1;
}

const char *cpu_level_name(CpuLevel level)
{
	return level <= CPU_LEVEL_NATIVE ? level_names[level] : "?";
}

const char *cpu_features(char *buf, size_t size)
{
	size_t at = 0;
	buf[0] = 0;
	for (int f = 0; f < CPU_NFEATURES; f++)
		if (cpu_has(f) && at < size)
			at += (size_t)snprintf(buf + at, size - at, "%s%s",
					       at ? " " : "", feature[f].name);
	return buf;
}

/* The first line of file, or "" (buf holds it). */
static const char *first_line(const char *file, char *buf, size_t size)
{
	FILE *f = fopen(file, "r");
	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

double cpu_cgroup_quota(const char *root, const char *path, bool v2)
{
	char dir[512], file[600], buf[128];
	double least = 0;
	snprintf(dir, sizeof(dir), "%s%s", root, path);
	for (;;) {
		double q = 0, per = 0;
		if (v2) {
			snprintf(file, sizeof(file), "%s/cpu.max", dir);
			if (sscanf(first_line(file, buf, sizeof(buf)),
				   "%lf %lf", &q, &per) != 2)
				q = 0;
		} else {
			snprintf(file, sizeof(file), "%s/cpu.cfs_quota_us", dir);
			q = atof(first_line(file, buf, sizeof(buf)));
			snprintf(file, sizeof(file), "%s/cpu.cfs_period_us", dir);
			per = atof(first_line(file, buf, sizeof(buf)));
		}
		if (q > 0 && per > 0 && (!least || q / per < least))
			least = q / per;
		char *slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < strlen(root))
			break;
		*slash = 0;
	}
	return least;
}

/* This process's cgroup quota in CPUs, 0 if none (Linux's
 * /proc/self/cgroup: "0::PATH" for v2, "N:...cpu...:PATH" for v1). */
static double quota_cpus(void)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[512];
	double q = 0;
	while (f && !q && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':')
							  : NULL;
		if (!path)
			continue;
		*path++ = 0, ctl++;
		if (!*ctl)
			q = cpu_cgroup_quota("/sys/fs/cgroup", path, true);
		else if (!strcmp(ctl, "cpu") || strstr(ctl, "cpu,") ||
			 strstr(ctl, ",cpu"))
			q = cpu_cgroup_quota("/sys/fs/cgroup/cpu", path, false);
	}
	if (f)
		fclose(f);
	return q;
}

int cpu_usable_cores(void)
{
	cpu_set_t set;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int n = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
		: online > 0				   ? (int)online
							   : 1;
	double q = quota_cpus();
	if (q > 0 && ceil(q) < n)
		n = (int)ceil(q);
	return n > 0 ? n : 1;
}
