/*
 * tests/test_cli_small.c - small things a user meets: the root graph
 * called root in every file (the model's graph's name kept as the
 * source's), the source model's SHA-256 in the .om, ...
 */
#include <json-c/json.h>

#include "omedit.h"

/* Whether p[0..n) holds the k bytes of s. */
static bool holds(const char *p, size_t n, const char *s, size_t k)
{
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(p + i, s, k))
			return true;
	return false;
}

static json_object *dump_json(const char *om)
{
	Run r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "%s", r.err);
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j, "not JSON: %s", r.out);
	run_free(&r);
	return j;
}

static json_object *at(json_object *o, const char *k)
{
	json_object *v = NULL;
	cr_assert(json_object_object_get_ex(o, k, &v), "no key '%s'", k);
	return v;
}

/* Static and gear compiles alike: graphs[0] is "root"; the model's own
 * graph's name is source.graph, and export names its graphs so. */
Test(cli_small, the_root_graph_is_root)
{
	char *dir = temp_dir();
	char *st = compile_fixture(dir, "s", "demo_cnn",
				   (const char *[]){ "--input_shape=x:1,3,32,32",
						     NULL });
	char *ge = compile_fixture(dir, "g", "demo_cnn",
				   (const char *[]){ "--input_shape=x:-1,3,32,32",
						     "--dynamic_batch_size=1,2",
						     NULL });
	const char *files[] = { st, ge };
	for (int i = 0; i < 2; i++) {
		json_object *j = dump_json(files[i]);
		json_object *g0 = json_object_array_get_idx(at(j, "graphs"), 0);
		cr_expect_str_eq(json_object_get_string(at(g0, "name")), "root");
		cr_expect_str_eq(json_object_get_string(at(g0, "role")), "root");
		cr_expect_str_eq(json_object_get_string(at(at(j, "source"),
							   "graph")),
				 "demo_cnn");
		json_object_put(j);
		Run r = run_gearc("dump", files[i]);
		cr_expect(strstr(r.out, "\nsource:    demo_cnn.onnx (graph "
					"demo_cnn, ir_version 8, "), "%s", r.out);
		cr_expect(strstr(r.out, "\ngraph root: "), "%s", r.out);
		run_free(&r);
		r = run_gearc("dump", "--graph=root", files[i]);
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(!strncmp(r.out, "\ngraph root: ", 13), "%s", r.out);
		run_free(&r);
	}
	char *onnx = path_in(dir, "g0.onnx"), of[700];
	snprintf(of, sizeof(of), "--output=%s", onnx);
	Run r = run_gearc("export", ge, "--gear=0", of);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	size_t n;
	char *bytes = read_file(onnx, &n);
	cr_assert(bytes);
	/* GraphProto.name (field 2) inside ModelProto.graph (field 7) */
	cr_expect(holds(bytes, n, "\x12\x08" "demo_cnn", 10),
		  "the exported graph is not named demo_cnn");
	free(bytes);
	remove_tree(dir);
	free(dir), free(st), free(ge), free(onnx);
}

/* The .om keeps the ONNX file's SHA-256 (sha256sum's digits): dump
 * shows it (text and JSON) and export passes it on; a file written
 * before it was kept still reads (null), and one whose digest is no
 * digest is refused. */
Test(cli_small, the_source_sha256)
{
	size_t n;
	char *onnx = read_file("tests/fixtures/demo_cnn.onnx", &n), want[65];
	cr_assert(onnx);
	sha256_hex(onnx, n, want);
	free(onnx);
	Fx x = fx_compile("demo_cnn.onnx", "x:1,3,32,32", NULL);
	cr_expect_str_eq(x.f.model->source->sha256, want);
	Run r = run_gearc("dump", x.om);
	char line[100];
	snprintf(line, sizeof(line), "\nsha256:    %s\n", want);
	cr_expect(strstr(r.out, line), "%s", r.out);
	run_free(&r);
	json_object *j = dump_json(x.om);
	cr_expect_str_eq(json_object_get_string(at(at(j, "source"), "sha256")),
			 want);
	json_object_put(j);
	char *e = path_in(x.dir, "e.onnx"), of[700];
	snprintf(of, sizeof(of), "--output=%s", e);
	r = run_gearc("export", x.om, of);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	char *bytes = read_file(e, &n);
	cr_expect(bytes && holds(bytes, n, "gearc.source_sha256", 19) &&
		  holds(bytes, n, want, 64));
	free(bytes);
	/* as written before: no digest */
	char *keep = x.f.model->source->sha256;
	x.f.model->source->sha256 = NULL;
	omedit_write(x.data, x.f.model, x.om);
	r = run_gearc("dump", x.om);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.out, "sha256:"), "%s", r.out);
	run_free(&r);
	j = dump_json(x.om);
	cr_expect(json_object_is_type(at(at(j, "source"), "sha256"),
				      json_type_null));
	json_object_put(j);
	r = run_gearc("run", x.om, "--random-inputs", "-q");
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	/* not a digest */
	x.f.model->source->sha256 = "F419";
	omedit_write(x.data, x.f.model, x.om);
	r = run_gearc("verify", x.om);
	expect_error(&r, 1, "source sha256 is not 64 lower-case hex digits");
	run_free(&r);
	x.f.model->source->sha256 = keep;
	free(e);
	fx_free(&x);
}
