/*
 * tests/scratch_soak.c - a static .om run over and over, as a server runs
 * it: for `make helgrind` and `make soak` (tests/scratch_run.h fills the
 * inputs).
 *
 * usage: scratch_soak --threads=T --runs=R [--shared] MODEL.om
 *          T sessions on T threads, R runs each (--shared: one session
 *          all T threads run at once, every other run's outputs left in
 *          its memory); every run's outputs must equal those of one
 *          session's run (exit 1 if any differs).
 *        scratch_soak --soak=N MODEL.om
 *          one session: 100 runs to warm up, then N runs; the heap in use
 *          (glibc's mallinfo2: every allocation, the libraries' too) must
 *          not change and the resident set must not grow by more than
 *          SOAK_RSS_SLACK (exit 1 otherwise).  Prints both figures.
 *        scratch_soak --soak=N --threads=T --shared [--intra=I] MODEL.om
 *          the same of one session T threads run at once, N runs each,
 *          as a server starting a thread per batch of requests: every
 *          ROUND runs, T new threads (concurrency T, its contexts
 *          prepared ahead, 15 rounds to warm up); every run's
 *          outputs must equal one thread's too.  --intra: the
 *          session's threads (gearrt_options.threads, default 1): each
 *          new thread's runs then start a team of I-1 workers of
 *          gearrt's pool, which stop as the thread exits.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/scratch_run.h"

/* Pages the kernel may map in late (a stack page, libc's buffers): far
 * below what a run leaking a byte per run would add over 100,000 runs. */
enum { SOAK_RSS_SLACK = 256 * 1024 };

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

static size_t rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int soak(gearrt_model *m, const ScrIo *io, long runs)
{
	gearrt_session *s;
	uint8_t *out = malloc(io->out_bytes + 1);
	if (gearrt_session_create(m, NULL, &s) != GEARRT_OK)
		return fprintf(stderr, "%s\n", gearrt_last_error()), 1;
	for (int i = 0; i < 100; i++)
		if (scr_run(s, io, out) != GEARRT_OK)
			return fprintf(stderr, "%s\n", gearrt_last_error()), 1;
	size_t rss0 = rss_bytes(), heap0 = heap_in_use(); /* stdio first */
	double t0 = now_s();
	for (long i = 0; i < runs; i++)
		if (scr_run(s, io, out) != GEARRT_OK)
			return fprintf(stderr, "run %ld: %s\n", i + 101,
				       gearrt_last_error()), 1;
	double t = now_s() - t0;
	size_t heap1 = heap_in_use(), rss1 = rss_bytes();
	gearrt_session_destroy(s);
	free(out);
	printf("soak: %ld runs (%.1f us a run): heap in use %zu -> %zu bytes, "
	       "resident %zu -> %zu KiB\n", runs, t * 1e6 / (double)runs,
	       heap0, heap1, rss0 / 1024, rss1 / 1024);
	if (heap1 != heap0 || rss1 > rss0 + SOAK_RSS_SLACK) {
		printf("soak: memory grew over %ld runs\n", runs);
		return 1;
	}
	return 0;
}

enum { ROUND = 50 };

/* T new threads of ROUND runs each on session s: the runs that failed
 * or differed from want. */
static int round_of(gearrt_model *m, gearrt_session *s, const ScrIo *io,
		    const uint8_t *want, int threads)
{
	ScrWorker w[64];
	pthread_t th[64];
	int bad = 0;
	for (int i = 0; i < threads; i++) {
		w[i] = (ScrWorker){ .m = m, .shared = s, .io = io,
				    .want = want, .runs = ROUND };
		pthread_create(&th[i], NULL, scr_worker, &w[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		bad += w[i].failed + w[i].differed;
	}
	return bad;
}

static int soak_shared(gearrt_model *m, const ScrIo *io, long runs,
		       int threads, int intra)
{
	gearrt_session *s;
	gearrt_options o = { .concurrency = threads, .threads = intra };
	uint8_t *want = malloc(io->out_bytes + 1);
	if (gearrt_session_create(m, &o, &s) != GEARRT_OK ||
	    gearrt_session_prepare(s, NULL, 0) != GEARRT_OK ||
	    scr_run(s, io, want) != GEARRT_OK)
		return fprintf(stderr, "%s\n", gearrt_last_error()), 1;
	/* rounds to warm up: some allocations of oneDNN's are made once,
	 * in a later round than the first, and with workers (--intra) the
	 * threads' stacks settle in glibc's cache of them after some ten
	 * rounds (PP-OCRv4 rec at 2: 4 MB resident more after 3 rounds,
	 * the same after 1000 runs as after 3000; none after 15) */
	int bad = 0;
	for (int k = 0; k < 15; k++)
		bad += round_of(m, s, io, want, threads);
	usleep(100 * 1000); /* (the last round's threads are joined) */
	size_t rss0 = rss_bytes(), heap0 = heap_in_use();
	double t0 = now_s();
	long rounds = (runs + ROUND - 1) / ROUND;
	for (long r = 0; r < rounds; r++)
		bad += round_of(m, s, io, want, threads);
	double t = now_s() - t0;
	usleep(100 * 1000);
	size_t heap1 = heap_in_use(), rss1 = rss_bytes();
	gearrt_session_destroy(s);
	free(want);
	printf("soak: %d threads on one session of %d x %ld runs, new "
	       "threads every %d (%.1f us a run): %d failed or differed; heap "
	       "in use %zu -> %zu bytes, resident %zu -> %zu KiB\n", threads,
	       intra,
	       rounds * ROUND, ROUND, t * 1e6 / (double)(rounds * ROUND *
							 threads),
	       bad, heap0, heap1, rss0 / 1024, rss1 / 1024);
	if (heap1 != heap0 || rss1 > rss0 + SOAK_RSS_SLACK) {
		printf("soak: memory grew over %ld runs\n", rounds * ROUND);
		return 1;
	}
	return bad != 0;
}

int main(int argc, char **argv)
{
	long threads = 0, runs = 0, soak_runs = 0, intra = 1;
	bool shared = false;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--threads=", 10))
			threads = atol(argv[i] + 10);
		else if (!strncmp(argv[i], "--runs=", 7))
			runs = atol(argv[i] + 7);
		else if (!strcmp(argv[i], "--shared"))
			shared = true;
		else if (!strncmp(argv[i], "--soak=", 7))
			soak_runs = atol(argv[i] + 7);
		else if (!strncmp(argv[i], "--intra=", 8))
			intra = atol(argv[i] + 8);
		else
			path = argv[i];
	}
	if (!path || (soak_runs <= 0 && (threads <= 0 || runs <= 0))) {
		fprintf(stderr, "usage: scratch_soak --threads=T --runs=R "
				"[--shared] MODEL.om | --soak=N "
				"[--threads=T --shared [--intra=I]] MODEL.om\n");
		return 2;
	}
	/* every thread's allocations in the arena mallinfo2 reports */
	mallopt(M_ARENA_MAX, 1);
	gearrt_model *m;
	ScrIo io;
	if (gearrt_model_open(path, &m) != GEARRT_OK)
		return fprintf(stderr, "%s\n", gearrt_last_error()), 1;
	if (scr_open(m, &io) < 0)
		return 1;
	int rc;
	if (soak_runs > 0 && shared) {
		rc = soak_shared(m, &io, soak_runs,
				 threads < 1 ? 1 : threads > 64 ? 64 : (int)threads,
				 intra < 1 ? 1 : intra > 256 ? 256 : (int)intra);
	} else if (soak_runs > 0) {
		rc = soak(m, &io, soak_runs);
	} else {
		int bad = scr_threads(m, &io, (int)threads, (int)runs, shared);
		printf("threads: %ld %s x %ld runs: %d runs failed or "
		       "differed from one thread's\n", threads,
		       shared ? "threads on one session" : "sessions", runs,
		       bad < 0 ? (int)(threads * runs) : bad);
		rc = bad != 0;
	}
	scr_close(&io);
	gearrt_model_close(m);
	return rc;
}
