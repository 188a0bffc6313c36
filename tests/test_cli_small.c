/*
 * tests/test_cli_small.c - small things a user meets: the root graph
 * called root in every file (the model's graph's name kept as the
 * source's), ...
 */
#include <json-c/json.h>

#include "testrun.h"

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
