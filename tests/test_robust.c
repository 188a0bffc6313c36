/* tests/test_robust.c - crash-safe and reproducible output. */
#include <dirent.h>
#include <signal.h>
#include <time.h>

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

Test(robust, sigkill_mid_write_keeps_the_old_file, .timeout = 300)
{
	char *d = temp_dir(), *model = path_in(d, "big_external.onnx");
	char *bin = path_in(d, "big.bin"), *om = path_in(d, "out.om");
	copy_file("tests/fixtures/big_external.onnx", model);
	int fd = open(bin, O_WRONLY | O_CREAT, 0644);
	cr_assert(fd >= 0 && ftruncate(fd, 256L << 20) == 0); /* sparse */
	close(fd);
	write_file(om, "the previous model", 18);

	char marg[600], oarg[600];
	snprintf(marg, sizeof(marg), "--model=%s", model);
	snprintf(oarg, sizeof(oarg), "--output=%s/out", d);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 1);
		dup2(nul, 2);
		execl(gearc_bin(), gearc_bin(), marg, oarg, (char *)NULL);
		_exit(127);
	}
	/* Wait until the temporary file has some bytes, then kill. */
	char *tmp = NULL;
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 120000; i++) {
		if (count_prefixed(d, ".out.om.tmp.", &tmp) && file_size(tmp) > 0)
			break;
		free(tmp);
		tmp = NULL;
		nanosleep(&ms, NULL);
	}
	cr_assert(tmp, "gearc never started writing");
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st), "gearc finished before it was killed; "
				   "the test needs a bigger model");

	size_t n;
	char *s = read_file(om, &n);
	cr_expect(s && n == 18 && !memcmp(s, "the previous model", 18),
		  "the previous .om was damaged");
	free(s);
	cr_expect_eq(count_prefixed(d, ".out.om.tmp.", NULL), 1);

	/* The next successful run to the same path cleans up after it. */
	Run r = run_gearc("--model=tests/fixtures/demo_cnn.onnx",
			  "--input_shape=x:1,3,32,32", oarg);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	cr_expect_eq(count_prefixed(d, ".out.om.tmp.", NULL), 0,
		     "the stale temporary file is still there");
	free(tmp);
	free(model);
	free(bin);
	free(om);
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
