/*
 * tests/testrun.h - run build/gearc as a user would and capture what it
 * says.  $GEARC names the binary (default build/gearc), $TESTDATA the ONNX
 * backend test data (default /usr/share/libonnx-testdata/data).
 */
#ifndef GEARC_TESTRUN_H
#define GEARC_TESTRUN_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct Run {
	int status;  /* exit status; 128+N for signal N */
	char *out;   /* stdout, NUL-terminated */
	size_t nout;
	char *err;   /* stderr, NUL-terminated */
} Run;

static inline const char *gearc_bin(void)
{
	const char *b = getenv("GEARC");
	return b && *b ? b : "build/gearc";
}

static inline const char *testdata_dir(void)
{
	const char *d = getenv("TESTDATA");
	return d && *d ? d : "/usr/share/libonnx-testdata/data";
}

static inline char *slurp_fd(int fd, size_t *n)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	lseek(fd, 0, SEEK_SET);
	for (;;) {
		if (len + 1 >= cap)
			buf = realloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = 0;
	if (n)
		*n = len;
	return buf;
}

/* Runs gearc with the NULL-terminated argument list (argv[0] added). */
static inline Run run_gearcv(const char *const *args)
{
	Run r = { 0 };
	char outp[] = "/tmp/gearc-out-XXXXXX", errp[] = "/tmp/gearc-err-XXXXXX";
	int of = mkstemp(outp), ef = mkstemp(errp);
	cr_assert(of >= 0 && ef >= 0);
	unlink(outp);
	unlink(errp);
	const char *argv[64] = { gearc_bin() };
	int n = 1;
	for (; args[n - 1]; n++) {
		cr_assert(n < 63);
		argv[n] = args[n - 1];
	}
	argv[n] = NULL;
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(of, 1);
		dup2(ef, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = slurp_fd(of, &r.nout);
	r.err = slurp_fd(ef, NULL);
	close(of);
	close(ef);
	return r;
}

#define run_gearc(...) run_gearcv((const char *const[]){ __VA_ARGS__, NULL })

static inline void run_free(Run *r)
{
	free(r->out);
	free(r->err);
}

/* Asserts gearc failed with status and one stderr line "gearc: error: "
 * containing every given fragment. */
static inline void expect_error(const Run *r, int status, const char *frag)
{
	cr_expect_eq(r->status, status, "exit %d, expected %d; stderr: %s",
		     r->status, status, r->err);
	cr_expect(!strncmp(r->err, "gearc: error: ", 14),
		  "stderr does not start with 'gearc: error: ': %s", r->err);
	const char *nl = strchr(r->err, '\n');
	cr_expect(nl && nl[1] == 0, "stderr is not one line: %s", r->err);
	cr_expect(strstr(r->err, frag), "stderr lacks '%s': %s", frag, r->err);
}

/* A fresh temporary directory for one test. */
static inline char *temp_dir(void)
{
	char *d = strdup("/tmp/gearc-test-XXXXXX");
	cr_assert(mkdtemp(d));
	return d;
}

static inline char *path_in(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* Compiles tests/fixtures/MODEL.onnx with the flags in extra[] (NULL
 * ended; NULL for none) to DIR/NAME.om, asserting success; the .om's
 * path (malloc'd). */
static inline char *compile_fixture(const char *dir, const char *name,
				    const char *model,
				    const char *const *extra)
{
	char *out = path_in(dir, name);
	char mflag[512], oflag[512];
	const char *argv[16] = { mflag, oflag, "-q" };
	int n = 3;
	snprintf(mflag, sizeof(mflag), "--model=tests/fixtures/%s.onnx", model);
	snprintf(oflag, sizeof(oflag), "--output=%s", out);
	for (; extra && *extra && n < 15; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	Run r = run_gearcv(argv);
	cr_assert_eq(r.status, 0, "compile %s: %s", model, r.err);
	run_free(&r);
	char *om = malloc(strlen(out) + 4);
	sprintf(om, "%s.om", out);
	free(out);
	return om;
}

static inline char *read_file(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	char *s = slurp_fd(fd, n);
	close(fd);
	return s;
}

static inline void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f, "cannot write %s", path);
	cr_assert_eq(fwrite(p, 1, n, f), n);
	fclose(f);
}

static inline void remove_tree(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

#endif
