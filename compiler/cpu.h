/*
 * compiler/cpu.h - the one place that knows the CPU (compiler/cpu.c).
 *
 * The features are read once (x86-64: cpuid, and xgetbv for the register
 * state the OS saves, so AVX-512 on a kernel that does not save ZMM state
 * is absent; aarch64: the kernel's hwcaps) and capped by the ISA level a
 * caller asks for (cpu_cap: gearrt_options.max_isa, GEARRT_MAX_ISA), so
 * every dispatch in the runtime and the registry's match functions read
 * cpu_has(), never __builtin_cpu_supports.
 */
#ifndef GEARC_CPU_H
#define GEARC_CPU_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum CpuFeature {
	/* x86-64 */
	CPU_SSE41,
	CPU_PCLMUL,
	CPU_AVX,
	CPU_AVX2,
	CPU_FMA,
	CPU_F16C,
	CPU_AVX_VNNI,
	CPU_AVX512F,
	CPU_AVX512BW,
	CPU_AVX512VL,
	CPU_AVX512VNNI,
	CPU_AVX512BF16,
	CPU_AVX512FP16,
	CPU_AMX_BF16,
	CPU_AMX_INT8,
	/* aarch64 */
	CPU_NEON,
	CPU_DOTPROD,
	CPU_ARM_BF16,
	CPU_SVE,
	CPU_NFEATURES
} CpuFeature;

/* ISA levels a caller may cap the features at, lowest first. */
typedef enum CpuLevel {
	CPU_LEVEL_BASELINE, /* x86-64's SSE2, aarch64's NEON */
	CPU_LEVEL_SSE41,
	CPU_LEVEL_AVX,
	CPU_LEVEL_AVX2,	    /* with FMA, F16C, AVX-VNNI */
	CPU_LEVEL_AVX512,   /* with BW, VL, VNNI, BF16, FP16, AMX */
	CPU_LEVEL_NATIVE,   /* no cap */
} CpuLevel;

/* Whether this CPU has feature f, within the cap. */
bool cpu_has(CpuFeature f);
/* The cap: features above level read as absent from now on (a process
 * property: runtime/session.c sets it from gearrt_options.max_isa, once
 * per process, before the sessions it caps choose kernels). */
void cpu_cap(CpuLevel level);
CpuLevel cpu_level(void);
/* For tests: feature f reads as absent (hide) or as the CPU has it again,
 * beside the cap (AVX2 without AVX-VNNI on a CPU that has both). */
void cpu_hide(CpuFeature f, bool hide);

/* The ISA the hand-written kernels' variants are chosen by, within the
 * cap: CPU_LEVEL_AVX512 (AVX-512 F, BW, VL with FMA), CPU_LEVEL_AVX2
 * (AVX2 with FMA), else CPU_LEVEL_BASELINE (x86-64's SSE2, aarch64's
 * NEON, or plain C elsewhere).  Read on every call of a dispatching
 * loop: one load. */
extern _Atomic int cpu_isa_now; /* -1 until first asked for */
int cpu_isa_init(void);
static inline CpuLevel cpu_isa(void)
{
	int v = atomic_load_explicit(&cpu_isa_now, memory_order_relaxed);
	return (CpuLevel)(v >= 0 ? v : cpu_isa_init());
}
/* The suffix a kernel variant of ISA level is named by in the profile:
 * "avx512", "avx2", and at the baseline "sse2" (x86-64), "neon"
 * (aarch64) or "c". */
const char *cpu_isa_name(CpuLevel level);
/* "baseline", "sse41", "avx", "avx2", "avx512", "native" -> level;
 * -1 for anything else. */
int cpu_level_parse(const char *s);
const char *cpu_level_name(CpuLevel level);
/* The cores this process may use: those of its CPU affinity mask, at
 * most its cgroup's CPU quota (rounded up), at least 1. */
int cpu_usable_cores(void);
/* The CPUs the cgroup at path (under its hierarchy's root directory)
 * and its ancestors grant: the least of their quota over their period;
 * 0 if none sets one.  v2: cpu.max "QUOTA PERIOD" ("max" for none); v1:
 * cpu.cfs_quota_us (-1 for none) and cpu.cfs_period_us. */
double cpu_cgroup_quota(const char *root, const char *path, bool v2);
/* The features present within the cap, as "avx2 fma f16c ..." into buf
 * (size bytes); buf. */
const char *cpu_features(char *buf, size_t size);

#endif
