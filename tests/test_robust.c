/* tests/test_robust.c - crash-safe and reproducible output. */
#include <dirent.h>
#include <signal.h>
#include <time.h>

#include "cli/cli.h"
#include "serializer/om.h"
#include "testrun.h"

static void copy_file(const char *from, const char *to)
{
	size_t n = 0;
	char *s = read_file(from, &n);
	cr_assert(s, "cannot read %s", from);
	write_file(to, s, n);
	free(s);
}

/* Names in dir that start with prefix (how many; the first into *first). */
static int count_prefixed(const char *dir, const char *prefix, char **first)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	cr_assert(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			if (!n++ && first)
				*first = path_in(dir, e->d_name);
		}
	closedir(d);
	return n;
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* The size of a file gearc has open in dir and that has no name (an
 * O_TMPFILE being written: /proc shows "DIR/#INODE (deleted)"), or -1. */
static long unnamed_file_size(pid_t pid, const char *dir)
{
	char fds[64], link[600], target[600];
	snprintf(fds, sizeof(fds), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(fds);
	struct dirent *e;
	long size = -1;
	while (d && (e = readdir(d))) {
		snprintf(link, sizeof(link), "%s/%s", fds, e->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strncmp(target, dir, strlen(dir)) &&
		    strstr(target, "(deleted)"))
			size = file_size(link);
	}
	if (d)
		closedir(d);
	return size;
}

/* A compile of big_external.onnx (a 256 MB weight, sparse) to DIR/out.om,
 * in a child: by exec of gearc, or in process with the named temporary
 * file (no O_TMPFILE) when named is set. */
static pid_t start_big_compile(const char *d, bool named)
{
	char *model = path_in(d, "big_external.onnx");
	char *bin = path_in(d, "big.bin");
	copy_file("tests/fixtures/big_external.onnx", model);
	int fd = open(bin, O_WRONLY | O_CREAT, 0644);
	cr_assert(fd >= 0 && ftruncate(fd, 256L << 20) == 0); /* sparse */
	close(fd);
	char *om = path_in(d, "out.om");
	write_file(om, "the previous model", 18);
	static char marg[600], oarg[600];
	snprintf(marg, sizeof(marg), "--model=%s", model);
	snprintf(oarg, sizeof(oarg), "--output=%s/out", d);
	free(model);
	free(bin);
	free(om);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 1);
		dup2(nul, 2);
		if (named) {
			char *argv[] = { marg, oarg, "--quiet", NULL };
			om_use_tmpfile = false;
			_exit(cmd_compile(3, argv));
		}
		execl(gearc_bin(), gearc_bin(), marg, oarg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void expect_old_model(const char *d)
{
	char *om = path_in(d, "out.om");
	size_t n;
	char *s = read_file(om, &n);
	cr_expect(s && n == 18 && !memcmp(s, "the previous model", 18),
		  "the previous .om was damaged");
	free(s);
	free(om);
}

/* Killed while it writes, gearc leaves nothing: the file being written
 * has no name until it is complete (O_TMPFILE). */
Test(robust, sigkill_mid_write_leaves_nothing, .timeout = 300)
{
	char *d = temp_dir();
	pid_t pid = start_big_compile(d, false);
	struct timespec ms = { 0, 1000000 };
	long size = -1;
	for (int i = 0; i < 120000 && size <= 0; i++) {
		size = unnamed_file_size(pid, d);
		if (size <= 0)
			nanosleep(&ms, NULL);
	}
	cr_assert_gt(size, 0, "gearc never started writing an unnamed file");
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st), "gearc finished before it was killed; "
				   "the test needs a bigger model");
	expect_old_model(d);
	cr_expect_eq(count_prefixed(d, ".out", NULL), 0,
		     "a temporary file was left");
	remove_tree(d);
	free(d);
}

/* Where there is no O_TMPFILE the named temporary file is written; a
 * SIGTERM (or SIGINT, SIGHUP) removes it, and gearc dies of the signal. */
Test(robust, sigterm_mid_write_removes_the_temporary_file, .timeout = 300)
{
	char *d = temp_dir(), *tmp = NULL;
	pid_t pid = start_big_compile(d, true);
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 120000; i++) {
		if (count_prefixed(d, ".out.om.tmp.", &tmp) && file_size(tmp) > 0)
			break;
		free(tmp);
		tmp = NULL;
		nanosleep(&ms, NULL);
	}
	cr_assert(tmp, "gearc never started writing");
	kill(pid, SIGTERM);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
		  "gearc did not die of SIGTERM (status %#x)", st);
	expect_old_model(d);
	cr_expect_eq(count_prefixed(d, ".out.om.tmp.", NULL), 0,
		     "the temporary file is still there");
	free(tmp);
	remove_tree(d);
	free(d);
}

/* A PID that no process has (any more). */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static void make_temp(const char *d, const char *fmt, long pid, time_t age)
{
	char name[128];
	snprintf(name, sizeof(name), fmt, pid);
	char *p = path_in(d, name);
	write_file(p, "partial", 7);
	struct timespec t[2] = { { time(NULL) - age, 0 },
				 { time(NULL) - age, 0 } };
	cr_assert_eq(utimensat(AT_FDCWD, p, t, 0), 0);
	free(p);
}

/* A compile starts by removing the temporary files that killed compiles
 * left in its output directory, for any output name: those of dead PIDs
 * not modified for a minute (a live writer elsewhere keeps its file
 * fresh). */
Test(robust, stale_temporary_files_are_removed)
{
	char *d = temp_dir(), oarg[600];
	long dead = dead_pid();
	make_temp(d, ".other.om.tmp.%ld.0", dead, 3600);	/* removed */
	make_temp(d, ".out.om.tmp.%ld.7", dead, 3600);	/* removed */
	make_temp(d, ".fresh.om.tmp.%ld.0", dead, 0);	/* kept: recent */
	make_temp(d, ".live.om.tmp.%ld.0", (long)getpid(), 3600); /* kept */
	make_temp(d, ".notours.tmp.%ld.0", dead, 3600); /* kept: no .om */
	snprintf(oarg, sizeof(oarg), "--output=%s/out", d);
	Run r = run_gearc("--model=tests/fixtures/bad_cycle.onnx", oarg);
	cr_expect_eq(r.status, 1, "%s", r.err); /* even a failed compile */
	run_free(&r);
	cr_expect_eq(count_prefixed(d, ".other.", NULL), 0);
	cr_expect_eq(count_prefixed(d, ".out.", NULL), 0);
	cr_expect_eq(count_prefixed(d, ".fresh.", NULL), 1);
	cr_expect_eq(count_prefixed(d, ".live.", NULL), 1);
	cr_expect_eq(count_prefixed(d, ".notours.", NULL), 1);
	remove_tree(d);
	free(d);
}

/* Compiles demo_cnn from working directory cwd, naming the model and the
 * output by the given (relative or absolute) paths; returns the bytes of
 * the .om, found at path. */
static char *compile_from(const char *cwd, const char *model, const char *out,
			  const char *path, size_t *n)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && '%s' --model='%s' --input_shape=x:-1,3,32,32 "
		 "--dynamic_batch_size=1,2,4 --output='%s' -j %d",
		 cwd, gearc_bin(), model, out, (int)(strlen(cwd) % 2) + 1);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	char *s = read_file(path, n);
	cr_assert(s, "no %s", path);
	return s;
}

Test(robust, same_bytes_across_directories_and_jobs)
{
	char here[1024];
	cr_assert(getcwd(here, sizeof(here)));
	char *d = temp_dir(), *sub = path_in(d, "sub"), *model, *out1, *out2;
	cr_assert_eq(mkdir(sub, 0755), 0);
	model = path_in(sub, "demo_cnn.onnx");
	copy_file("tests/fixtures/demo_cnn.onnx", model);
	out1 = path_in(d, "a.om");
	out2 = path_in(sub, "b.om");
	size_t n1, n2;
	/* absolute paths from the repo, relative ones from the copy's dir */
	char *bin = realpath(gearc_bin(), NULL);
	setenv("GEARC", bin, 1);
	char *a = compile_from(here, model, out1, out1, &n1);
	char *b = compile_from(sub, "demo_cnn.onnx", "b.om", out2, &n2);
	cr_expect_eq(n1, n2);
	cr_expect(n1 == n2 && !memcmp(a, b, n1),
		  "the .om depends on the working directory or -j");
	free(a);
	free(b);
	free(bin);
	free(model);
	free(out1);
	free(out2);
	free(sub);
	remove_tree(d);
	free(d);
}
