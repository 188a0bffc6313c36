/* runtime/pool.c - the threads of a run (runtime/pool.h).
 *
 * A team belongs to one master thread.  A region is published in one
 * 64-bit word, state = its sequence number << 32 | its size << 16 | the
 * next thread number to take, after its function and argument; a
 * thread takes a number by a compare-and-swap on that word, which fails
 * if the region has changed or its numbers are all taken, so a late
 * worker never runs a number of a region it did not see.  (The size is
 * in the word, not beside it: a worker holding the last region's state,
 * all of it taken, that read the next region's larger size beside it
 * would take a number the last region never had, under the next
 * region's function.)  `left` counts the numbers not yet done; the
 * master waits for it to reach 0.  Waiting workers watch `gen` (a futex
 * word bumped after each region's state), spinning first, sleeping
 * after. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "compiler/cpu.h"
#include "pool.h"

enum {
	MAX_TEAM = 256,		/* threads of a region at most */
	IDLE_SPIN = 2000,	/* pauses before sleeping, no run under way */
	YIELD_SPIN = 4096,	/* pauses before a waiting master yields */
};
/* How long a worker spins for the next region while a run is under
 * way: longer than the gaps between a run's kernels, short enough to
 * give the core back in a long serial stretch. */
#define ACTIVE_SPIN_NS 1000000L
/* When another process wants the team's cores, the team is busy for a
 * while (wait_region, busy()).  The sign: its threads' time runnable
 * but not running (the kernel's run delay, /proc/thread-self/schedstat)
 * over a run, read where a run has regions, at least DELAYED_NS and an
 * eighth of the run: the master's alone in one run its workers did not
 * all begin asleep, or all threads' in two runs in a row (on an idle
 * machine: microseconds, but for a run that wakes its workers after a
 * long sleep, a run's worth for the master or the workers: the kernel
 * may queue a wakee beside its waker for a few ms, on a virtual machine
 * the vCPU is slow to wake).  Where the kernel does not keep it, two of
 * these within SIGNS_NS: a gap of PREEMPTED_NS between two looks at the clock (some
 * 64 pauses apart) while a worker spins, or a spinning worker taking a
 * number LATE_NS after the region was published (on an idle machine:
 * microseconds; a woken worker's lateness is its wake-up's, no sign).
 * Busy lasts BUSY_MIN_NS, twice as long as the last time if it comes
 * back within that long of its end (the other process stayed: fewer
 * runs spent finding it again), up to BUSY_MAX_NS. */
#define BUSY_MIN_NS 100000000L
#define BUSY_MAX_NS 3200000000L
/* When a busy spell is up, its workers are woken only where the team's
 * CPUs had room for them over the spell: at least FREE_CPUS (the
 * master's and half of another's) not taken by other processes
 * (/proc/stat's idle time of the team's CPUs and this process's CPU
 * time, looked at once when the spell begins and once when it ends, at
 * least LOAD_MIN_NS apart); else the spell goes on (for longer, as
 * busy() does).  Waking them to find the other process still there
 * cost a run or two each spell, 5-20% of a benchmark's runs beside a
 * spinning process. */
#define FREE_CPUS 1.5
#define LOAD_MIN_NS 50000000L
#define DELAYED_NS 200000L
#define PREEMPTED_NS 1000000L
#define LATE_NS 1000000L
#define SIGNS_NS 50000000L

typedef struct Team {
	int nworkers;
	pthread_t th[MAX_TEAM - 1];
	uint64_t seq;			/* regions started (the master's) */
	atomic_uint_least64_t region;	/* seq of the published region */
	int icv;			/* the master's threads, at the region */
	void (*_Atomic fn)(void *);
	void *_Atomic data;
	atomic_uint_least64_t state;	/* seq << 32 | size << 16 | next */
	atomic_uint gen;		/* futex word: bumped per region */
	atomic_int left;		/* numbers not yet done */
	atomic_int sleepers;		/* workers in futex_wait on gen */
	atomic_long wakes;		/* times they came out of it */
	atomic_bool active, quit;
	atomic_long busy_until;		/* see busy() */
	atomic_long busy_ns;		/* how long the last time */
	atomic_long last_sign;		/* see sign */
	RtLoad load;			/* the spell's start (master's) */
	long load_for;			/* busy_until it was taken for */
	atomic_int delay_fd[MAX_TEAM];	/* schedstat, each thread's; -1 */
	long delay0[2], since;		/* at the run's first region: */
					/* the master's, the workers' */
	bool sampled;
	bool cold;			/* every worker slept at its start */
	atomic_long ended;		/* when the last run did (ns) */
	int delayed;			/* runs delayed in a row */
	atomic_long published;		/* when the region was (ns) */
	atomic_int master_cpu;		/* where its master published it */
	cpu_set_t allowed;		/* the CPUs the team may run on */
	bool movable;			/* more than one of them */
	atomic_uint bar_gen;		/* the region's barrier */
	atomic_int bar_in;
	atomic_uint_least64_t ws_init, ws_ready; /* its loop, by seq */
	atomic_long ws_next;
	long ws_end, ws_incr, ws_chunk;
} Team;

/* The region this thread runs a number of (team NULL: alone). */
typedef struct {
	Team *team;
	uint64_t seq;
	int id, nthr, level;
} Ctx;

static _Thread_local Ctx ctx;
static _Thread_local Team *own;	/* this thread's team, as a master */
static _Thread_local int icv;	/* rt_pool_threads; 0: not set */

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void futex_wait(atomic_uint *w, unsigned v)
{
	syscall(SYS_futex, (unsigned *)w, FUTEX_WAIT_PRIVATE, v, NULL, NULL,
		0);
}

static void futex_wake(atomic_uint *w, int n)
{
	syscall(SYS_futex, (unsigned *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL,
		0);
}

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static uint64_t state_word(uint32_t seq, int n, int next)
{
	return (uint64_t)seq << 32 | (uint64_t)n << 16 | (uint64_t)next;
}

static int state_next(uint64_t s) { return (int)(s & 0xffff); }

static int state_size(uint64_t s) { return (int)(s >> 16 & 0xffff); }

static void run_number(Team *t, uint64_t seq, int id, int n,
		       void (*fn)(void *), void *data)
{
	Ctx saved = ctx;
	ctx = (Ctx){ t, seq, id, n, saved.level + 1 };
	fn(data);
	ctx = saved;
	atomic_fetch_sub_explicit(&t->left, 1, memory_order_release);
}

/* Thread i's run delay so far (ns); -1 if the kernel keeps none. */
static long run_delay(const Team *t, int i)
{
	char buf[96];
	int fd = atomic_load_explicit(&t->delay_fd[i], memory_order_relaxed);
	ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *end;
	strtoull(buf, &end, 10); /* time on the CPU, then the delay */
	return (long)strtoull(end, NULL, 10);
}

/* The workers' run delay so far, summed; -1 as run_delay. */
static long workers_delay(const Team *t)
{
	long sum = 0;
	for (int i = 1; i <= t->nworkers; i++) {
		long d = run_delay(t, i);
		if (d < 0)
			return -1;
		sum += d;
	}
	return sum;
}

static int open_delay(void)
{
	return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

/* Another process wants the team's cores, as of `now`.  (Its master
 * and workers may call it at once: the length is a guess either way.) */
static void busy(Team *t, long now)
{
	long until = atomic_load(&t->busy_until);
	long ns = atomic_load_explicit(&t->busy_ns, memory_order_relaxed);
	if (now < until)
		return;
	ns = now - until < ns ? (2 * ns < BUSY_MAX_NS ? 2 * ns : BUSY_MAX_NS)
			      : BUSY_MIN_NS;
	atomic_store_explicit(&t->busy_ns, ns, memory_order_relaxed);
	atomic_store(&t->busy_until, now + ns);
}

/* A sign, at `now`, that another process wants the team's cores. */
static void sign(Team *t, long now)
{
	long last = atomic_exchange(&t->last_sign, now);
	if (now - last < SIGNS_NS)
		busy(t, now);
}

long rt_pool_idle_ns(int fd, const cpu_set_t *cpus)
{
	/* lines "cpuN user nice system idle iowait ...", in clock ticks,
	 * after the "cpu" line of all CPUs and before the rest */
	long hz = sysconf(_SC_CLK_TCK), tick_ns = 1000000000L / (hz > 0 ? hz
									: 100);
	char buf[4096];
	size_t have = 0;
	long sum = 0;
	int seen = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			return seen ? sum : -1;
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			if (strncmp(line, "cpu", 3))
				return seen ? sum : -1;
			char *p = line + 3;
			if (*p >= '0' && *p <= '9') {
				unsigned long cpu = strtoul(p, &p, 10);
				unsigned long long v[5] = { 0 };
				for (int k = 0; k < 5; k++)
					v[k] = strtoull(p, &p, 10);
				if (cpu < CPU_SETSIZE && CPU_ISSET(cpu, cpus)) {
					sum += (long)(v[3] + v[4]) * tick_ns;
					seen++;
				}
			}
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		if (have == sizeof(buf) - 1)
			return -1; /* a line longer than the buffer */
		memmove(buf, line, have);
	}
}

bool rt_pool_room(int ncpus, const RtLoad *from, const RtLoad *to)
{
	double w = (double)(to->at - from->at);
	if (w < LOAD_MIN_NS)
		return true; /* too short to tell: wake them and see */
	double others = ncpus * w - (double)(to->idle - from->idle) -
			(double)(to->ours - from->ours);
	return ncpus - others / w >= FREE_CPUS;
}

/* The team's load as of now; false where the kernel does not say. */
static bool load_now(const Team *t, RtLoad *l)
{
	struct timespec ts;
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	l->idle = rt_pool_idle_ns(fd, &t->allowed);
	close(fd);
	if (l->idle < 0 || clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return false;
	l->ours = ts.tv_sec * 1000000000L + ts.tv_nsec;
	l->at = now_ns();
	return true;
}

/* Whether the team is busy at `now` (its master's question, before it
 * wakes its workers): during a spell, yes (the spell's load taken once,
 * at the first question); when the spell is up, yes again if other
 * processes left the team's CPUs no room for a worker over it. */
static bool still_busy(Team *t, long now)
{
	long until = atomic_load(&t->busy_until);
	if (now < until) {
		if (t->load_for != until && load_now(t, &t->load))
			t->load_for = until;
		return true;
	}
	if (!until || t->load_for != until)
		return false;
	t->load_for = 0;
	RtLoad l = { 0 };
	if (!t->movable || !load_now(t, &l) ||
	    rt_pool_room(CPU_COUNT(&t->allowed), &t->load, &l))
		return false;
	busy(t, now);
	t->load = l;
	t->load_for = atomic_load(&t->busy_until);
	return true;
}

/* A worker woken onto its master's CPU shares it with the master for
 * the region: the kernel puts a wakee beside its waker when the other
 * CPUs look busy for an instant (the process that woke the master
 * going back to sleep) and moves one of them at its next balancing,
 * milliseconds later (the first run after 50 ms idle, on 2 cores: the
 * master runnable but waiting for half of it, and the team taken for
 * busy).  Such a worker moves to one of the other CPUs it may run on,
 * then may run on all of them again. */
static void off_masters_cpu(Team *t)
{
	int cpu = sched_getcpu();
	if (!t->movable || cpu < 0 ||
	    cpu != atomic_load_explicit(&t->master_cpu, memory_order_relaxed))
		return;
	cpu_set_t other = t->allowed;
	CPU_CLR(cpu, &other);
	if (!sched_setaffinity(0, sizeof(other), &other))
		sched_setaffinity(0, sizeof(t->allowed), &t->allowed);
}

/* Runs numbers of the published region while any are left to take;
 * `woke`: a worker that slept for the region (its lateness is the
 * wake-up's, not another process's). */
static void take(Team *t, bool woke)
{
	for (;;) {
		uint64_t s = atomic_load(&t->state);
		int id = state_next(s), n = state_size(s);
		if (id >= n)
			return;
		void (*fn)(void *) = atomic_load_explicit(
			&t->fn, memory_order_relaxed);
		void *data = atomic_load_explicit(&t->data,
						  memory_order_relaxed);
		/* taken while the region still had it: then fn and data,
		 * read after its state, are its own (the next region's
		 * are written only after every number of this one is
		 * done) */
		if (!atomic_compare_exchange_strong(&t->state, &s, s + 1))
			continue;
		if (own != t && !woke) { /* a worker that spun: how late */
			long now = now_ns();
			if (now - atomic_load_explicit(&t->published,
						       memory_order_relaxed) >
			    LATE_NS)
				sign(t, now);
		}
		if (own != t)
			off_masters_cpu(t);
		woke = true; /* a second number waited for the first */
		/* the region's whole sequence number: stored before its
		 * state, and the next one only after this number is done */
		run_number(t, atomic_load_explicit(&t->region,
						   memory_order_relaxed),
			   id, n, fn, data);
	}
}

/* A worker waits for the region after `g` (or a barrier's call for
 * it); true if it slept.  While its master has a run under way, or
 * finished one less than ACTIVE_SPIN_NS ago (a server's next request,
 * a benchmark's next run), it spins up to ACTIVE_SPIN_NS, unless the
 * team is busy (another process wants the cores: a spinning thread
 * would get its core back only after that process's time slice, a
 * woken one at once); then it sleeps between regions, and its master
 * runs regions alone. */
static bool wait_region(Team *t, unsigned g)
{
	long since = 0, last = 0;
	for (unsigned i = 0; atomic_load(&t->gen) == g; i++) {
		if (i < IDLE_SPIN) {
			relax();
			continue;
		}
		long now = now_ns();
		bool active = atomic_load_explicit(&t->active,
						   memory_order_acquire);
		if (active && last && now - last > PREEMPTED_NS)
			sign(t, now);
		last = active ? now : 0;
		if (!since)
			since = now;
		if (now - since < ACTIVE_SPIN_NS &&
		    now > atomic_load(&t->busy_until) &&
		    (active || now - atomic_load_explicit(&t->ended,
							  memory_order_relaxed) <
				       ACTIVE_SPIN_NS)) {
			for (int k = 0; k < 64; k++)
				relax();
			continue;
		}
		atomic_fetch_add(&t->sleepers, 1);
		futex_wait(&t->gen, g);
		atomic_fetch_sub(&t->sleepers, 1);
		atomic_fetch_add_explicit(&t->wakes, 1, memory_order_relaxed);
		return true;
	}
	return false;
}

static void *worker(void *arg)
{
	Team *t = arg;
	/* its schedstat, before its master counts it (nworkers) */
	atomic_store(&t->delay_fd[t->nworkers + 1], open_delay());
	for (bool woke = true;;) {
		unsigned g = atomic_load(&t->gen);
		if (atomic_load(&t->quit))
			return NULL;
		take(t, woke);
		woke = wait_region(t, g);
	}
}

static pthread_key_t team_key;
static pthread_once_t team_once = PTHREAD_ONCE_INIT;

static void team_free(void *p)
{
	Team *t = p;
	atomic_store(&t->quit, true);
	atomic_fetch_add(&t->gen, 1);
	futex_wake(&t->gen, INT_MAX);
	for (int i = 0; i < t->nworkers; i++)
		pthread_join(t->th[i], NULL);
	for (int i = 0; i <= t->nworkers; i++)
		if (atomic_load(&t->delay_fd[i]) >= 0)
			close(atomic_load(&t->delay_fd[i]));
	free(t);
}

/* A child of fork() has only the thread that forked: its team's
 * workers are gone, and it starts a team of its own when it needs one
 * (the old one is left as the parent's copy). */
static void forked(void)
{
	own = NULL;
	ctx = (Ctx){ 0 };
}

static void team_key_make(void)
{
	pthread_key_create(&team_key, team_free);
	pthread_atfork(NULL, NULL, forked);
}

/* This thread's team with up to `want` workers (fewer where the system
 * would not start more); NULL if it has none. */
static Team *team_for(int want)
{
	Team *t = own;
	if (!t) {
		pthread_once(&team_once, team_key_make);
		t = calloc(1, sizeof(*t));
		if (!t || pthread_setspecific(team_key, t)) {
			free(t);
			return NULL;
		}
		own = t;
		t->movable = !sched_getaffinity(0, sizeof(t->allowed),
						&t->allowed) &&
			     CPU_COUNT(&t->allowed) > 1;
	}
	if (!t->nworkers)
		atomic_store(&t->delay_fd[0], open_delay());
	while (t->nworkers < want) {
		atomic_store(&t->delay_fd[t->nworkers + 1], -2);
		if (pthread_create(&t->th[t->nworkers], NULL, worker, t))
			break;
		while (atomic_load(&t->delay_fd[t->nworkers + 1]) == -2)
			sched_yield(); /* it opens its schedstat */
		t->nworkers++;
	}
	return t->nworkers ? t : NULL;
}

static void alone(void (*fn)(void *), void *data)
{
	Ctx saved = ctx;
	ctx = (Ctx){ NULL, 0, 0, 1, saved.level + 1 };
	fn(data);
	ctx = saved;
}

int rt_omp_get_max_threads(void)
{
	int n = ctx.team ? ctx.team->icv : icv;
	return n > 0 ? n : cpu_usable_cores();
}

void rt_gomp_parallel(void (*fn)(void *), void *data, unsigned nthr,
		      unsigned flags)
{
	(void)flags; /* proc_bind: the OS places the threads */
	int n = nthr ? (nthr < MAX_TEAM ? (int)nthr : MAX_TEAM)
		     : rt_omp_get_max_threads();
	if (n > MAX_TEAM)
		n = MAX_TEAM;
	Team *t = n > 1 && ctx.level == 0 ? team_for(n - 1) : NULL;
	if (!t) { /* one thread, or nested in a region: alone */
		alone(fn, data);
		return;
	}
	if (n > t->nworkers + 1)
		n = t->nworkers + 1;
	uint64_t seq = ++t->seq;
	long now = now_ns();
	if (atomic_load_explicit(&t->active, memory_order_relaxed) &&
	    !t->sampled) { /* the run's first region: its delay so far */
		t->delay0[0] = run_delay(t, 0);
		t->delay0[1] = workers_delay(t);
		t->since = now;
		t->sampled = true;
	}
	atomic_store_explicit(&t->published, now, memory_order_relaxed);
	atomic_store_explicit(&t->master_cpu, sched_getcpu(),
			      memory_order_relaxed);
	t->icv = icv;
	atomic_store_explicit(&t->fn, fn, memory_order_relaxed);
	atomic_store_explicit(&t->data, data, memory_order_relaxed);
	atomic_store_explicit(&t->left, n, memory_order_relaxed);
	/* number 0 is the master's */
	atomic_store_explicit(&t->region, seq, memory_order_relaxed);
	atomic_store(&t->state, state_word((uint32_t)seq, n, 1));
	atomic_fetch_add(&t->gen, 1);
	/* a busy team's master takes the numbers itself, unless a worker
	 * is awake to take one (or a barrier needs one: rt_gomp_barrier) */
	if (atomic_load(&t->sleepers) > 0 && !still_busy(t, now))
		futex_wake(&t->gen, n - 1);
	run_number(t, seq, 0, n, fn, data);
	take(t, false);
	for (unsigned i = 0;
	     atomic_load_explicit(&t->left, memory_order_acquire) > 0; i++)
		if (i < YIELD_SPIN)
			relax();
		else
			sched_yield();
}

void rt_gomp_barrier(void)
{
	Team *t = ctx.team;
	if (!t || ctx.nthr < 2)
		return;
	unsigned g = atomic_load(&t->bar_gen);
	if (state_next(atomic_load(&t->state)) < ctx.nthr)
		futex_wake(&t->gen, INT_MAX); /* numbers untaken: wake all */
	if (atomic_fetch_add(&t->bar_in, 1) + 1 == ctx.nthr) {
		atomic_store(&t->bar_in, 0);
		atomic_fetch_add(&t->bar_gen, 1);
		futex_wake(&t->bar_gen, INT_MAX);
		return;
	}
	for (unsigned i = 0; atomic_load(&t->bar_gen) == g; i++)
		if (i < IDLE_SPIN)
			relax();
		else
			futex_wait(&t->bar_gen, g);
}

bool rt_gomp_loop_nonmonotonic_dynamic_next(long *istart, long *iend)
{
	Team *t = ctx.team;
	if (!t)
		return false; /* alone: start gave the whole range */
	long step = t->ws_chunk * t->ws_incr;
	long i = atomic_fetch_add(&t->ws_next, step);
	if (t->ws_incr > 0 ? i >= t->ws_end : i <= t->ws_end)
		return false;
	*istart = i;
	*iend = t->ws_incr > 0 ? (i + step < t->ws_end ? i + step : t->ws_end)
			       : (i + step > t->ws_end ? i + step : t->ws_end);
	return true;
}

bool rt_gomp_loop_nonmonotonic_dynamic_start(long start, long end,
					     long incr, long chunk,
					     long *istart, long *iend)
{
	Team *t = ctx.team;
	if (!t) {
		*istart = start;
		*iend = end;
		return incr > 0 ? start < end : start > end;
	}
	/* the region's first thread here sets its (one) loop up */
	uint64_t seen = atomic_load(&t->ws_init);
	if (seen != ctx.seq &&
	    atomic_compare_exchange_strong(&t->ws_init, &seen, ctx.seq)) {
		t->ws_end = end;
		t->ws_incr = incr;
		t->ws_chunk = chunk > 0 ? chunk : 1;
		atomic_store(&t->ws_next, start);
		atomic_store_explicit(&t->ws_ready, ctx.seq,
				      memory_order_release);
	}
	while (atomic_load_explicit(&t->ws_ready, memory_order_acquire) !=
	       ctx.seq)
		relax();
	return rt_gomp_loop_nonmonotonic_dynamic_next(istart, iend);
}

void rt_gomp_loop_end_nowait(void) {}

int rt_omp_get_thread_num(void) { return ctx.id; }

int rt_omp_get_num_threads(void) { return ctx.nthr > 0 ? ctx.nthr : 1; }

int rt_omp_in_parallel(void) { return ctx.nthr > 1; }

int rt_pool_thread(void) { return ctx.id; }

int rt_pool_asleep(long *wakes, bool *busy)
{
	Team *t = own;
	*wakes = t ? atomic_load(&t->wakes) : 0;
	*busy = t && now_ns() < atomic_load(&t->busy_until);
	return t ? atomic_load(&t->sleepers) : 0;
}

void rt_pool_threads(int n) { icv = n > 0 ? n : 1; }

void rt_pool_active(bool on)
{
	Team *t = own;
	if (!t)
		return;
	if (on) {
		atomic_store_explicit(&t->active, true, memory_order_relaxed);
		/* wake the sleepers now: they are up by the first region */
		int asleep = atomic_load(&t->sleepers);
		t->cold = asleep == t->nworkers;
		if (asleep > 0 && !still_busy(t, now_ns())) {
			/* a new gen: a worker between counting itself a
			 * sleeper and its futex_wait does not sleep */
			atomic_fetch_add(&t->gen, 1);
			futex_wake(&t->gen, INT_MAX);
		}
		return;
	}
	/* the end's time first: a worker that sees the run over sees when
	 * (else it took the last run's end, long past, and slept at once) */
	long now = now_ns();
	atomic_store_explicit(&t->ended, now, memory_order_relaxed);
	atomic_store_explicit(&t->active, false, memory_order_release);
	if (!t->sampled)
		return;
	t->sampled = false; /* the run had regions: how long it waited */
	long run = now - t->since;
	long master = run_delay(t, 0) - t->delay0[0];
	long all = master + workers_delay(t) - t->delay0[1];
	bool known = t->delay0[0] >= 0 && t->delay0[1] >= 0;
	t->delayed = known && all > DELAYED_NS && all > run / 8
			     ? t->delayed + 1 : 0;
	if (t->delayed >= 2 || (known && !t->cold && master > DELAYED_NS &&
				master > run / 8))
		busy(t, now);
}

/* libdnnl's imports this pool serves. */
static const struct {
	const char *name;
	void *fn;
} served[] = {
	{ "GOMP_parallel", (void *)rt_gomp_parallel },
	{ "GOMP_barrier", (void *)rt_gomp_barrier },
	{ "GOMP_loop_nonmonotonic_dynamic_start",
	  (void *)rt_gomp_loop_nonmonotonic_dynamic_start },
	{ "GOMP_loop_nonmonotonic_dynamic_next",
	  (void *)rt_gomp_loop_nonmonotonic_dynamic_next },
	{ "GOMP_loop_end_nowait", (void *)rt_gomp_loop_end_nowait },
	{ "omp_get_max_threads", (void *)rt_omp_get_max_threads },
	{ "omp_get_num_threads", (void *)rt_omp_get_num_threads },
	{ "omp_get_thread_num", (void *)rt_omp_get_thread_num },
	{ "omp_in_parallel", (void *)rt_omp_in_parallel },
	{ "omp_set_num_threads", (void *)rt_pool_threads },
};

static void *served_fn(const char *name)
{
	for (size_t i = 0; i < sizeof(served) / sizeof(served[0]); i++)
		if (!strcmp(served[i].name, name))
			return served[i].fn;
	return NULL;
}

static bool openmp_name(const char *name)
{
	return !strncmp(name, "GOMP_", 5) || !strncmp(name, "omp_", 4) ||
	       !strncmp(name, "kmp_", 4) || !strncmp(name, "__kmpc_", 7);
}

#if defined(__x86_64__)
#define SLOT_JUMP R_X86_64_JUMP_SLOT
#define SLOT_DATA R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define SLOT_JUMP R_AARCH64_JUMP_SLOT
#define SLOT_DATA R_AARCH64_GLOB_DAT
#endif

#ifdef SLOT_JUMP
/* libdnnl as loaded: its relocations and symbols. */
typedef struct {
	uintptr_t base;
	const ElfW(Sym) *sym;
	const char *str;
	const ElfW(Rela) *rel[2];
	size_t nrel[2];
	uintptr_t relro, relro_end;
	bool found, rela;
} Dnnl;

static uintptr_t at(const Dnnl *d, ElfW(Addr) p)
{
	return p < d->base ? d->base + p : p; /* glibc relocates them */
}

static int find_dnnl(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	Dnnl *d = arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libdnnl.so"))
		return 0;
	d->base = info->dlpi_addr;
	const ElfW(Dyn) *dyn = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(d->base + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			d->relro = d->base + ph->p_vaddr;
			d->relro_end = d->relro + ph->p_memsz;
		}
	}
	d->rela = true;
	for (; dyn && dyn->d_tag != DT_NULL; dyn++)
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->sym = (const ElfW(Sym) *)at(d, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->str = (const char *)at(d, dyn->d_un.d_ptr);
			break;
		case DT_JMPREL:
			d->rel[0] = (const ElfW(Rela) *)at(d, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->nrel[0] = dyn->d_un.d_val / sizeof(ElfW(Rela));
			break;
		case DT_RELA:
			d->rel[1] = (const ElfW(Rela) *)at(d, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->nrel[1] = dyn->d_un.d_val / sizeof(ElfW(Rela));
			break;
		case DT_PLTREL:
			d->rela = dyn->d_un.d_val == DT_RELA;
			break;
		case DT_REL:
			d->rela = false;
			break;
		}
	d->found = d->sym && d->str && d->rela;
	return 1;
}

/* Writes our functions into libdnnl's import slots; with `write`
 * false, only checks that every OpenMP import is one we serve, through
 * a slot we can write. */
static bool patch(const Dnnl *d, bool write)
{
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; d->rel[k] && i < d->nrel[k]; i++) {
			const ElfW(Rela) *r = &d->rel[k][i];
			size_t s = ELF64_R_SYM(r->r_info);
			if (!s)
				continue;
			const char *name = d->str + d->sym[s].st_name;
			if (!openmp_name(name))
				continue;
			void *fn = served_fn(name);
			unsigned type = ELF64_R_TYPE(r->r_info);
			if (!fn || (type != SLOT_JUMP && type != SLOT_DATA))
				return false;
			if (write)
				*(void **)(d->base + r->r_offset) = fn;
		}
	return true;
}

static bool adopt(void)
{
	Dnnl d = { 0 };
	dl_iterate_phdr(find_dnnl, &d);
	if (!d.found || !patch(&d, false))
		return false;
	/* the pages glibc made read-only: the last partial one it left
	 * writable (and so do we) */
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = d.relro & ~(page - 1), hi = d.relro_end & ~(page - 1);
	bool relro = hi > lo;
	if (relro && mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE))
		return false;
	patch(&d, true);
	if (relro)
		mprotect((void *)lo, hi - lo, PROT_READ);
	return true;
}
#else
static bool adopt(void) { return false; }
#endif

static pthread_once_t adopt_once = PTHREAD_ONCE_INIT;
static bool adopted;

static void adopt_now(void)
{
	adopted = !getenv("GEARRT_DNNL_LIBGOMP") && adopt();
}

bool rt_pool_adopt_dnnl(void)
{
	pthread_once(&adopt_once, adopt_now);
	return adopted;
}

const char *rt_pool_policy(void)
{
	return "spin while a run is under way and 1 ms after, then sleep; "
	       "sleep at once while other processes want the cores "
	       "(gearrt's pool)";
}
