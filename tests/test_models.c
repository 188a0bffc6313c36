/*
 * tests/test_models.c - models shaped like real exports (tests/gen_models.py:
 * a DBNet detector, an SVTR recognizer, a Silero-like VAD, the bench
 * recognizer, a MobileNetV3 direction classifier) compiled with the gear options a user would pass; every
 * gear's output shapes must equal the ground truth in
 * tests/fixtures/expected.json (found by running the models).
 */
#include <json-c/json.h>

#include "testrun.h"

#define FIXTURES "tests/fixtures/"

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;
	cr_assert(json_object_object_get_ex(o, key, &v), "no '%s'", key);
	return v;
}

static const char *text(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
}

/* The output of gear `gear` named name in the dump, or NULL. */
static json_object *dump_output(json_object *gear, const char *name)
{
	json_object *outs = get(gear, "outputs");
	for (size_t k = 0; k < json_object_array_length(outs); k++) {
		json_object *o = json_object_array_get_idx(outs, k);
		if (!strcmp(json_object_get_string(get(o, "name")), name))
			return o;
	}
	return NULL;
}

/* Compiles the model of expected.json's entry `key` with its args, dumps
 * the .om as JSON and compares every gear's dims and output shapes. */
static void check_model(const char *key)
{
	json_object *all = json_object_from_file(FIXTURES "expected.json");
	cr_assert(all, "cannot read " FIXTURES "expected.json");
	json_object *e = get(all, key);
	char *dir = temp_dir();
	char model[512], output[600], om[600];
	snprintf(model, sizeof(model), "--model=" FIXTURES "%s",
		 json_object_get_string(get(e, "model")));
	snprintf(output, sizeof(output), "--output=%s/m", dir);
	snprintf(om, sizeof(om), "%s/m.om", dir);

	const char *argv[16] = { model, output, "--quiet" };
	int n = 3;
	json_object *args = get(e, "args");
	for (size_t i = 0; i < json_object_array_length(args); i++) {
		cr_assert(n < 15);
		argv[n++] = json_object_get_string(
			json_object_array_get_idx(args, i));
	}
	argv[n] = NULL;
	Run r = run_gearcv(argv);
	cr_assert_eq(r.status, 0, "%s: gearc exit %d: %s", key, r.status,
		     r.err);
	run_free(&r);

	r = run_gearc("dump", "--format=json", om);
	cr_assert_eq(r.status, 0, "%s: dump: %s", key, r.err);
	json_object *j = json_tokener_parse(r.out);
	cr_assert(j, "%s: dump is not JSON: %s", key, r.out);
	run_free(&r);

	json_object *want = get(e, "gears"), *got = get(j, "gears");
	size_t ngears = json_object_array_length(want);
	cr_assert_eq(json_object_get_int(get(j, "gear_count")), (int)ngears,
		     "%s: gear_count", key);
	cr_assert_eq(json_object_array_length(got), ngears, "%s: gears", key);
	for (size_t g = 0; g < ngears; g++) {
		json_object *wg = json_object_array_get_idx(want, g);
		json_object *gg = json_object_array_get_idx(got, g);
		char dims[256];
		snprintf(dims, sizeof(dims), "%s", text(get(gg, "dims")));
		cr_expect_str_eq(dims, text(get(wg, "dims")),
				 "%s gear %zu: dims %s, expected %s", key, g,
				 dims, text(get(wg, "dims")));
		json_object_object_foreach(get(wg, "outputs"), name, shape)
		{
			json_object *o = dump_output(gg, name);
			cr_expect(o, "%s gear %zu: no output '%s' in the dump",
				  key, g, name);
			if (!o)
				continue;
			char have[256];
			snprintf(have, sizeof(have), "%s",
				 text(get(o, "shape")));
			cr_expect_str_eq(have, text(shape),
					 "%s gear %zu: output '%s' is %s, "
					 "expected %s",
					 key, g, name, have, text(shape));
		}
	}
	json_object_put(j);
	json_object_put(all);
	remove_tree(dir);
	free(dir);
}

Test(models, det)
{
	check_model("det");
}

Test(models, rec)
{
	check_model("rec");
}

Test(models, vad)
{
	check_model("vad");
}

Test(models, vad_batch)
{
	check_model("vad_batch");
}

Test(models, bench_rec)
{
	check_model("bench_rec");
}

Test(models, cls)
{
	check_model("cls");
}
