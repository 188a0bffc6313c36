/*
 * tests/test_cli_out.c - what gearc writes (issue 25): compile's, export's
 * and run's outputs replace only regular files and their temporary files
 * are created exclusively (a planted symbolic link is never followed);
 * the directory an output goes in is created one level deep, as mkdir
 * does.  FIFOs, devices and links are made at test time; the device is
 * made with mknod in the test's own directory (never /dev/null), and only
 * when the tests run as root.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cli/npy.h"
#include "testrun.h"

/* A gearc that waited on a FIFO would hang, not fail: the alarm ends it. */
#define OUT_TIMEOUT 60

static Run run_timed(const char *const *args)
{
	alarm(OUT_TIMEOUT / 2); /* inherited through fork and exec */
	Run r = run_gearcv(args);
	alarm(0);
	cr_expect_neq(r.status, 128 + SIGALRM, "gearc hung: %s", r.err);
	return r;
}

#define RUN(...) run_timed((const char *const[]){ __VA_ARGS__, NULL })

/* "NAME=VALUE", malloc'd. */
static char *kv(const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *s = malloc(n);
	snprintf(s, n, "%s=%s", name, value);
	return s;
}

/* dir/two.om: two_inputs.onnx with two gears (a and b [1,3,8,8] and
 * [2,3,16,16]). */
static char *compile_two(const char *dir)
{
	char *out = path_in(dir, "two"), *o = kv("--output", out);
	Run r = RUN("--model=tests/fixtures/two_inputs.onnx",
		    "--input_shape=a:-1,3,-1,-1;b:-1,3,-1,-1",
		    "--dynamic_dims=1,8,8,1,8,8;2,16,16,2,16,16", o, "-q");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(out), free(o);
	return path_in(dir, "two.om");
}

static mode_t lmode(const char *path)
{
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0, "%s is gone", path);
	return st.st_mode;
}

/* The names in dir, sorted, space-separated ("" for none). */
static char *listing(const char *dir)
{
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "ls -A %s | tr '\\n' ' '", dir);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	char *s = calloc(1, 4096);
	size_t n = fread(s, 1, 4095, p);
	s[n] = 0;
	pclose(p);
	return s;
}

static void expect_listing(const char *dir, const char *want)
{
	char *s = listing(dir);
	cr_expect_str_eq(s, want, "%s holds '%s', expected '%s'", dir, s,
			 want);
	free(s);
}

/* ---- item 11: only a regular file is replaced ------------------------- */

Test(cli_out, compile_output_refuses_a_fifo, .timeout = OUT_TIMEOUT)
{
	char *d = temp_dir(), *fifo = path_in(d, "pipe.om");
	char *out = path_in(d, "pipe"), *o = kv("--output", out);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	Run r = RUN("--model=tests/fixtures/two_inputs.onnx",
		    "--input_shape=a:1,3,8,8;b:1,3,8,8", o);
	expect_error(&r, 1, "pipe.om': is a FIFO; gearc replaces only a "
			    "regular file");
	run_free(&r);
	cr_expect(S_ISFIFO(lmode(fifo)), "the FIFO was replaced");
	expect_listing(d, "pipe.om ");
	remove_tree(d);
	free(d), free(fifo), free(out), free(o);
}

/* Export's --output, and its .data file, onto a character device, a FIFO,
 * a symbolic link and a directory named as a file. */
Test(cli_out, export_output_refuses_what_is_not_a_regular_file,
     .timeout = OUT_TIMEOUT)
{
	char *d = temp_dir(), *om = compile_two(d);
	char *fifo = path_in(d, "pipe.onnx"), *link = path_in(d, "link.onnx");
	char *keep = path_in(d, "keep.onnx"), *o = kv("--output", fifo);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	Run r = RUN("export", om, "--gear=0", o);
	expect_error(&r, 1, "--output '");
	cr_expect(strstr(r.err, "pipe.onnx': is a FIFO; gearc replaces only "
				"a regular file"), "%s", r.err);
	run_free(&r);
	cr_expect(S_ISFIFO(lmode(fifo)));
	free(o);

	/* the data file next to a model that may be written */
	char *model = path_in(d, "m.onnx"), *data = path_in(d, "m.onnx.data");
	cr_assert_eq(mkfifo(data, 0644), 0);
	o = kv("--output", model);
	r = RUN("export", om, "--gear=1", "--external-data", o);
	expect_error(&r, 1, "m.onnx.data': is a FIFO");
	run_free(&r);
	cr_expect(S_ISFIFO(lmode(data)));
	cr_expect_neq(access(model, F_OK), 0, "the model was written");
	free(o);

	/* a link is replaced neither by a file nor through its target */
	write_file(keep, "keep", 4);
	cr_assert_eq(symlink(keep, link), 0);
	o = kv("--output", link);
	r = RUN("export", om, "--gear=0", o);
	expect_error(&r, 1, "link.onnx': is a symbolic link");
	run_free(&r);
	cr_expect(S_ISLNK(lmode(link)));
	size_t n;
	char *s = read_file(keep, &n);
	cr_expect(n == 4 && !memcmp(s, "keep", 4));
	free(s), free(o);

	if (geteuid() == 0) { /* a device (/dev/null's numbers), here */
		char *dev = path_in(d, "null");
		cr_assert_eq(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0);
		o = kv("--output", dev);
		r = RUN("export", om, "--gear=0", o);
		expect_error(&r, 1, "null': is a character device; gearc "
				    "replaces only a regular file");
		run_free(&r);
		struct stat st;
		cr_expect(lstat(dev, &st) == 0 && S_ISCHR(st.st_mode) &&
			  st.st_rdev == makedev(1, 3),
			  "the device was replaced");
		free(dev), free(o);
	}
	expect_listing(d, geteuid() == 0 ? "keep.onnx link.onnx m.onnx.data "
					   "null pipe.onnx two.om "
					 : "keep.onnx link.onnx m.onnx.data "
					   "pipe.onnx two.om ");
	remove_tree(d);
	free(d), free(om), free(fifo), free(link), free(keep), free(model);
	free(data);
}

Test(cli_out, run_output_refuses_a_fifo, .timeout = OUT_TIMEOUT)
{
	char *d = temp_dir(), *om = compile_two(d);
	char *outs = path_in(d, "outs"), *fifo = path_in(outs, "out.npy");
	char *o = kv("--output-dir", outs);
	cr_assert_eq(mkdir(outs, 0755), 0);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	Run r = RUN("run", om, "--random-inputs", o, "-q");
	expect_error(&r, 1, "--output-dir '");
	cr_expect(strstr(r.err, "out.npy': is a FIFO; gearc replaces only a "
				"regular file"), "%s", r.err);
	run_free(&r);
	cr_expect(S_ISFIFO(lmode(fifo)));
	expect_listing(outs, "out.npy ");
	remove_tree(d);
	free(d), free(om), free(outs), free(fifo), free(o);
}

/* ---- item 12: temporary files are created exclusively ------------------ */

/* Runs gearc with args in a child whose PID names the temporary files:
 * before exec, a symbolic link to target is planted at every name the
 * child's first temporary file for dir/out.npy could have (the old
 * "out.npy.tmp.PID" and om_temp_open's ".out.npy.tmp.PID.0"). */
static int run_with_planted_links(const char *const *args, const char *dir,
				  const char *target)
{
	const char *argv[16] = { gearc_bin() };
	for (int i = 0; args[i]; i++)
		argv[i + 1] = args[i];
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char a[600], b[600];
		snprintf(a, sizeof(a), "%s/out.npy.tmp.%ld", dir,
			 (long)getpid());
		snprintf(b, sizeof(b), "%s/.out.npy.tmp.%ld.0", dir,
			 (long)getpid());
		if (symlink(target, a) < 0 || symlink(target, b) < 0)
			_exit(126);
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0), dup2(nul, 1), dup2(nul, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

Test(cli_out, run_temp_file_does_not_follow_a_planted_link,
     .timeout = OUT_TIMEOUT)
{
	char *d = temp_dir(), *om = compile_two(d);
	char *outs = path_in(d, "outs"), *target = path_in(d, "precious");
	char *out = path_in(outs, "out.npy"), *o = kv("--output-dir", outs);
	cr_assert_eq(mkdir(outs, 0755), 0);
	write_file(target, "precious", 8);
	int status = run_with_planted_links(
		(const char *const[]){ "run", om, "--random-inputs", o, NULL },
		outs, target);
	cr_expect_eq(status, 0, "gearc run failed");
	size_t n;
	char *s = read_file(target, &n);
	cr_expect(n == 8 && !memcmp(s, "precious", 8),
		  "the link's target was overwritten");
	free(s);
	cr_expect(S_ISREG(lmode(out)), "out.npy is not a regular file");
	Arena a = { 0 };
	Tensor *t = npy_read(&a, out);
	cr_expect(t && t->shape.rank == 4 && t->shape.dims[0] == 1, "%s",
		  last_error());
	arena_release(&a);
	remove_tree(d);
	free(d), free(om), free(outs), free(target), free(out), free(o);
}

/* ---- the directory of an output is made, one level ---------------------- */

Test(cli_out, output_directories_are_created_one_level,
     .timeout = OUT_TIMEOUT)
{
	char *d = temp_dir(), *om = compile_two(d);
	char *all = path_in(d, "static/"), *o = kv("--output", all);
	Run r = RUN("export", om, "--gear=all", o);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	expect_listing(all, "two_1x3x8x8_1x3x8x8.onnx "
			    "two_2x3x16x16_2x3x16x16.onnx ");
	free(o);

	/* one gear into PATH/ (a directory by its '/') */
	char *one = path_in(d, "one/");
	o = kv("--output", one);
	r = RUN("export", om, "--gear=1", o);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	expect_listing(one, "two_2x3x16x16_2x3x16x16.onnx ");
	free(o);

	char *outs = path_in(d, "outs");
	o = kv("--output-dir", outs);
	r = RUN("run", om, "--random-inputs", "-q", o);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	expect_listing(outs, "out.npy ");
	free(o);

	/* a missing parent is an error, and nothing is made */
	char *deep = path_in(d, "no/such");
	o = kv("--output", deep);
	r = RUN("export", om, "--gear=all", o);
	expect_error(&r, 1, "no/such': cannot create the directory: No such "
			    "file or directory");
	run_free(&r);
	free(o);
	o = kv("--output-dir", deep);
	r = RUN("run", om, "--random-inputs", "-q", o);
	expect_error(&r, 1, "--output-dir '");
	cr_expect(strstr(r.err, "no/such': cannot create the directory"), "%s",
		  r.err);
	run_free(&r);
	free(o);

	/* nor by an export refused before it writes */
	char *gone = path_in(d, "gone");
	o = kv("--output", gone);
	r = RUN("export", om, "--gear=9", o);
	expect_error(&r, 1, "--gear=9: ");
	run_free(&r);
	free(o);
	expect_listing(d, "one outs static two.om ");
	remove_tree(d);
	free(d), free(om), free(all), free(one), free(outs), free(deep);
	free(gone);
}

/* --output=-, --check and the null device compile and write nothing:
 * never "-.om", "NAME.om" beside a device or FIFO (/dev/null.om). */
Test(cli_out, compile_that_writes_nothing, .timeout = OUT_TIMEOUT)
{
	char *d = temp_dir(), *fifo = path_in(d, "pipe");
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	const char *m = "--model=tests/fixtures/demo_cnn.onnx",
		   *s = "--input_shape=x:1,3,32,32";
	cr_assert_neq(access("-.om", F_OK), 0, "./-.om is here already");
	Run r = RUN(m, s, "--output=-");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "gearc: compiled tests/fixtures/demo_cnn.onnx, "
				"nothing written (--output=-): static mode, 0 "
				"gears, "), "%s", r.err);
	cr_expect_neq(access("-.om", F_OK), 0, "./-.om was written");
	run_free(&r);
	r = RUN(m, s, "--check");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "nothing written (--check): "), "%s", r.err);
	run_free(&r);
	r = RUN(m, s, "--check", "-q");
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.err);
	run_free(&r);
	/* a model that fails still fails */
	r = RUN("--model=tests/fixtures/bad_cycle.onnx", "--check");
	cr_expect_eq(r.status, 1, "%s", r.err);
	run_free(&r);
	r = RUN(m, s, "--check", "--output=x");
	expect_error(&r, 2, "--check writes nothing: give it without --output");
	run_free(&r);
	r = RUN(m, s);
	expect_error(&r, 2, "--output is required");
	run_free(&r);
	char *o = kv("--output", fifo);
	r = RUN(m, s, o);
	expect_error(&r, 2, "pipe' is not a regular file; expected a file "
			    "name for the .om");
	run_free(&r);
	free(o);
	if (geteuid() == 0) { /* a device of /dev/null's numbers, here */
		char *dev = path_in(d, "null");
		cr_assert_eq(mknod(dev, S_IFCHR | 0666, makedev(1, 3)), 0);
		o = kv("--output", dev);
		r = RUN(m, s, o);
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.err, "nothing written (--output="), "%s",
			  r.err);
		run_free(&r);
		free(dev), free(o);
	}
	expect_listing(d, geteuid() == 0 ? "null pipe " : "pipe ");
	remove_tree(d);
	free(d), free(fifo);
}
