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

/* ---- bash completion ------------------------------------------------------ */

/* The value of `NAME="..."` in the completion script s, malloc'd. */
static char *script_list(const char *s, const char *name)
{
	char key[64];
	snprintf(key, sizeof(key), "\n%s=\"", name);
	const char *p = strstr(s, key);
	cr_assert(p, "contrib/gearc.bash has no %s", name);
	p += strlen(key);
	const char *q = strchr(p, '"');
	cr_assert(q);
	char *v = malloc((size_t)(q - p) + 3);
	snprintf(v, (size_t)(q - p) + 3, " %.*s ", (int)(q - p), p);
	for (char *c = v; *c; c++)
		if (*c == '\n')
			*c = ' ';
	return v;
}

/* Whether list (" a --b= c ") has flag f, with or without '='. */
static bool lists(const char *list, const char *f)
{
	char a[80], b[80];
	snprintf(a, sizeof(a), " %s ", f);
	snprintf(b, sizeof(b), " %s= ", f);
	return strstr(list, a) || strstr(list, b);
}

/* Expects every flag the option lines of help ("  -j N, --jobs=N  ...")
 * name in list: the tokens before the description that start with '-'.
 * How many there were. */
static int each_flag(const char *help, const char *cmd, const char *list)
{
	int n = 0;
	for (const char *l = help; l && *l;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "  -", 3) || l[3] == ' ')
			continue;
		const char *end = strstr(l + 2, "  "), *nl = strchr(l, '\n');
		if (!end || (nl && nl < end))
			end = nl ? nl : l + strlen(l);
		for (const char *p = l + 2; p < end;) {
			size_t k = 0;
			if (*p == '-' && (p == l + 2 || p[-1] == ' ' || p[-1] == ','))
				while (p + k < end && (p[k] == '-' || p[k] == '_' ||
						       (p[k] >= 'a' && p[k] <= 'z') ||
						       (p[k] >= 'A' && p[k] <= 'Z') ||
						       (p[k] >= '0' && p[k] <= '9')))
					k++;
			if (k > 1) {
				char f[80];
				snprintf(f, sizeof(f), "%.*s", (int)k, p);
				cr_expect(lists(list, f), "gearc %s's help has %s, "
					  "contrib/gearc.bash does not", cmd, f);
				n++;
				p += k;
			} else {
				p++;
			}
		}
	}
	return n;
}

/* The completion cannot fall behind the help: every command of `gearc
 * --help` and every flag of `gearc help CMD` is in contrib/gearc.bash. */
Test(cli_small, bash_completion_knows_every_flag_of_the_help)
{
	char *s = read_file("contrib/gearc.bash", NULL);
	cr_assert(s);
	char *cmds = script_list(s, "_gearc_commands");
	Run r = run_gearc("--help");
	const char *c = strstr(r.out, "\ncommands:\n");
	cr_assert(c, "%s", r.out);
	int ncmd = 0;
	for (c = strchr(c + 1, '\n') + 1; !strncmp(c, "  ", 2);
	     c = strchr(c, '\n') + 1) {
		char cmd[32];
		if (c[2] == ' ')
			continue; /* a description's second line */
		cr_assert_eq(sscanf(c, " %31s", cmd), 1);
		cr_expect(lists(cmds, cmd), "command %s is not in "
			  "contrib/gearc.bash", cmd);
		char var[64];
		snprintf(var, sizeof(var), "_gearc_flags_%s", cmd);
		char *list = script_list(s, var);
		Run h = run_gearc("help", cmd);
		cr_assert_eq(h.status, 0);
		int n = each_flag(h.out, cmd, list);
		cr_expect(n > 0 || !strcmp(cmd, "help"), "no flag found in "
			  "gearc help %s", cmd);
		run_free(&h);
		free(list);
		ncmd++;
	}
	cr_expect_geq(ncmd, 7);
	run_free(&r);
	free(cmds);
	free(s);
}

/* Completing in bash: a command, a flag, a flag's value. */
Test(cli_small, bash_completion_completes)
{
	static const struct {
		const char *words, *want;
	} cases[] = {
		{ "gearc d", "dump" },
		{ "gearc co", "compile compare" },
		{ "gearc run x.om --war", "--warmup=" },
		{ "gearc dump --format = j", "json" },
		{ "gearc --mod", "--model= --mode= --modify_mixlist=" },
		{ "gearc run x.om --pad", "--pad-batch" },
		{ "gearc compare --r", "--rtol=" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char cmd[600];
		snprintf(cmd, sizeof(cmd),
			 "bash -c 'source contrib/gearc.bash; COMP_WORDS=(%s); "
			 "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _gearc; "
			 "echo \"${COMPREPLY[*]}\"'", cases[i].words);
		FILE *p = popen(cmd, "r");
		cr_assert(p);
		char got[256] = "";
		if (!fgets(got, sizeof(got), p))
			got[0] = 0;
		pclose(p);
		got[strcspn(got, "\n")] = 0;
		cr_expect_str_eq(got, cases[i].want, "%s", cases[i].words);
	}
}
