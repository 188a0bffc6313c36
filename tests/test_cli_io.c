/*
 * tests/test_cli_io.c - what gearc reads: only the model's directory, only
 * regular files, safely when they change, and names shown as valid UTF-8
 * (issue 19).  Symbolic links and FIFOs are made at test time.
 */
#include <json-c/json.h>
#include <signal.h>

#include "compiler/util.h"
#include "serializer/omimpl.h"
#include "testrun.h"

#include <sys/resource.h>

/* Every test here would hang, not fail, if a FIFO blocked: Criterion's
 * timeout ends the test, and the alarm the gearc it runs. */
#define IO_TIMEOUT 60

static void copy_file(const char *from, const char *to)
{
	size_t n = 0;
	char *s = read_file(from, &n);
	cr_assert(s, "cannot read %s", from);
	write_file(to, s, n);
	free(s);
}

/* Runs gearc with an alarm, so that a gearc blocked on a FIFO dies. */
static Run run_timed(const char *const *args)
{
	alarm(IO_TIMEOUT / 2); /* inherited through fork and exec */
	Run r = run_gearcv(args);
	alarm(0);
	cr_expect_neq(r.status, 128 + SIGALRM, "gearc hung: %s", r.err);
	return r;
}

#define RUN(...) run_timed((const char *const[]){ __VA_ARGS__, NULL })

static bool valid_utf8(const char *s, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_char_len((const unsigned char *)s + i, n - i)))
			return false;
	return true;
}

/* ---- item 1: no byte from outside the model's directory ----------------- */

/* DIR with external_data.onnx; its data file is left to the caller. */
static char *external_model_dir(char **model)
{
	char *d = temp_dir();
	*model = path_in(d, "external_data.onnx");
	copy_file("tests/fixtures/external_data.onnx", *model);
	return d;
}

static void compile_expect(const char *model, const char *d, int status,
			   const char *frag)
{
	char marg[600], oarg[600];
	snprintf(marg, sizeof(marg), "--model=%s", model);
	snprintf(oarg, sizeof(oarg), "--output=%s/out", d);
	Run r = RUN(marg, "--input_shape=x:2,16", oarg);
	if (status)
		expect_error(&r, status, frag);
	else
		cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
}

Test(cli_io, external_data_symlink_to_a_file_outside, .timeout = IO_TIMEOUT)
{
	char *model, *d = external_model_dir(&model), *out = temp_dir();
	char *real = path_in(out, "secret.bin"), *bin;
	copy_file("tests/fixtures/external_data.bin", real);
	bin = path_in(d, "external_data.bin");
	cr_assert_eq(symlink(real, bin), 0);
	compile_expect(model, d, 1,
		       "tensor 'W': external data file '");
	compile_expect(model, d, 1,
		       "external_data.bin': is a symbolic link, which could "
		       "lead out of the model's directory");
	/* the same bytes in the model's directory compile */
	unlink(bin);
	copy_file(real, bin);
	compile_expect(model, d, 0, NULL);
	remove_tree(d);
	remove_tree(out);
	free(d), free(out), free(model), free(real), free(bin);
}

/* The model with its location "external_data.bin" renamed "sub/xtern" +
 * "al_d.bin" (same length, so the protobuf stays valid). */
static void model_in_sub(const char *model)
{
	size_t n;
	char *s = read_file("tests/fixtures/external_data.onnx", &n);
	cr_assert(s);
	int hits = 0;
	for (size_t i = 0; i + 17 <= n; i++)
		if (!memcmp(s + i, "external_data.bin", 17)) {
			memcpy(s + i, "sub/xternal_d.bin", 17);
			hits++;
		}
	cr_assert_eq(hits, 2);
	write_file(model, s, n);
	free(s);
}

Test(cli_io, external_data_in_a_symlinked_directory, .timeout = IO_TIMEOUT)
{
	char *d = temp_dir(), *out = temp_dir(), *model = path_in(d, "m.onnx");
	char *sub = path_in(d, "sub"), *outbin = path_in(out, "xternal_d.bin");
	model_in_sub(model);
	copy_file("tests/fixtures/external_data.bin", outbin);
	cr_assert_eq(symlink(out, sub), 0);
	compile_expect(model, d, 1,
		       "external data file '");
	compile_expect(model, d, 1,
		       "sub/xternal_d.bin': 'sub' is a symbolic link, which "
		       "could lead out of the model's directory");
	/* a real directory is fine */
	unlink(sub);
	cr_assert_eq(mkdir(sub, 0755), 0);
	char *inbin = path_in(sub, "xternal_d.bin");
	copy_file(outbin, inbin);
	compile_expect(model, d, 0, NULL);
	remove_tree(d);
	remove_tree(out);
	free(d), free(out), free(model), free(sub), free(outbin), free(inbin);
}

/* ---- item 2: FIFOs are refused, never waited on ------------------------ */

Test(cli_io, fifos_are_refused, .timeout = IO_TIMEOUT)
{
	char *d = temp_dir(), *fifo = path_in(d, "pipe.om"), arg[600];
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	snprintf(arg, sizeof(arg), "--model=%s", fifo);
	Run r = RUN(arg, "--output=/tmp/gearc-never-written");
	expect_error(&r, 1, "pipe.om': is a FIFO, expected a regular file");
	run_free(&r);
	r = RUN("dump", fifo);
	expect_error(&r, 1, "pipe.om': is a FIFO, expected a regular file");
	run_free(&r);
	r = RUN("verify", fifo);
	expect_error(&r, 1, "pipe.om': is a FIFO, expected a regular file");
	run_free(&r);
	r = RUN("dump", "/dev/null");
	expect_error(&r, 1, "'/dev/null': is a character device, expected a "
			    "regular file");
	run_free(&r);
	remove_tree(d);
	free(d), free(fifo);
}

Test(cli_io, external_data_fifo_is_refused, .timeout = IO_TIMEOUT)
{
	char *model, *d = external_model_dir(&model);
	char *bin = path_in(d, "external_data.bin");
	cr_assert_eq(mkfifo(bin, 0644), 0);
	compile_expect(model, d, 1,
		       "external_data.bin': is a FIFO, expected a regular "
		       "file");
	remove_tree(d);
	free(d), free(model), free(bin);
}

/* ---- item 5: a .om cut while it is used -------------------------------- */

/* dump and verify read the file into memory: truncating it after om_open
 * (while they work on it) cannot fault.  With a mapping, reading the
 * bytes below would be SIGBUS. */
Test(cli_io, om_truncated_after_open, .timeout = IO_TIMEOUT)
{
	char *d = temp_dir(), *om = path_in(d, "m.om"), oarg[600];
	snprintf(oarg, sizeof(oarg), "--output=%s", om);
	Run r = RUN("--model=tests/fixtures/demo_cnn.onnx",
		    "--input_shape=x:-1,3,32,32", "--dynamic_batch_size=1,2",
		    oarg);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	OmFile f;
	cr_assert_eq(om_open(&f, om), 0, "%s", last_error());
	cr_assert_eq(truncate(om, 0), 0);
	uint32_t crc = crc32_update(0, f.data + OM_HEADER_SIZE,
				    f.size - OM_HEADER_SIZE);
	cr_expect_eq(crc, (uint32_t)f.data[24] | (uint32_t)f.data[25] << 8 |
				  (uint32_t)f.data[26] << 16 |
				  (uint32_t)f.data[27] << 24);
	cr_expect(f.weights && f.weights_size > 0);
	uint8_t sum = 0;
	for (uint64_t i = 0; i < f.weights_size; i++)
		sum ^= f.weights[i];
	(void)sum;
	om_close(&f);
	/* and the truncated file is an error, not a crash */
	r = RUN("verify", om);
	expect_error(&r, 1, "m.om: file is empty");
	run_free(&r);
	remove_tree(d);
	free(d), free(om);
}

/* ---- item 6: what a file can make the reader allocate ------------------- */

/* The review's case: a .om whose MODEL_DEF carries 8 million empty
 * repeated entries (16 MB) made dump and verify take 1.3 GB before they
 * failed.  Now they refuse it having read the file and little more. */
Test(cli_io, eight_million_empty_entries, .timeout = IO_TIMEOUT)
{
	char *d = temp_dir(), *om = path_in(d, "m.om"), oarg[600];
	snprintf(oarg, sizeof(oarg), "--output=%s", om);
	Run r = RUN("--model=tests/fixtures/mlp.onnx", "--input_shape=x:2,64",
		    oarg);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	size_t n;
	uint8_t *s = (uint8_t *)read_file(om, &n);
	cr_assert(s && om_get_u32(s + 28) == 2);
	enum { MANY = 8 << 20 };
	uint64_t defoff = om_get_u64(s + 72), defsz = om_get_u64(s + 80);
	uint64_t woff = om_get_u64(s + 96), wsz = om_get_u64(s + 104);
	uint64_t nd = defsz + 2 * (uint64_t)MANY, nwoff = om_align(defoff + nd);
	size_t len = (size_t)(nwoff + wsz);
	uint8_t *c = xcalloc(len, 1);
	memcpy(c, s, (size_t)(defoff + defsz));
	for (size_t i = 0; i < MANY; i++) /* Model.graphs, length 0 */
		c[defoff + defsz + 2 * i] = 0x3a;
	memcpy(c + nwoff, s + woff, (size_t)wsz);
	om_put_u64(c + 16, len);
	om_put_u64(c + 80, nd);
	om_put_u64(c + 96, nwoff);
	om_put_u32(c + 24, crc32_update(0, c + 64, len - 64));
	write_file(om, c, len);
	free(c);
	free(s);
	r = RUN("verify", om);
	expect_error(&r, 1, "MODEL_DEF would take ");
	run_free(&r);
	r = RUN("dump", "--format=json", om);
	expect_error(&r, 1, "more than 40 times its 16");
	run_free(&r);
	struct rusage ru;
	cr_assert_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
	/* the file (16 MB) and the program; it was 1.3 GB */
	cr_expect_lt(ru.ru_maxrss, 200 * 1024, "peak %ld KB", ru.ru_maxrss);
	remove_tree(d);
	free(d), free(om);
}

/* ---- item 8: names as valid UTF-8 -------------------------------------- */

/* mlp.onnx with node 'matmul' renamed ESC[2J + e-acute, tensor 'rs' renamed
 * 0xff 0xfe (bytes that are no UTF-8), and node 'reshape' given an
 * embedded NUL if nul is set. */
static void weird_mlp(const char *path, bool nul)
{
	size_t n;
	char *s = read_file("tests/fixtures/mlp.onnx", &n);
	cr_assert(s);
	struct {
		const char *from, *to;
		size_t len;
		int want;
	} subst[] = {
		{ "matmul", "\x1b[2J\xc3\xa9", 6, 1 },
		{ "\x02rs", "\x02\xff\xfe", 3, 2 },
		{ "reshape", "res\0ape", 7, nul },
	};
	for (size_t k = 0; k < ARRAY_SIZE(subst); k++) {
		int hits = 0;
		for (size_t i = 0; i + subst[k].len <= n; i++)
			if (!memcmp(s + i, subst[k].from, subst[k].len) &&
			    hits++ < subst[k].want)
				memcpy(s + i, subst[k].to, subst[k].len);
		cr_assert_geq(hits, subst[k].want, "%s", subst[k].from);
	}
	write_file(path, s, n);
	free(s);
}

/* The model file's name is no UTF-8 either (it is recorded in the .om),
 * and the .om's name holds ESC[2J. */
Test(cli_io, names_are_shown_as_valid_utf8, .timeout = IO_TIMEOUT)
{
	char *d = temp_dir(), *model = path_in(d, "m\xff.onnx");
	char *om = path_in(d, "o\x1b[2J.om"), marg[600], oarg[600];
	weird_mlp(model, false);
	snprintf(marg, sizeof(marg), "--model=%s", model);
	snprintf(oarg, sizeof(oarg), "--output=%s", om);
	Run r = RUN(marg, oarg, "--input_shape=x:2,64");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);

	r = RUN("dump", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(valid_utf8(r.out, r.nout), "text dump is not UTF-8");
	cr_expect(!strchr(r.out, '\x1b'), "text dump holds an ESC");
	cr_expect(strstr(r.out, "\\x1b[2J\xc3\xa9"), "%s", r.out);
	cr_expect(strstr(r.out, "\\xff\\xfe"), "%s", r.out);
	cr_expect(strstr(r.out, "o\\x1b[2J.om"), "%s", r.out);
	cr_expect(strstr(r.out, "m\\xff.onnx"), "%s", r.out);
	run_free(&r);

	r = RUN("dump", "--format=dot", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(valid_utf8(r.out, r.nout), "DOT dump is not UTF-8");
	cr_expect(!strchr(r.out, '\x1b'), "DOT dump holds an ESC");
	run_free(&r);

	r = RUN("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(valid_utf8(r.out, r.nout), "JSON dump is not UTF-8");
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j, "JSON dump does not parse");
	json_object *src, *file;
	cr_assert(json_object_object_get_ex(j, "source", &src) &&
		  json_object_object_get_ex(src, "file", &file));
	cr_expect_str_eq(json_object_get_string(file), "m\\xff.onnx");
	json_object_put(j);
	run_free(&r);

	/* the IR as --dump-after prints it */
	r = RUN(marg, oarg, "--input_shape=x:2,64", "--dump-after=specialise");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(valid_utf8(r.out, r.nout), "--dump-after is not UTF-8");
	cr_expect(!strchr(r.out, '\x1b'), "--dump-after holds an ESC");
	cr_expect(strstr(r.out, "\\xff\\xfe:float32"), "%s", r.out);
	run_free(&r);

	/* an error naming a bad name */
	r = RUN(marg, oarg, "--input_shape=\xff\xfe\x1b[2J:1,2");
	expect_error(&r, 1, "'\\xff\\xfe\\x1b[2J'");
	cr_expect(valid_utf8(r.err, strlen(r.err)), "stderr is not UTF-8");
	run_free(&r);
	remove_tree(d);
	free(d), free(model), free(om);
}

Test(cli_io, embedded_nul_in_a_name_is_an_error, .timeout = IO_TIMEOUT)
{
	char *d = temp_dir(), *model = path_in(d, "m.onnx");
	char marg[600], oarg[600];
	weird_mlp(model, true);
	snprintf(marg, sizeof(marg), "--model=%s", model);
	snprintf(oarg, sizeof(oarg), "--output=%s/o", d);
	Run r = RUN(marg, oarg, "--input_shape=x:2,64");
	expect_error(&r, 1, "field onnx.NodeProto.name holds a NUL byte");
	run_free(&r);
	remove_tree(d);
	free(d), free(model);
}
