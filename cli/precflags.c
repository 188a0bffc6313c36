/*
 * cli/precflags.c - atc's --precision_mode, --keep_dtype and
 * --modify_mixlist (man gearc, PRECISION): what passes/precision.c marks.
 *
 * On the CPU, atc's modes come down to three: full precision (the
 * model's types, float16 computed in float32), bfloat16 and float16 for
 * the white-list ops.  oneDNN 2.6, gearc's convolution and matmul
 * engine, computes no float16 on CPUs, so the float16 modes compute in
 * bfloat16 where the CPU has it (the runtime says so; gearc warns here).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *mode;
	int32_t dtype;
} modes[] = {
	{ "force_fp32", 0 },
	{ "must_keep_origin_dtype", 0 },
	{ "allow_fp32_to_bf16", DT_BFLOAT16 },
	{ "allow_mix_precision_bf16", DT_BFLOAT16 },
	{ "allow_fp32_to_fp16", DT_FLOAT16 },
	{ "allow_mix_precision", DT_FLOAT16 },
	{ "allow_mix_precision_fp16", DT_FLOAT16 },
	{ "force_fp16", DT_FLOAT16 },
};

/* The op types a reduced kernel exists for, as the lists name them. */
static const char *const white[] = { "Conv", "ConvTranspose", "MatMul",
				     "Gemm" };

static bool white_op(const char *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(white); i++)
		if (!strcmp(white[i], t))
			return true;
	return false;
}

static void push(Arena *a, const char ***l, int32_t *n, const char *s)
{
	const char **g = arena_array(a, (size_t)*n + 1, sizeof(char *));
	if (*n)
		memcpy(g, *l, (size_t)*n * sizeof(char *));
	g[(*n)++] = arena_strdup(a, s);
	*l = g;
}

/* --keep_dtype=FILE: a node name a line, or OpType::TYPE for every node
 * of an op type; blank lines and '#' comments skipped. */
static int read_keep(ParsedPrecision *pp, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return error("--keep_dtype: cannot open '%s': %s", path,
			     strerror(errno));
	char line[4096];
	int lineno = 0, rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			rc = error("--keep_dtype: %s:%d: a line longer than "
				   "%zu bytes", path, lineno, sizeof(line) - 2);
		char *s = line + strspn(line, " \t");
		s[strcspn(s, "\r\n#")] = 0;
		for (size_t n = strlen(s); n && (s[n - 1] == ' ' ||
						 s[n - 1] == '\t');)
			s[--n] = 0;
		if (rc || !*s)
			continue;
		if (!strncmp(s, "OpType::", 8) && s[8])
			push(&pp->arena, &pp->spec.deny, &pp->spec.ndeny, s + 8);
		else
			push(&pp->arena, &pp->spec.keep, &pp->spec.nkeep, s);
	}
	if (!rc && ferror(f))
		rc = error("--keep_dtype: reading '%s' failed", path);
	fclose(f);
	return rc;
}

/* List `list` ("to-add" or "to-remove") of object `o` of mixlist path:
 * each op type passed to fn. */
static int each_op(ParsedPrecision *pp, json_object *o, const char *path,
		   const char *name, const char *list,
		   int (*fn)(ParsedPrecision *, const char *, const char *))
{
	json_object *a;
	if (!json_object_object_get_ex(o, list, &a))
		return 0;
	if (!json_object_is_type(a, json_type_array))
		return error("--modify_mixlist: %s: \"%s\".\"%s\" is not an "
			     "array of op types", path, name, list);
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		if (!json_object_is_type(e, json_type_string))
			return error("--modify_mixlist: %s: \"%s\".\"%s\"[%zu] "
				     "is not a string", path, name, list, i);
		if (fn(pp, path, json_object_get_string(e)) < 0)
			return -1;
	}
	return 0;
}

static int deny(ParsedPrecision *pp, const char *path, const char *op)
{
	(void)path;
	push(&pp->arena, &pp->spec.deny, &pp->spec.ndeny, op);
	return 0;
}

/* A white-list addition: only ops a reduced kernel exists for. */
static int allow(ParsedPrecision *pp, const char *path, const char *op)
{
	(void)pp;
	if (!white_op(op))
		fprintf(stderr, "gearc: warning: --modify_mixlist: %s: %s has no "
				"reduced-precision kernel on the CPU; it stays "
				"float32 (the white list: Conv, ConvTranspose, "
				"MatMul, Gemm)\n",
			path, op);
	return 0;
}

/* --modify_mixlist=FILE, atc's JSON: {"black-list": {"to-add": [op],
 * "to-remove": [op]}, "white-list": {...}, "gray-list": {...}}. */
static int read_mixlist(ParsedPrecision *pp, const char *path)
{
	json_object *doc = json_object_from_file(path);
	if (!doc)
		return error("--modify_mixlist: '%s' is not a readable JSON "
			     "file (%s)", path, json_util_get_last_err());
	int rc = 0;
	if (!json_object_is_type(doc, json_type_object))
		rc = error("--modify_mixlist: %s: expected an object with "
			   "\"black-list\", \"white-list\", \"gray-list\"",
			   path);
	json_object_object_foreach(doc, key, val)
	{
		if (rc)
			break;
		bool b = !strcmp(key, "black-list"), w = !strcmp(key, "white-list");
		if (!b && !w && strcmp(key, "gray-list")) {
			rc = error("--modify_mixlist: %s: unknown list \"%s\" "
				   "(expected black-list, white-list, "
				   "gray-list)", path, key);
		} else if (!json_object_is_type(val, json_type_object)) {
			rc = error("--modify_mixlist: %s: \"%s\" is not an "
				   "object of \"to-add\" and \"to-remove\"",
				   path, key);
		} else if (b) {
			rc = each_op(pp, val, path, key, "to-add", deny);
		} else if (w) {
			rc = each_op(pp, val, path, key, "to-add", allow);
			if (!rc)
				rc = each_op(pp, val, path, key, "to-remove",
					     deny);
		} /* gray-list: follows its neighbours in atc; every op
		     gearc reduces is white, so it changes nothing */
	}
	json_object_put(doc);
	return rc;
}

int precision_parse(ParsedPrecision *pp, const char *mode,
		    const char *keep, const char *mixlist, int *status)
{
	memset(pp, 0, sizeof(*pp));
	*status = EXIT_USAGE;
	if (!mode && (keep || mixlist))
		return error("--%s needs --precision_mode: it names what stays "
			     "float32 under a reduced-precision mode",
			     keep ? "keep_dtype" : "modify_mixlist");
	if (!mode)
		return 0;
	size_t i = 0;
	while (i < ARRAY_SIZE(modes) && strcmp(modes[i].mode, mode))
		i++;
	if (i == ARRAY_SIZE(modes))
		return error("--precision_mode: '%s' is not one of force_fp32, "
			     "must_keep_origin_dtype, allow_fp32_to_bf16, "
			     "allow_mix_precision_bf16, allow_fp32_to_fp16, "
			     "allow_mix_precision, allow_mix_precision_fp16, "
			     "force_fp16", mode);
	pp->spec.mode = mode;
	pp->spec.dtype = modes[i].dtype;
	*status = EXIT_FAIL;
	if ((keep && read_keep(pp, keep) < 0) ||
	    (mixlist && read_mixlist(pp, mixlist) < 0)) {
		precision_parsed_release(pp);
		return -1;
	}
	return 0;
}

void precision_warn(const ParsedPrecision *pp, FILE *f)
{
	if (pp->spec.dtype == DT_FLOAT16)
		fprintf(f, "gearc: warning: --precision_mode=%s: oneDNN 2.6 "
			   "computes no float16 on CPUs; the white-list ops "
			   "compute in bfloat16 (8 bits of mantissa, float16 "
			   "has 11) where the CPU has AVX512_BF16 or AMX-BF16, "
			   "else in float32\n",
			pp->spec.mode);
}

void precision_parsed_release(ParsedPrecision *pp)
{
	arena_release(&pp->arena);
	memset(pp, 0, sizeof(*pp));
}
