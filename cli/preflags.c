/*
 * cli/preflags.c - the preprocessing flags (compiler/preproc.h) into a
 * ParsedPre: atc's AIPP configuration file, protobuf text
 *     aipp_op { aipp_mode: static  input_format: RGB888_U8 ... }
 * (one aipp_op per input; '#' comments), and OpenVINO's --mean_values,
 * --scale_values, --reverse_input_channels, --layout, --source_layout,
 * --target_layout, with gearc's --source_type.  Errors in the file name
 * it and the line; errors in the flags name the flag.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- the AIPP file's tokens ----------------------------------------------- */

typedef struct Lexer {
	const char *path, *p, *end;
	int line;
	char tok[128]; /* the current token */
} Lexer;

/* The next token into l->tok: an identifier, a number, or one of
 * "{}:"; "" at the end. */
static int next(Lexer *l)
{
	for (;;) {
		while (l->p < l->end && isspace((unsigned char)*l->p))
			l->line += *l->p++ == '\n';
		if (l->p < l->end && *l->p == '#')
			while (l->p < l->end && *l->p != '\n')
				l->p++;
		else
			break;
	}
	size_t n = 0;
	if (l->p == l->end) {
		l->tok[0] = 0;
		return 0;
	}
	if (strchr("{}:", *l->p)) {
		l->tok[n++] = *l->p++;
	} else {
		while (l->p < l->end && (isalnum((unsigned char)*l->p) ||
					 strchr("_.+-", *l->p))) {
			if (n + 1 >= sizeof(l->tok))
				return error("%s:%d: token too long", l->path,
					     l->line);
			l->tok[n++] = *l->p++;
		}
		if (!n)
			return error("%s:%d: unexpected character '%c'",
				     l->path, l->line, *l->p);
	}
	l->tok[n] = 0;
	return 0;
}

static int expect(Lexer *l, const char *t)
{
	if (next(l) < 0)
		return -1;
	if (strcmp(l->tok, t))
		return error("%s:%d: expected '%s', found '%s'", l->path,
			     l->line, t, *l->tok ? l->tok : "the end");
	return 0;
}

static int number(Lexer *l, const char *key, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(l->tok, &end);
	if (!*l->tok || *end || errno || !isfinite(*v))
		return error("%s:%d: %s: '%s' is not a number", l->path, l->line,
			     key, l->tok);
	return 0;
}

static int integer(Lexer *l, const char *key, int64_t *v, int64_t lo)
{
	if (!parse_i64(l->tok, strlen(l->tok), v) || *v < lo)
		return error("%s:%d: %s: '%s' is not an integer >= %lld",
			     l->path, l->line, key, l->tok, (long long)lo);
	return 0;
}

static int boolean(Lexer *l, const char *key, bool *v)
{
	if (!strcmp(l->tok, "true") || !strcmp(l->tok, "1"))
		*v = true;
	else if (!strcmp(l->tok, "false") || !strcmp(l->tok, "0"))
		*v = false;
	else
		return error("%s:%d: %s: '%s' is not true or false", l->path,
			     l->line, key, l->tok);
	return 0;
}

/* ---- aipp_op's fields -------------------------------------------------------- */

/* What an aipp_op gathers before it becomes a PreSpec. */
typedef struct Aipp {
	PreSpec s;
	bool mode_static;
	double mean[4], min[4], var[4];
} Aipp;

static int input_format(Lexer *l, Aipp *a)
{
	static const struct {
		const char *name;
		int fmt;
	} fmts[] = {
		{ "RGB888_U8", PF_RGB888 },	{ "BGR888_U8", PF_RGB888 },
		{ "XRGB8888_U8", PF_XRGB8888 }, { "ARGB8888_U8", PF_XRGB8888 },
		{ "RGBX8888_U8", PF_RGBX8888 }, { "RGBA8888_U8", PF_RGBX8888 },
		{ "YUV400_U8", PF_YUV400 },	{ "YUV420SP_U8", PF_YUV420SP },
	};
	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++)
		if (!strcmp(l->tok, fmts[i].name)) {
			a->s.format = fmts[i].fmt;
			/* BGR: the frame's channels R<->B against RGB */
			if (!strcmp(l->tok, "BGR888_U8"))
				a->s.swap = !a->s.swap;
			return 0;
		}
	if (!strncmp(l->tok, "YUV", 3) || !strncmp(l->tok, "AYUV", 4) ||
	    !strncmp(l->tok, "RAW", 3))
		return error("%s:%d: input_format %s is not supported (gearc "
			     "takes RGB888_U8, BGR888_U8, XRGB8888_U8, "
			     "ARGB8888_U8, RGBX8888_U8, RGBA8888_U8, YUV400_U8, "
			     "YUV420SP_U8)",
			     l->path, l->line, l->tok);
	return error("%s:%d: input_format: '%s' is not an AIPP format",
		     l->path, l->line, l->tok);
}

/* "matrix_r1c2", "mean_chn_3", "input_bias_0": the index, or -1. */
static int indexed(const char *key, const char *prefix, int n)
{
	size_t k = strlen(prefix);
	if (strncmp(key, prefix, k) || !key[k] || key[k + 1] ||
	    key[k] < '0' || key[k] >= '0' + n)
		return -1;
	return key[k] - '0';
}

/* d is an integer in [lo, hi], as atc's field key holds. */
static int in_range(Lexer *l, const char *key, double d, int lo, int hi)
{
	if (d != floor(d) || d < lo || d > hi)
		return error("%s:%d: %s: '%s' is not an integer from %d to %d",
			     l->path, l->line, key, l->tok, lo, hi);
	return 0;
}

static int field(Lexer *l, const char *key, Aipp *a)
{
	PreSpec *s = &a->s;
	int64_t i64;
	double d;
	int i;
	bool b;
	if (!strcmp(key, "aipp_mode")) {
		if (!strcmp(l->tok, "dynamic"))
			return error("%s:%d: aipp_mode dynamic is not supported: "
				     "gearc compiles static AIPP only",
				     l->path, l->line);
		if (strcmp(l->tok, "static"))
			return error("%s:%d: aipp_mode: '%s' is not static",
				     l->path, l->line, l->tok);
		a->mode_static = true;
		return 0;
	}
	if (!strcmp(key, "related_input_rank")) {
		if (integer(l, key, &i64, 0) < 0)
			return -1;
		s->rank = (int32_t)(i64 > 1000 ? 1000 : i64);
		return 0;
	}
	if (!strcmp(key, "input_format"))
		return input_format(l, a);
	struct {
		const char *k;
		int64_t *v;
	} ints[] = {
		{ "src_image_size_w", &s->src_w }, { "src_image_size_h", &s->src_h },
		{ "load_start_pos_w", &s->crop_x }, { "load_start_pos_h", &s->crop_y },
		{ "crop_size_w", &s->crop_w }, { "crop_size_h", &s->crop_h },
		{ "left_padding_size", &s->pad_l }, { "right_padding_size", &s->pad_r },
		{ "top_padding_size", &s->pad_t }, { "bottom_padding_size", &s->pad_b },
	};
	for (size_t k = 0; k < ARRAY_SIZE(ints); k++)
		if (!strcmp(key, ints[k].k))
			return integer(l, key, ints[k].v, 0);
	struct {
		const char *k;
		bool *v;
	} bools[] = {
		{ "crop", &s->crop }, { "padding", &s->pad },
		{ "csc_switch", &s->csc }, { "ax_swap_switch", &s->ax_swap },
	};
	for (size_t k = 0; k < ARRAY_SIZE(bools); k++)
		if (!strcmp(key, bools[k].k))
			return boolean(l, key, bools[k].v);
	if (!strcmp(key, "rbuv_swap_switch")) {
		if (boolean(l, key, &b) < 0)
			return -1;
		s->swap ^= b;
		return 0;
	}
	if (!strcmp(key, "resize") || !strncmp(key, "resize_", 7) ||
	    !strncmp(key, "rotation", 8) || !strncmp(key, "scf_", 4))
		return error("%s:%d: %s: resizing and rotation are not "
			     "supported", l->path, l->line, key);
	if (number(l, key, &d) < 0)
		return -1;
	if (!strcmp(key, "padding_value")) {
		s->pad_value = (float)d;
		return 0;
	}
	/* atc's types: the matrix int16, the biases uint8 */
	if (!strncmp(key, "matrix_r", 8) && strlen(key) == 11 &&
	    key[8] >= '0' && key[8] <= '2' && key[9] == 'c' && key[10] >= '0' &&
	    key[10] <= '2') {
		if (in_range(l, key, d, -32768, 32767) < 0)
			return -1;
		s->matrix[key[8] - '0'][key[10] - '0'] = d;
		return 0;
	}
	if ((i = indexed(key, "input_bias_", 3)) >= 0)
		return in_range(l, key, d, 0, 255) < 0 ? -1
						       : (s->in_bias[i] = d, 0);
	if ((i = indexed(key, "output_bias_", 3)) >= 0)
		return in_range(l, key, d, 0, 255) < 0 ? -1
						       : (s->out_bias[i] = d, 0);
	if ((i = indexed(key, "mean_chn_", 4)) >= 0)
		return a->mean[i] = d, 0;
	if ((i = indexed(key, "min_chn_", 4)) >= 0)
		return a->min[i] = d, 0;
	if ((i = indexed(key, "var_reci_chn_", 4)) >= 0)
		return a->var[i] = d, 0;
	return error("%s:%d: aipp_op has no field '%s'", l->path, l->line, key);
}

/* What atc refuses in an aipp_op whatever the model. */
static int checks(const char *path, const PreSpec *s)
{
	bool any = false;
	for (int r = 0; r < 3; r++)
		for (int k = 0; k < 3; k++)
			any |= s->matrix[r][k] != 0;
	if (s->csc && s->format == PF_YUV400)
		return error("%s: csc_switch: expected false with YUV400_U8 "
			     "(one channel has no colour to convert)", path);
	if (s->csc && !any)
		return error("%s: csc_switch: true, but matrix_r0c0 .. "
			     "matrix_r2c2 are all 0: expected the conversion's "
			     "matrix", path);
	if (s->format != PF_YUV420SP)
		return 0;
	/* NV12/NV21: chroma pairs of 2x2 pixels */
	const struct {
		const char *k;
		int64_t v;
		bool on;
	} even[] = {
		{ "src_image_size_w", s->src_w, true },
		{ "src_image_size_h", s->src_h, true },
		{ "load_start_pos_w", s->crop_x, s->crop },
		{ "load_start_pos_h", s->crop_y, s->crop },
	};
	for (size_t i = 0; i < ARRAY_SIZE(even); i++)
		if (even[i].on && even[i].v % 2)
			return error("%s: %s: %lld is odd; YUV420SP_U8 expects "
				     "an even number (chroma covers 2x2 "
				     "pixels)", path, even[i].k,
				     (long long)even[i].v);
	return 0;
}

/* One aipp_op { ... } after its name, as a PreSpec. */
static int aipp_op(Lexer *l, Aipp *a)
{
	for (int i = 0; i < 4; i++)
		a->var[i] = 1;
	a->s.src_type = DT_UINT8;
	a->s.nhwc = true;
	a->s.format = PF_RGB888;
	if (expect(l, "{") < 0)
		return -1;
	for (;;) {
		if (next(l) < 0)
			return -1;
		if (!strcmp(l->tok, "}"))
			break;
		if (!*l->tok || strchr("{:", *l->tok))
			return error("%s:%d: expected a field of aipp_op, found "
				     "'%s'", l->path, l->line,
				     *l->tok ? l->tok : "the end");
		char key[128];
		snprintf(key, sizeof(key), "%s", l->tok);
		if (expect(l, ":") < 0 || next(l) < 0)
			return -1;
		if (!*l->tok || strchr("{}:", *l->tok))
			return error("%s:%d: %s has no value", l->path, l->line,
				     key);
		if (field(l, key, a) < 0)
			return -1;
	}
	if (!a->mode_static)
		return error("%s: aipp_op needs aipp_mode: static", l->path);
	if (a->s.crop && (!a->s.crop_w || !a->s.crop_h))
		return error("%s: crop needs crop_size_w and crop_size_h",
			     l->path);
	if (!a->s.crop)
		a->s.crop_x = a->s.crop_y = 0;
	if (checks(l->path, &a->s) < 0)
		return -1;
	if (!a->s.pad)
		a->s.pad_l = a->s.pad_r = a->s.pad_t = a->s.pad_b = 0;
	/* pixel_out = (pixel_in - mean - min) * var_reci */
	a->s.nscale = 4;
	for (int c = 0; c < 4; c++) {
		a->s.scale[c] = a->var[c];
		a->s.offset[c] = -(a->mean[c] + a->min[c]) * a->var[c];
	}
	return 0;
}

/* The file into p: -1 with an error and *status (EXIT_FAIL if it cannot
 * be read, EXIT_USAGE for its contents: an error in the flag). */
static int parse_aipp(ParsedPre *p, const char *path, int *status)
{
	FileMap f;
	*status = EXIT_FAIL;
	if (filemap_read(&f, path, "--insert_op_conf file") < 0)
		return -1;
	*status = EXIT_USAGE;
	Lexer l = { path, (const char *)f.data, (const char *)f.data + f.size,
		    1, { 0 } };
	int rc = 0;
	for (;;) {
		if ((rc = next(&l)) < 0 || !*l.tok)
			break;
		if (strcmp(l.tok, "aipp_op")) {
			rc = error("%s:%d: expected aipp_op, found '%s'", path,
				   l.line, l.tok);
			break;
		}
		Aipp a = { 0 };
		a.s.what = "--insert_op_conf";
		p->e = xrealloc(p->e, (size_t)(p->n + 1) * sizeof(*p->e));
		if ((rc = aipp_op(&l, &a)) < 0)
			break;
		p->e[p->n++] = a.s;
	}
	if (rc == 0 && !p->n)
		rc = error("%s: no aipp_op in the file", path);
	filemap_release(&f);
	return rc;
}

/* ---- OpenVINO's flags ------------------------------------------------------- */

typedef struct OvEntry {
	char *name; /* NULL: the first input */
	int32_t n;
	double v[8];
} OvEntry;

/* "x[1,2,3],y[4]" or "[1,2,3]" or "1,2,3": entries into e (at most 16). */
static int ov_values(const char *flag, const char *s, OvEntry *e, int *ne)
{
	const char *p = s;
	*ne = 0;
	if (!strchr(s, '[')) { /* one list for the first input */
		e[0].name = NULL;
		e[0].n = 0;
		*ne = 1;
		for (;;) {
			char *end;
			errno = 0;
			double d = strtod(p, &end);
			if (end == p || errno || !isfinite(d) || e[0].n == 8)
				return error("%s: '%s' is not a list of numbers "
					     "(\"123.7,116.3,103.5\" or "
					     "\"x[123.7,116.3,103.5]\")", flag, s);
			e[0].v[e[0].n++] = d;
			p = end;
			if (!*p)
				return 0;
			if (*p++ != ',')
				return error("%s: '%s' is not a list of numbers",
					     flag, s);
		}
	}
	while (*p) {
		const char *open = strchr(p, '['), *close = strchr(p, ']');
		if (!open || !close || close < open || *ne == 16)
			return error("%s: '%s' has unbalanced brackets; expected "
				     "\"x[v0,v1,...],y[...]\"", flag, s);
		OvEntry *x = &e[(*ne)++];
		x->name = open > p ? strndup(p, (size_t)(open - p)) : NULL;
		x->n = 0;
		for (const char *q = open + 1; q < close;) {
			char *end;
			errno = 0;
			double d = strtod(q, &end);
			if (end == q || end > close || errno || !isfinite(d) ||
			    x->n == 8)
				return error("%s: '%.*s' is not a list of "
					     "numbers", flag,
					     (int)(close - open + 1), open);
			x->v[x->n++] = d;
			q = end;
			if (q < close && *q++ != ',')
				return error("%s: '%.*s' is not a list of "
					     "numbers", flag,
					     (int)(close - open + 1), open);
		}
		p = close + 1;
		if (*p == ',')
			p++;
		else if (*p)
			return error("%s: text after ']' in '%s'", flag, s);
	}
	return 0;
}

/* The spec for input name (NULL: the first), made on first use. */
static PreSpec *ov_spec(ParsedPre *p, const char *name)
{
	for (int32_t i = 0; i < p->n; i++)
		if (p->e[i].format == PF_NONE &&
		    ((!name && !p->e[i].input) ||
		     (name && p->e[i].input && !strcmp(name, p->e[i].input))))
			return &p->e[i];
	p->e = xrealloc(p->e, (size_t)(p->n + 1) * sizeof(*p->e));
	PreSpec *s = &p->e[p->n++];
	memset(s, 0, sizeof(*s));
	s->input = name ? xstrdup(name) : NULL;
	s->what = "--mean_values/--scale_values/--source_layout";
	s->src_type = DT_FLOAT;
	for (int c = 0; c < 4; c++)
		s->scale[c] = 1;
	return s;
}

/* "nhwc", "x(nhwc)", for --layout also "x(nhwc->nchw)": the source
 * layout's channels-last into *nhwc.  target: the model's, only NCHW. */
static int ov_layout(ParsedPre *p, const char *flag, const char *s,
		     bool source_side)
{
	char *copy = xstrdup(s), *save = NULL;
	int rc = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		char *open = strchr(tok, '('), *name = NULL, *lay = tok;
		if (open) {
			char *close = strrchr(tok, ')');
			if (!close || close[1])
				rc = error("%s: '%s' has unbalanced parentheses; "
					   "expected \"x(nhwc)\"", flag, tok);
			*open = 0;
			name = tok;
			lay = open + 1;
			if (close)
				*close = 0;
		}
		char *arrow = strstr(lay, "->"), *src = lay, *dst = NULL;
		if (arrow) {
			*arrow = 0;
			dst = arrow + 2;
		}
		if (!source_side && !arrow) {
			dst = lay; /* --target_layout, or --layout=x(nchw) */
			src = NULL;
		}
		for (char *c = lay; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		if (dst && *dst && strcmp(dst, "nchw"))
			rc = error("%s: the model's layout '%s' is not "
				   "supported (gearc's preprocessing feeds "
				   "NCHW inputs)", flag, dst);
		else if (src && strcmp(src, "nchw") && strcmp(src, "nhwc"))
			rc = error("%s: '%s' is not a source layout gearc takes "
				   "(nhwc or nchw)", flag, src);
		/* no name: every input the other flags name, or the first */
		for (int32_t i = 0; rc == 0 && src && !(name && *name) &&
				    i < p->n; i++)
			p->e[i].nhwc = !strcmp(src, "nhwc");
		if (rc == 0 && src && ((name && *name) || !p->n))
			ov_spec(p, name && *name ? name : NULL)->nhwc =
				!strcmp(src, "nhwc");
	}
	free(copy);
	return rc;
}

static int ov_source_type(ParsedPre *p, const char *s)
{
	int dt = !strcmp(s, "u8")    ? DT_UINT8
		 : !strcmp(s, "f32") ? DT_FLOAT
		 : !strcmp(s, "f16") ? DT_FLOAT16
				     : 0;
	if (!dt)
		return error("--source_type: '%s' is not u8, f16 or f32", s);
	for (int32_t i = 0; i < p->n; i++)
		if (p->e[i].format == PF_NONE)
			p->e[i].src_type = dt;
	if (!p->n)
		ov_spec(p, NULL)->src_type = dt;
	return 0;
}

static int ov_apply(ParsedPre *p, const OvEntry *mean, int nm,
		    const OvEntry *scale, int ns);

static int ov_mean_scale(ParsedPre *p, const PreFlags *f)
{
	OvEntry mean[16] = { 0 }, scale[16] = { 0 };
	int nm = 0, ns = 0, rc = 0;
	if (f->mean)
		rc = ov_values("--mean_values", f->mean, mean, &nm);
	if (rc == 0 && f->scale)
		rc = ov_values("--scale_values", f->scale, scale, &ns);
	if (rc == 0)
		rc = ov_apply(p, mean, nm, scale, ns);
	for (int i = 0; i < 16; i++) {
		free(mean[i].name);
		free(scale[i].name);
	}
	return rc;
}

/* The entries into the specs: mean first, then scale, so that
 * (in - mean) / scale whatever the order of the flags. */
static int ov_apply(ParsedPre *p, const OvEntry *mean, int nm,
		    const OvEntry *scale, int ns)
{
	for (int i = 0; i < nm + ns; i++) {
		const OvEntry *e = i < nm ? &mean[i] : &scale[i - nm];
		PreSpec *s = ov_spec(p, e->name);
		bool is_mean = i < nm;
		if (e->n > 4)
			return error("%s: %d values for one input; at most 4 "
				     "channels", is_mean ? "--mean_values"
							 : "--scale_values",
				     e->n);
		for (int k = 0; !is_mean && k < e->n; k++)
			if (e->v[k] == 0)
				return error("--scale_values: a scale is 0");
		/* out = (in - mean) / scale = in * (1/scale) + (-mean/scale):
		 * scales first, then offsets of the means over them */
		int n = s->nscale > e->n ? s->nscale : e->n;
		double was_scale[4], was_offset[4];
		memcpy(was_scale, s->scale, sizeof(was_scale));
		memcpy(was_offset, s->offset, sizeof(was_offset));
		for (int c = 0; c < 4; c++) {
			double sc = was_scale[s->nscale > 1 ? c : 0];
			double off = was_offset[s->nscale > 1 ? c : 0];
			double v = e->v[e->n > 1 ? c % e->n : 0];
			if (is_mean)
				s->offset[c] = off - v * sc;
			else
				s->scale[c] = sc / v, s->offset[c] = off / v;
		}
		s->nscale = n;
	}
	return 0;
}

int pre_parse(ParsedPre *p, const PreFlags *f, int *status)
{
	memset(p, 0, sizeof(*p));
	*status = EXIT_USAGE;
	int rc = 0;
	bool ov = f->mean || f->scale || f->reverse || f->layout ||
		  f->source_layout || f->target_layout || f->source_type;
	if (f->aipp && ov)
		rc = error("--insert_op_conf and OpenVINO's preprocessing flags "
			   "(--mean_values, ...) cannot be used together; "
			   "give one");
	else if (f->aipp && !*f->aipp)
		rc = error("--insert_op_conf is empty: expected the AIPP "
			   "configuration file");
	else if (f->aipp) {
		rc = parse_aipp(p, f->aipp, status);
	}
	if (rc == 0 && ov) {
		/* mean before scale: (in - mean) / scale whatever the order */
		rc = ov_mean_scale(p, f);
		if (rc == 0 && f->layout)
			rc = ov_layout(p, "--layout", f->layout, false);
		if (rc == 0 && f->source_layout)
			rc = ov_layout(p, "--source_layout", f->source_layout,
				       true);
		if (rc == 0 && f->target_layout)
			rc = ov_layout(p, "--target_layout", f->target_layout,
				       false);
		if (rc == 0 && f->reverse && !p->n)
			ov_spec(p, NULL);
		for (int32_t i = 0; rc == 0 && f->reverse && i < p->n; i++)
			p->e[i].reverse = true;
		if (rc == 0 && f->source_type)
			rc = ov_source_type(p, f->source_type);
	}
	const char *given[8][2] = {
		{ "insert_op_conf", f->aipp },	 { "mean_values", f->mean },
		{ "scale_values", f->scale },	 { "reverse_input_channels", f->reverse },
		{ "layout", f->layout },	 { "source_layout", f->source_layout },
		{ "target_layout", f->target_layout },
		{ "source_type", f->source_type },
	};
	for (int i = 0, k = 0; i < 8; i++)
		if (given[i][1]) {
			p->given[k][0] = given[i][0];
			p->given[k++][1] = given[i][1];
		}
	if (rc < 0)
		pre_parsed_release(p);
	return rc;
}
