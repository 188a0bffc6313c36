/*
 * tests/test_runtime_ort.c - every gear of every real-export fixture run
 * by libgearrt against ONNX Runtime's outputs for the source model
 * (tests/fixtures/ort/, made by tests/check_export_ort.mjs --write; its
 * index.json gives each case's model, compile options and gears).
 * Tolerance: rtol 1e-4, atol 1e-5.  The session's arena starts as 0xff
 * bytes (NaN floats), so a plan that overlaps live tensors shows.
 */
#include <json-c/json.h>

#include "cli/npy.h"
#include "runtime/rt.h"
#include "tests/tensorcmp.h"
#include "testrun.h"

static const char *ORT = "tests/fixtures/ort";

/* "input_" / "output_" + NAME escaped as gearc run writes it. */
static char *case_npy(const char *kase, int gear, const char *kind,
		      const char *name)
{
	char esc[512], *q = esc;
	for (const unsigned char *s = (const unsigned char *)name;
	     *s && q < esc + sizeof(esc) - 4; s++) {
		bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			  (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' ||
			  *s == '-';
		q += ok ? sprintf(q, "%c", *s) : sprintf(q, "%%%02x", *s);
	}
	*q = 0;
	char *p = malloc(strlen(ORT) + strlen(kase) + strlen(esc) + 64);
	sprintf(p, "%s/%s/gear%d/%s_%s.npy", ORT, kase, gear, kind, esc);
	return p;
}

static char *compile_case(const char *dir, const char *kase, json_object *c)
{
	const char *argv[16];
	char model[512], out[512];
	int n = 0;
	json_object *args = json_object_object_get(c, "args");
	snprintf(model, sizeof(model), "--model=tests/fixtures/%s",
		 json_object_get_string(json_object_object_get(c, "model")));
	snprintf(out, sizeof(out), "--output=%s/%s", dir, kase);
	argv[n++] = model;
	for (size_t i = 0; i < json_object_array_length(args) && n < 12; i++)
		argv[n++] = json_object_get_string(
			json_object_array_get_idx(args, i));
	argv[n++] = out;
	argv[n++] = "-q";
	argv[n] = NULL;
	Run r = run_gearcv(argv);
	cr_assert_eq(r.status, 0, "%s: %s", kase, r.err);
	run_free(&r);
	char *om = malloc(strlen(out) + 8);
	sprintf(om, "%s.om", out + 9);
	return om;
}

static gearrt_tensor api_tensor(const Tensor *t, const char *name)
{
	gearrt_tensor a = { .name = name, .dtype = t->dtype,
			    .rank = t->shape.rank, .data = (void *)t->data,
			    .size = t->nbytes };
	memcpy(a.dims, t->shape.dims, (size_t)t->shape.rank * sizeof(int64_t));
	return a;
}

/* Runs gear g of the case on its inputs; compares every output. */
static void check_gear(const char *kase, gearrt_model *m, gearrt_session *s,
		       int g, int *checked)
{
	Arena a = { 0 };
	size_t nin = gearrt_input_count(m), nout = gearrt_output_count(m);
	gearrt_tensor in[16], out[16];
	cr_assert(nin <= 16 && nout <= 16);
	for (size_t i = 0; i < nin; i++) {
		gearrt_tensor info;
		gearrt_input_info(m, i, &info);
		char *p = case_npy(kase, g, "input", info.name);
		Tensor *t = npy_read(&a, p);
		cr_assert(t, "%s gear %d: %s", kase, g, last_error());
		in[i] = api_tensor(t, info.name);
		free(p);
	}
	memset(out, 0, sizeof(out));
	memset(rt_session_ctx(s)->arena, 0xff, (size_t)m->arena_bytes);
	cr_assert_eq(gearrt_run(s, in, nin, out, nout), GEARRT_OK,
		     "%s gear %d: %s", kase, g, gearrt_last_error());
	for (size_t i = 0; i < nout; i++) {
		char *p = case_npy(kase, g, "output", out[i].name);
		Tensor *want = npy_read(&a, p);
		cr_assert(want, "%s gear %d: %s", kase, g, last_error());
		Tensor got = { .dtype = out[i].dtype,
			       .shape = shape_of(out[i].rank, out[i].dims),
			       .data = out[i].data, .nbytes = out[i].size };
		cr_expect_eq(tensor_close(&got, want, 1e-4, 1e-5), 0,
			     "%s gear %d output '%s': %s", kase, g, out[i].name,
			     last_error());
		(*checked)++;
		free(p);
	}
	arena_release(&a);
}

Test(runtime_ort, every_gear_of_every_fixture_matches_onnxruntime,
     .timeout = 600)
{
	char *dir = temp_dir(), idx[256];
	snprintf(idx, sizeof(idx), "%s/index.json", ORT);
	json_object *root = json_object_from_file(idx);
	cr_assert(root, "cannot read %s", idx);
	int cases = 0, checked = 0;
	json_object_object_foreach(root, kase, c) {
		char *om = compile_case(dir, kase, c);
		gearrt_model *m;
		gearrt_session *s;
		cr_assert_eq(gearrt_model_open(om, &m), GEARRT_OK, "%s: %s",
			     kase, gearrt_last_error());
		cr_assert_eq(gearrt_session_create(m, NULL, &s), GEARRT_OK);
		size_t ng = json_object_array_length(
			json_object_object_get(c, "gears"));
		for (size_t g = 0; g < ng; g++)
			check_gear(kase, m, s, (int)g, &checked);
		gearrt_session_destroy(s);
		gearrt_model_close(m);
		free(om);
		cases++;
	}
	cr_expect_geq(cases, 10);
	cr_expect_geq(checked, 40);
	json_object_put(root);
	remove_tree(dir);
	free(dir);
}
