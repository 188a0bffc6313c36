/* runtime/pool.h - the threads a run's parallel loops and oneDNN's
 * primitives run on (runtime/pool.c).
 *
 * Each thread that runs a session (a master) has a team of its own:
 * workers started the first time it asks for them and stopped when it
 * exits.  A parallel region hands out thread numbers 0..n-1; the master
 * takes 0, and a thread done with its number takes the next one not yet
 * taken, so a worker the OS has descheduled delays a region only by the
 * number it holds, never by one it has not begun.  Between regions a
 * worker waits: it spins while its master has a run under way
 * (rt_pool_active) and 1 ms after, then sleeps until the next region,
 * or the next run's start, wakes it.
 *
 * The plain-C kernels reach the team through OpenMP pragmas
 * (RT_PARALLEL_FOR, runtime/rt.h): their objects are compiled with
 * -fopenmp and the GOMP_ entry points gcc calls renamed to the rt_gomp_
 * ones below (the Makefile's objcopy step), so no other library's
 * OpenMP is touched.  oneDNN, built on OpenMP, calls six of libgomp's
 * entry points; rt_pool_adopt_dnnl points those of libdnnl's imports at
 * this pool, so both run on one team with one policy. */
#ifndef GEARRT_POOL_H
#define GEARRT_POOL_H

#include <stdbool.h>

/* Threads of this thread's next regions (oneDNN's omp_get_max_threads,
 * the pragmas' num_threads(0)); 1 for n below 1. */
void rt_pool_threads(int n);
/* This thread's number in the region it runs, 0 outside one. */
int rt_pool_thread(void);
/* A run starts (true) or ends (false) on this thread: its workers spin
 * between regions while one is under way. */
void rt_pool_active(bool on);
/* Workers of this thread's team asleep now; *wakes: how many times its
 * workers have woken; *busy: whether the team is in a busy spell
 * (another process wants the cores: its workers are left asleep).  For
 * tests. */
int rt_pool_asleep(long *wakes, bool *busy);

/* A team's CPUs as of one moment (ns): the clock, their idle time, this
 * process's CPU time. */
typedef struct {
	long at, idle, ours;
} RtLoad;
#ifdef CPU_SETSIZE /* <sched.h> with _GNU_SOURCE */
/* The idle time (ns, idle and iowait) of the CPUs of `cpus` in the
 * /proc/stat text read from fd; -1 if none is there. */
long rt_pool_idle_ns(int fd, const cpu_set_t *cpus);
#endif
/* Whether ncpus CPUs had room for a worker beside the master between
 * two loads: other processes left at least 1.5 of them (or the two are
 * too close to tell). */
bool rt_pool_room(int ncpus, const RtLoad *from, const RtLoad *to);
/* Points libdnnl's OpenMP imports at this pool (once a process; true
 * if they are: every OpenMP entry point libdnnl imports is one this
 * pool serves, and its import slots could be written).  Else oneDNN
 * stays on libgomp. */
bool rt_pool_adopt_dnnl(void);
/* How waiting threads wait, for gearrt_wait_policy. */
const char *rt_pool_policy(void);

/* The entry points of GCC's OpenMP ABI this pool serves (libgomp's
 * names with rt_ in front). */
void rt_gomp_parallel(void (*fn)(void *), void *data, unsigned nthr,
		      unsigned flags);
void rt_gomp_barrier(void);
bool rt_gomp_loop_nonmonotonic_dynamic_start(long start, long end,
					     long incr, long chunk,
					     long *istart, long *iend);
bool rt_gomp_loop_nonmonotonic_dynamic_next(long *istart, long *iend);
void rt_gomp_loop_end_nowait(void);
int rt_omp_get_thread_num(void);
int rt_omp_get_num_threads(void);
int rt_omp_get_max_threads(void);
int rt_omp_in_parallel(void);

#endif
