/*
 * cli/editflags.c - the grammar of --out_nodes, --output_type and
 * --input_fp16_nodes (compiler/edit.h): edit_parse reads them into a
 * ParsedEdits, which edit_apply checks against the model.  Entries are
 * split on ';' and trimmed; a name and its index split at the LAST ':'
 * (ONNX names may hold ':').
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool blank(char c) { return c == ' ' || c == '\t'; }

static char *trimmed(const char *s, size_t n)
{
	while (n && blank(*s))
		s++, n--;
	while (n && blank(s[n - 1]))
		n--;
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* The ';'-separated entries of s, trimmed; -1 with an error naming flag
 * for an empty one. */
static int split(const char *flag, const char *s, char ***out, int32_t *n)
{
	size_t len = strlen(s), k = 1;
	for (size_t i = 0; i < len; i++)
		k += s[i] == ';';
	*out = xcalloc(k, sizeof(char *));
	*n = 0;
	for (const char *p = s, *end = s + len; *n < (int32_t)k;) {
		const char *q = memchr(p, ';', (size_t)(end - p));
		size_t l = q ? (size_t)(q - p) : (size_t)(end - p);
		char *e = trimmed(p, l);
		(*out)[(*n)++] = e;
		if (!*e)
			return error("%s: entry %d is empty (stray ';')", flag,
				     *n);
		p = q ? q + 1 : end;
	}
	return 0;
}

static void free_list(char **l, int32_t n)
{
	for (int32_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

/* "NAME:N" with N a small non-negative integer: *idx, and the name cut
 * at the colon.  false if e has no such suffix. */
static bool split_index(char *e, int32_t *idx)
{
	char *c = strrchr(e, ':');
	int64_t v;
	if (!c || c == e || !c[1] || !parse_i64(c + 1, strlen(c + 1), &v) ||
	    v < 0 || v > 65535 || c[1] == '-' || c[1] == '+')
		return false;
	*idx = (int32_t)v;
	*c = 0;
	return true;
}

static int parse_out_nodes(ParsedEdits *p, const char *s)
{
	char **e;
	int32_t n;
	int rc = split("--out_nodes", s, &e, &n);
	p->out = xcalloc((size_t)n + 1, sizeof(*p->out));
	int form = -1; /* 1: node:index, 0: tensor names */
	for (int32_t i = 0; rc == 0 && i < n; i++) {
		OutRef *r = &p->out[p->nout];
		int32_t idx;
		bool node = split_index(e[i], &idx);
		if (form >= 0 && form != node) {
			rc = error("--out_nodes: entry %d ('%s') is a %s, but "
				   "entry 1 a %s; use one form (atc allows "
				   "one)", i + 1, e[i],
				   node ? "node output (NODE:INDEX)"
					: "tensor name",
				   node ? "tensor name"
					: "node output (NODE:INDEX)");
			break;
		}
		form = node;
		r->name = xstrdup(e[i]);
		r->index = node ? idx : -1;
		p->nout++;
		for (int32_t k = 0; k + 1 < p->nout; k++)
			if (!strcmp(p->out[k].name, r->name) &&
			    p->out[k].index == r->index)
				rc = error("--out_nodes: entry %d repeats entry "
					   "%d", p->nout, k + 1);
	}
	free_list(e, n);
	return rc;
}

static int parse_type(const char *flag, const char *s, int32_t *dt)
{
	if (!strcmp(s, "FP32"))
		*dt = DT_FLOAT;
	else if (!strcmp(s, "FP16"))
		*dt = DT_FLOAT16;
	else if (!strcmp(s, "UINT8"))
		*dt = DT_UINT8;
	else
		return error("%s: '%s' is not an output type (expected FP32, "
			     "FP16 or UINT8)", flag, s);
	return 0;
}

/* "FP16" for every output, or "node:0:FP16;node2:1:UINT8". */
static int parse_output_type(ParsedEdits *p, const char *s)
{
	if (!strchr(s, ':'))
		return parse_type("--output_type", s, &p->all_type);
	char **e;
	int32_t n;
	int rc = split("--output_type", s, &e, &n);
	p->types = xcalloc((size_t)n + 1, sizeof(*p->types));
	for (int32_t i = 0; rc == 0 && i < n; i++) {
		OutRef *r = &p->types[p->ntypes];
		char *c = strrchr(e[i], ':');
		int32_t idx;
		if (!c) {
			rc = error("--output_type: entry %d ('%s') has no "
				   "type; expected NODE:INDEX:TYPE", i + 1,
				   e[i]);
			break;
		}
		*c = 0;
		if ((rc = parse_type("--output_type", c + 1, &r->dtype)) < 0)
			break;
		if (!split_index(e[i], &idx)) {
			rc = error("--output_type: entry %d ('%s') has no "
				   "output index; expected NODE:INDEX:TYPE",
				   i + 1, e[i]);
			break;
		}
		r->name = xstrdup(e[i]);
		r->index = idx;
		p->ntypes++;
	}
	free_list(e, n);
	return rc;
}

static int parse_fp16(ParsedEdits *p, const char *s)
{
	int rc = split("--input_fp16_nodes", s, &p->fp16, &p->nfp16);
	for (int32_t i = 0; rc == 0 && i < p->nfp16; i++)
		for (int32_t k = 0; k < i; k++)
			if (!strcmp(p->fp16[k], p->fp16[i]))
				return error("--input_fp16_nodes: '%s' is given "
					     "twice", p->fp16[i]);
	return rc;
}

int edit_parse(ParsedEdits *p, const char *out_nodes, const char *output_type,
	       const char *fp16)
{
	memset(p, 0, sizeof(*p));
	int rc = 0;
	if (out_nodes && !*out_nodes)
		rc = error("--out_nodes is empty: expected \"node:0;node2:1\"");
	else if (out_nodes)
		rc = parse_out_nodes(p, out_nodes);
	if (rc == 0 && output_type && !*output_type)
		rc = error("--output_type is empty: expected FP32, FP16, UINT8 "
			   "or \"node:0:FP16\"");
	else if (rc == 0 && output_type)
		rc = parse_output_type(p, output_type);
	if (rc == 0 && fp16 && !*fp16)
		rc = error("--input_fp16_nodes is empty: expected input names "
			   "\"x;y\"");
	else if (rc == 0 && fp16)
		rc = parse_fp16(p, fp16);
	p->given[0] = out_nodes;
	p->given[1] = output_type;
	p->given[2] = fp16;
	if (rc < 0)
		edit_parsed_release(p);
	return rc;
}
