/*
 * cli/gearflags.c - the grammar of --input_shape and the gear options
 * (compiler/gearspec.h describes it): gear_parse reads the option strings
 * into a ParsedGears, which gear_apply checks against the model.  Message
 * wording: the flag first, then "entry N" / "gear N" / "value N" counted
 * from 1, dims counted from 0 (they are axes), the offending text quoted,
 * then what was expected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const fmt_names[] = { "NCHW", "NHWC", "ND" };

/* ---- spans, fields and quoting ----------------------------------------- */

typedef struct Span {
	const char *p;
	size_t n;
} Span;

static Span span_of(const char *s) { return (Span){ s, strlen(s) }; }

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

static Span trim(Span s)
{
	while (s.n && is_blank(s.p[0]))
		s.p++, s.n--;
	while (s.n && is_blank(s.p[s.n - 1]))
		s.n--;
	return s;
}

static size_t count_char(Span s, char c)
{
	size_t k = 0;
	for (size_t i = 0; i < s.n; i++)
		k += s.p[i] == c;
	return k;
}

/* Iterates over the sep-separated fields of a span: k seps make k+1
 * fields, so "" is one empty field and "a," is "a" and "". */
typedef struct Fields {
	const char *p, *end;
	char sep;
	bool done;
} Fields;

static Fields fields(Span s, char sep)
{
	return (Fields){ s.p, s.p + s.n, sep, false };
}

static bool next_field(Fields *f, Span *out)
{
	if (f->done)
		return false;
	const char *q = memchr(f->p, f->sep, (size_t)(f->end - f->p));
	if (!q) {
		*out = (Span){ f->p, (size_t)(f->end - f->p) };
		f->done = true;
		return true;
	}
	*out = (Span){ f->p, (size_t)(q - f->p) };
	f->p = q + 1;
	return true;
}


static const char *quote(Quote *q, Span s)
{
	return gear_quote(q, s.p, s.n);
}

static const char *quotes(Quote *q, const char *s)
{
	return quote(q, span_of(s));
}

/* An --input_shape entry written back as "name:d0,d1" for messages. */
typedef struct EntryText {
	Quote name;
	char s[sizeof(Quote) + MAX_RANK * 22 + 2];
} EntryText;

static const char *entry_text(EntryText *t, const ShapeEntry *e)
{
	size_t k = strlen(quotes(&t->name, e->name));
	memcpy(t->s, t->name.s, k);
	t->s[k++] = ':';
	for (int32_t d = 0; d < e->rank; d++) {
		char *p = t->s + k;
		size_t room = sizeof(t->s) - k;
		int w = snprintf(p, room, "%s%lld", d ? "," : "",
				 (long long)e->dims[d]);
		k += w > 0 && (size_t)w < room ? (size_t)w : 0;
	}
	t->s[k] = 0;
	return t->s;
}


static char *xstrndup(Span s)
{
	char *p = xmalloc(s.n + 1);
	memcpy(p, s.p, s.n);
	p[s.n] = 0;
	return p;
}

/* ---- values ---------------------------------------------------------- */

enum { V_OK, V_EMPTY, V_BAD, V_BIG };

/* One value, blanks around it ignored: a positive integer that fits in
 * int64 (a gear value), or when dim (a dim of --input_shape) also 0 (a
 * zero-size tensor, as ONNX allows; not "-0") or -1 (a gear dim). */
static int parse_value(Span s, bool dim, int64_t *out)
{
	s = trim(s);
	if (!s.n)
		return V_EMPTY;
	if (!parse_i64(s.p, s.n, out)) {
		for (size_t i = 0; i < s.n; i++)
			if (s.p[i] < '0' || s.p[i] > '9')
				return V_BAD;
		return V_BIG;
	}
	if (*out > 0 || (dim && (*out == -1 || (*out == 0 && *s.p != '-'))))
		return V_OK;
	return V_BAD;
}

/* ---- flags ----------------------------------------------------------- */

static const char *gear_flag(int mode)
{
	switch (mode) {
	case MODE_BATCH: return "--dynamic_batch_size";
	case MODE_IMAGE_SIZE: return "--dynamic_image_size";
	case MODE_DIMS: return "--dynamic_dims";
	}
	return "--input_shape";
}

static const char *gear_value(const GearOptions *o, int mode)
{
	switch (mode) {
	case MODE_BATCH: return o->dynamic_batch_size;
	case MODE_IMAGE_SIZE: return o->dynamic_image_size;
	case MODE_DIMS: return o->dynamic_dims;
	}
	return NULL;
}

/* Which options go together; sets p->mode and p->format. */
static int check_flags(ParsedGears *p, const GearOptions *o)
{
	static const int modes[] = { MODE_BATCH, MODE_IMAGE_SIZE, MODE_DIMS };
	Quote q;
	p->mode = MODE_STATIC;
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		if (!gear_value(o, modes[i]))
			continue;
		if (p->mode != MODE_STATIC)
			return error("%s and %s cannot be used together; give "
				     "only one of --dynamic_batch_size, "
				     "--dynamic_image_size and --dynamic_dims",
				     gear_flag(p->mode), gear_flag(modes[i]));
		p->mode = modes[i];
	}
	p->format = FMT_NCHW;
	if (o->input_format) {
		int32_t f = 0;
		while (f < (int32_t)ARRAY_SIZE(fmt_names) &&
		       strcmp(o->input_format, fmt_names[f]))
			f++;
		if (f == (int32_t)ARRAY_SIZE(fmt_names))
			return error("--input_format: \"%s\" is not supported; "
				     "use NCHW, NHWC or ND",
				     quotes(&q, o->input_format));
		p->format = f;
	}
	if (p->mode == MODE_IMAGE_SIZE && p->format == FMT_ND)
		return error("--input_format: ND cannot be used with "
			     "--dynamic_image_size, which needs NCHW or NHWC "
			     "to find H and W");
	if (p->mode != MODE_STATIC && !o->input_shape &&
	    !(p->mode == MODE_DIMS && strchr(o->dynamic_dims, ':')))
		return error("%s needs --input_shape to say which dims are "
			     "gear dims (-1)", gear_flag(p->mode));
	return 0;
}

/* ---- --input_shape ----------------------------------------------------- */

static const char *last_colon(Span s)
{
	for (size_t i = s.n; i > 0; i--)
		if (s.p[i - 1] == ':')
			return s.p + i - 1;
	return NULL;
}

static int dim_error(int idx, const char *text, int32_t d, int kind, Span v)
{
	Quote q;
	if (kind == V_EMPTY)
		return error("--input_shape: entry %d (\"%s\"): dim %d is "
			     "empty (stray ',')", idx, text, d);
	if (kind == V_BIG)
		return error("--input_shape: entry %d (\"%s\"): dim %d "
			     "(\"%s\") is too large for int64", idx, text, d,
			     quote(&q, trim(v)));
	return error("--input_shape: entry %d (\"%s\"): dim %d (\"%s\") "
		     "must be an integer >= 0 or -1", idx, text, d,
		     quote(&q, trim(v)));
}

/* Entry idx (from 1) of --input_shape into e; e->name is set only on
 * success. */
static int parse_entry(ShapeEntry *e, int idx, Span ent)
{
	Quote qe;
	Span t = trim(ent);
	if (!t.n)
		return error("--input_shape: entry %d is empty (stray ';')",
			     idx);
	const char *text = quote(&qe, t);
	const char *colon = last_colon(t);
	if (!colon)
		return error("--input_shape: entry %d (\"%s\") has no ':' "
			     "between name and dims", idx, text);
	Span name = trim((Span){ t.p, (size_t)(colon - t.p) });
	Span dims = trim((Span){ colon + 1, (size_t)(t.p + t.n - colon - 1) });
	if (!name.n)
		return error("--input_shape: entry %d (\"%s\") has no name "
			     "before ':'", idx, text);
	e->rank = 0;
	if (!dims.n) { /* "sr:" - a scalar, as atc writes it */
		e->name = xstrndup(name);
		return 0;
	}
	size_t nd = count_char(dims, ',') + 1;
	if (nd > MAX_RANK)
		return error("--input_shape: entry %d (\"%s\") has %zu dims, "
			     "but at most %d are supported", idx, text, nd,
			     MAX_RANK);
	Fields f = fields(dims, ',');
	Span v;
	e->rank = 0;
	while (next_field(&f, &v)) {
		int kind = parse_value(v, true, &e->dims[e->rank]);
		if (kind != V_OK)
			return dim_error(idx, text, e->rank, kind, v);
		e->rank++;
	}
	e->name = xstrndup(name);
	return 0;
}

static int parse_input_shape(ParsedGears *p, const char *s)
{
	Span all = span_of(s);
	if (!trim(all).n)
		return error("--input_shape: empty value; expected "
			     "\"name:d0,d1,...\" entries separated by ';'");
	size_t n = count_char(all, ';') + 1;
	if (n > INT32_MAX)
		return error("--input_shape: too many entries (%zu)", n);
	p->shapes = xcalloc(n, sizeof(*p->shapes));
	NameMap seen;
	namemap_init(&seen);
	Fields f = fields(all, ';');
	Span ent;
	int rc = 0;
	while (rc == 0 && next_field(&f, &ent)) {
		int idx = p->nshapes + 1;
		ShapeEntry *e = &p->shapes[p->nshapes];
		if ((rc = parse_entry(e, idx, ent)) < 0)
			break;
		p->nshapes++;
		int32_t prev = namemap_put(&seen, e->name, idx);
		if (prev >= 0) {
			EntryText t;
			Quote q;
			rc = error("--input_shape: entry %d (\"%s\") gives "
				   "'%s' again (first in entry %d); each "
				   "input may be listed once", idx,
				   entry_text(&t, e), quotes(&q, e->name),
				   prev);
		}
	}
	namemap_release(&seen);
	return rc;
}


static int32_t first_dyn(const ShapeEntry *e)
{
	for (int32_t d = 0; d < e->rank; d++)
		if (e->dims[d] == -1)
			return d;
	return -1;
}

/* No gear option: --input_shape must be fully static. */
static int check_no_gear_dims(const ParsedGears *p)
{
	for (int32_t i = 0; i < p->nshapes; i++) {
		const ShapeEntry *e = &p->shapes[i];
		EntryText t;
		if (gear_count_dyn(e))
			return error("--input_shape: entry %d (\"%s\") has -1 "
				     "at dim %d, but no gear option is given; "
				     "add --dynamic_batch_size, "
				     "--dynamic_image_size or --dynamic_dims, "
				     "or give a fixed size",
				     i + 1, entry_text(&t, e), first_dyn(e));
	}
	return 0;
}

static int check_batch_entry(const ShapeEntry *e, int idx)
{
	EntryText t;
	for (int32_t d = 1; d < e->rank; d++)
		if (e->dims[d] == -1)
			return error("--input_shape: entry %d (\"%s\"): with "
				     "--dynamic_batch_size only dim 0 (the "
				     "batch) may be -1, not dim %d",
				     idx, entry_text(&t, e), d);
	return 0;
}

static int check_image_entry(const ShapeEntry *e, int idx, int32_t format)
{
	EntryText t;
	int32_t h = format == FMT_NHWC ? 1 : 2, w = h + 1;
	const char *fmt = fmt_names[format];
	if (e->rank != 4)
		return error("--input_shape: entry %d (\"%s\"): with "
			     "--dynamic_image_size an input with -1 must have "
			     "4 dims (%s), not %d", idx, entry_text(&t, e), fmt,
			     e->rank);
	for (int32_t d = 0; d < e->rank; d++)
		if (e->dims[d] == -1 && d != h && d != w)
			return error("--input_shape: entry %d (\"%s\"): with "
				     "--dynamic_image_size only H and W (dims "
				     "%d and %d for %s) may be -1, not dim %d",
				     idx, entry_text(&t, e), h, w, fmt, d);
	if (e->dims[h] != -1 || e->dims[w] != -1)
		return error("--input_shape: entry %d (\"%s\"): with "
			     "--dynamic_image_size both H and W (dims %d and "
			     "%d for %s) must be -1", idx, entry_text(&t, e),
			     h, w, fmt);
	return 0;
}

/* Where the -1s may be for the gear mode; sets p->nvals. */
static int check_gear_dims(ParsedGears *p)
{
	int64_t total = 0;
	for (int32_t i = 0; i < p->nshapes; i++) {
		const ShapeEntry *e = &p->shapes[i];
		int32_t k = gear_count_dyn(e);
		int rc = 0;
		if (!k)
			continue;
		if (p->mode == MODE_BATCH)
			rc = check_batch_entry(e, i + 1);
		else if (p->mode == MODE_IMAGE_SIZE)
			rc = check_image_entry(e, i + 1, p->format);
		if (rc < 0)
			return rc;
		total += k;
	}
	if (!total)
		return error("--input_shape: no dim is -1, but %s needs at "
			     "least one gear dim (-1)", gear_flag(p->mode));
	if (total > INT32_MAX)
		return error("--input_shape: too many dynamic dims (%lld)",
			     (long long)total);
	p->nvals = (int32_t)total;
	return 0;
}

/* ---- the gear option ----------------------------------------------------- */

/* The gear list being parsed: values as the user gave them, per_gear
 * per gear, and each gear's text for messages. */
typedef struct GearList {
	const char *flag;
	int32_t mode, per_gear, ngears;
	int32_t ndyn; /* --input_shape's -1 count, for messages */
	int64_t *vals;
	Span *text;
} GearList;

static const char *gear_example(int mode)
{
	switch (mode) {
	case MODE_BATCH: return "\"1,8,16\"";
	case MODE_IMAGE_SIZE: return "\"224,224;448,448\"";
	}
	return "\"1,32;1,64\"";
}

static int value_error(const GearList *l, int32_t g, int32_t i, int kind,
		       Span v)
{
	Quote qg, qv;
	const char *what = kind == V_BIG ? "is too large for int64"
					 : "must be a positive integer";
	const char *gt = quote(&qg, trim(l->text[g]));
	if (l->mode == MODE_BATCH) {
		if (kind == V_EMPTY)
			return error("%s: value %d is empty (stray ',')",
				     l->flag, g + 1);
		return error("%s: value %d (\"%s\") %s", l->flag, g + 1, gt,
			     what);
	}
	if (kind == V_EMPTY)
		return error("%s: gear %d (\"%s\"): value %d is empty (stray "
			     "',')", l->flag, g + 1, gt, i + 1);
	return error("%s: gear %d (\"%s\"): value %d (\"%s\") %s", l->flag,
		     g + 1, gt, i + 1, quote(&qv, trim(v)), what);
}

static int count_error(const GearList *l, int32_t g, size_t nv)
{
	Quote q;
	const char *gt = quote(&q, trim(l->text[g]));
	const char *vs = nv == 1 ? "value" : "values";
	if (l->mode == MODE_IMAGE_SIZE)
		return error("%s: gear %d (\"%s\") has %zu %s, but each gear "
			     "needs 2 (height,width)", l->flag, g + 1, gt, nv,
			     vs);
	return error("%s: gear %d (\"%s\") has %zu %s, but --input_shape "
		     "has %d dynamic %s (-1)", l->flag, g + 1, gt, nv, vs,
		     l->ndyn, l->ndyn == 1 ? "dim" : "dims");
}

/* Gear g's values from its text. */
static int parse_gear(GearList *l, int32_t g)
{
	Span gt = trim(l->text[g]);
	int64_t *row = l->vals + (size_t)g * (size_t)l->per_gear;
	if (l->mode == MODE_BATCH) {
		int kind = parse_value(gt, false, row);
		return kind == V_OK ? 0 : value_error(l, g, 0, kind, gt);
	}
	if (!gt.n)
		return error("%s: gear %d is empty (stray ';')", l->flag,
			     g + 1);
	Fields f = fields(gt, ',');
	Span v;
	size_t nv = 0;
	int64_t x;
	while (next_field(&f, &v)) {
		int kind = parse_value(v, false, &x);
		if (kind != V_OK)
			return value_error(l, g, (int32_t)nv, kind, v);
		if (nv < (size_t)l->per_gear)
			row[nv] = x;
		nv++;
	}
	if (nv != (size_t)l->per_gear)
		return count_error(l, g, nv);
	return 0;
}

static int check_duplicates(const GearList *l)
{
	size_t rowbytes = (size_t)l->per_gear * sizeof(int64_t);
	for (int32_t j = 1; j < l->ngears; j++) {
		for (int32_t i = 0; i < j; i++) {
			Quote q;
			if (memcmp(l->vals + (size_t)i * l->per_gear,
				   l->vals + (size_t)j * l->per_gear, rowbytes))
				continue;
			return error("%s: %s %d (\"%s\") repeats %s %d; every "
				     "gear must differ", l->flag,
				     l->mode == MODE_BATCH ? "value" : "gear",
				     j + 1, quote(&q, trim(l->text[j])),
				     l->mode == MODE_BATCH ? "value" : "gear",
				     i + 1);
		}
	}
	return 0;
}

/* Splits and counts the gears of s into l->text. */
static int split_gears(GearList *l, const char *s)
{
	char gsep = l->mode == MODE_BATCH ? ',' : ';';
	Span t = trim(span_of(s));
	if (t.n && t.p[t.n - 1] == gsep) /* atc ignores one */
		t.n--;
	if (!trim(t).n)
		return error("%s: no gears given; expected e.g. %s", l->flag,
			     gear_example(l->mode));
	if (l->mode == MODE_BATCH && memchr(t.p, ';', t.n))
		return error("%s: found ';', but batch sizes are separated by "
			     "',' with one value per gear, e.g. %s", l->flag,
			     gear_example(l->mode));
	size_t n = count_char(t, gsep) + 1;
	if (n > GEAR_MAX)
		return error("%s: %zu gears given, but at most %d are allowed",
			     l->flag, n, GEAR_MAX);
	l->ngears = (int32_t)n;
	l->text = xcalloc(n, sizeof(*l->text));
	Fields f = fields(t, gsep);
	for (size_t g = 0; g < n; g++)
		next_field(&f, &l->text[g]);
	return 0;
}

/* Fills p->table from the user's gears: one value per -1 (see
 * gearspec.h). */
static void expand_table(ParsedGears *p, const GearList *l)
{
	p->ngears = l->ngears;
	p->table = xcalloc((size_t)l->ngears * (size_t)p->nvals,
			   sizeof(int64_t));
	for (int32_t g = 0; g < l->ngears; g++) {
		const int64_t *row = l->vals + (size_t)g * l->per_gear;
		int64_t *out = p->table + (size_t)g * p->nvals;
		int32_t k = 0;
		for (int32_t i = 0; i < p->nshapes; i++) {
			const ShapeEntry *e = &p->shapes[i];
			int32_t j = 0;
			for (int32_t d = 0; d < e->rank; d++) {
				if (e->dims[d] != -1)
					continue;
				out[k] = row[p->mode == MODE_DIMS ? k : j];
				k++, j++;
			}
		}
	}
}

static int parse_gears(ParsedGears *p, const char *s)
{
	GearList l = { .flag = gear_flag(p->mode), .mode = p->mode,
		       .ndyn = p->nvals };
	l.per_gear = p->mode == MODE_BATCH	 ? 1
		     : p->mode == MODE_IMAGE_SIZE ? 2
						  : p->nvals;
	int rc = split_gears(&l, s);
	if (rc == 0) {
		l.vals = xcalloc((size_t)l.ngears * (size_t)l.per_gear,
				 sizeof(int64_t));
		for (int32_t g = 0; rc == 0 && g < l.ngears; g++)
			rc = parse_gear(&l, g);
	}
	if (rc == 0 && l.ngears < GEAR_MIN) {
		Quote q;
		rc = error("%s: 1 gear given (\"%s\"), but at least %d are "
			   "needed", l.flag, quote(&q, trim(l.text[0])),
			   GEAR_MIN);
	}
	if (rc == 0)
		rc = check_duplicates(&l);
	if (rc == 0)
		expand_table(p, &l);
	free(l.vals);
	free(l.text);
	return rc;
}

/* ---- trtexec's and OpenVINO's --input_shape ------------------------------ */

/* A growing string. */
typedef struct Str {
	char *s;
	size_t n, cap;
} Str;

static void str_add(Str *b, const char *p, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = 2 * (b->n + n + 1);
		b->s = xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = 0;
}

enum { FORM_ATC, FORM_TRTEXEC, FORM_OPENVINO };
static const char *const form_names[] = { "atc's (x:1,3,224,224)",
					  "trtexec's (x:1x3x224x224)",
					  "OpenVINO's (x[1,3,224,224])" };

/* The form of one entry: OpenVINO's has '[', trtexec's an 'x' between
 * dims after the last ':'. */
static int entry_form(Span e)
{
	Span t = trim(e);
	const char *c = last_colon(t);
	/* a '[' in an atc name ("a[0]:1,2") leaves the ':' */
	if (t.n && (t.p[t.n - 1] == ']' || (!c && memchr(t.p, '[', t.n))))
		return FORM_OPENVINO;
	if (!c)
		return FORM_ATC;
	for (const char *q = c + 1; q < t.p + t.n; q++)
		if (*q == 'x' && q > c + 1 && q[-1] >= '0' && q[-1] <= '9')
			return FORM_TRTEXEC;
	return FORM_ATC;
}

/* Splits s into entries: on ';', or on ',' outside brackets too where
 * the entries are trtexec's or OpenVINO's (those tools' separator). */
static int32_t split_entries(Span s, Span *out, int32_t max)
{
	int32_t n = 0, depth = 0;
	/* ',' separates entries if no field it makes is in atc's form (an
	 * atc entry's dims are split on ',') */
	bool comma = false, atc = false;
	const char *start = s.p;
	for (const char *q = s.p; q <= s.p + s.n; q++) {
		bool end = q == s.p + s.n;
		depth += !end && *q == '[';
		depth -= !end && *q == ']';
		if (end || *q == ';' || (*q == ',' && !depth)) {
			atc = atc || entry_form((Span){ start,
							(size_t)(q - start) }) ==
					     FORM_ATC;
			comma = comma || (!end && *q == ',');
			start = q + 1;
		}
	}
	comma = comma && !atc;
	depth = 0;
	start = s.p;
	for (const char *q = s.p; q <= s.p + s.n && n < max; q++) {
		if (q < s.p + s.n && *q == '[')
			depth++;
		if (q < s.p + s.n && *q == ']')
			depth--;
		if (q == s.p + s.n || *q == ';' || (comma && *q == ',' && !depth)) {
			out[n++] = (Span){ start, (size_t)(q - start) };
			start = q + 1;
		}
	}
	return n;
}

/* trtexec's "x:1x3x224x224" as "x:1,3,224,224". */
static int trtexec_entry(Str *b, int idx, Span e)
{
	Quote q;
	Span t = trim(e);
	const char *c = last_colon(t);
	if (!c)
		return error("--input_shape: entry %d (\"%s\") has no ':' "
			     "between name and dims", idx, quote(&q, t));
	if (memchr(c, ',', (size_t)(t.p + t.n - c)))
		return error("--input_shape: entry %d (\"%s\") mixes 'x' and "
			     "',' between dims; write 1x3x224x224 (trtexec) or "
			     "1,3,224,224 (atc)", idx, quote(&q, t));
	str_add(b, t.p, (size_t)(c - t.p) + 1);
	for (const char *p = c + 1; p < t.p + t.n; p++) {
		char ch = *p == 'x' ? ',' : *p;
		str_add(b, &ch, 1);
	}
	return 0;
}

/* OpenVINO's "x[1,3,?,?]" or "x[1 3 -1 -1]" as "x:1,3,-1,-1". */
static int openvino_entry(Str *b, int idx, Span e)
{
	Quote q;
	Span t = trim(e);
	const char *open = memchr(t.p, '[', t.n);
	const char *close = t.n ? memchr(t.p, ']', t.n) : NULL;
	if (!open || !close || close < open)
		return error("--input_shape: entry %d (\"%s\") has unbalanced "
			     "brackets; expected OpenVINO's name[d0,d1,...]",
			     idx, quote(&q, t));
	if (close != t.p + t.n - 1)
		return error("--input_shape: entry %d (\"%s\") has text after "
			     "']'", idx, quote(&q, t));
	Span name = trim((Span){ t.p, (size_t)(open - t.p) });
	if (!name.n)
		return error("--input_shape: entry %d (\"%s\") has no input "
			     "name before '['", idx, quote(&q, t));
	if (memchr(open + 1, '[', (size_t)(close - open - 1)))
		return error("--input_shape: entry %d (\"%s\") has nested "
			     "brackets", idx, quote(&q, t));
	str_add(b, name.p, name.n);
	str_add(b, ":", 1);
	bool first = true;
	for (const char *p = open + 1; p < close;) {
		while (p < close && (is_blank(*p) || *p == ','))
			p++;
		const char *d = p;
		while (p < close && !is_blank(*p) && *p != ',')
			p++;
		if (p == d)
			break;
		Span dim = { d, (size_t)(p - d) };
		if (memchr(dim.p, '.', dim.n))
			return error("--input_shape: entry %d (\"%s\"): dim "
				     "\"%.*s\" is a range; gearc compiles gears "
				     "instead (-1 here and a gear option)", idx,
				     quote(&q, t), (int)dim.n, dim.p);
		if (!first)
			str_add(b, ",", 1);
		if (dim.n == 1 && *dim.p == '?')
			str_add(b, "-1", 2);
		else
			str_add(b, dim.p, dim.n);
		first = false;
	}
	return 0;
}

/* --input_shape in any of the three forms, as atc's; *out is s itself
 * for atc's form, else malloc'd. */
static int normalize_shape(const char *s, char **out)
{
	Span all = span_of(s), ents[4096];
	int32_t n = split_entries(all, ents, (int32_t)ARRAY_SIZE(ents));
	int form = -1, first = 0;
	*out = (char *)s;
	for (int32_t i = 0; i < n; i++) {
		if (!trim(ents[i]).n)
			continue; /* parse_entry says it */
		int f = entry_form(ents[i]);
		if (form < 0) {
			form = f;
			first = i;
		} else if (f != form) {
			Quote q;
			return error("--input_shape: entry %d (\"%s\") is in %s "
				     "form but entry %d in %s; use one form",
				     i + 1, quote(&q, trim(ents[i])),
				     form_names[f], first + 1, form_names[form]);
		}
	}
	if (form <= FORM_ATC)
		return 0;
	Str b = { 0 };
	str_add(&b, "", 0);
	for (int32_t i = 0; i < n; i++) {
		if (i)
			str_add(&b, ";", 1);
		int rc = form == FORM_TRTEXEC ? trtexec_entry(&b, i + 1, ents[i])
					      : openvino_entry(&b, i + 1, ents[i]);
		if (rc < 0) {
			free(b.s);
			return -1;
		}
	}
	*out = b.s;
	return 0;
}

/* ---- the named --dynamic_dims form ---------------------------------------- */

enum { NAMED_MAX = 64 };

static int parse_named_entry(NamedDim *d, int idx, Span e)
{
	Quote q, qv;
	Span t = trim(e);
	const char *c = last_colon(t);
	if (!t.n)
		return error("--dynamic_dims: entry %d is empty (stray ';')",
			     idx);
	if (!c)
		return error("--dynamic_dims: entry %d (\"%s\") has no ':'; "
			     "in the named form each entry is NAME:v1,v2,...",
			     idx, quote(&q, t));
	Span name = trim((Span){ t.p, (size_t)(c - t.p) });
	Span vals = trim((Span){ c + 1, (size_t)(t.p + t.n - c - 1) });
	if (!name.n)
		return error("--dynamic_dims: entry %d (\"%s\") has no dim "
			     "name before ':'", idx, quote(&q, t));
	if (!vals.n)
		return error("--dynamic_dims: entry %d (\"%s\") has no values "
			     "after ':'", idx, quote(&q, t));
	d->name = xstrndup(name);
	d->vals = xcalloc(count_char(vals, ',') + 1, sizeof(int64_t));
	Fields f = fields(vals, ',');
	Span v;
	while (next_field(&f, &v)) {
		int kind = parse_value(v, false, &d->vals[d->n]);
		if (kind != V_OK)
			return error("--dynamic_dims: entry %d (\"%s\"): value "
				     "%d (\"%s\") %s", idx, quote(&q, t),
				     d->n + 1, quote(&qv, trim(v)),
				     kind == V_EMPTY ? "is empty (stray ',')"
				     : kind == V_BIG ? "is too large for int64"
						     : "must be a positive "
						       "integer");
		for (int32_t k = 0; k < d->n; k++)
			if (d->vals[k] == d->vals[d->n])
				return error("--dynamic_dims: entry %d (\"%s\") "
					     "gives %lld twice", idx,
					     quote(&q, t),
					     (long long)d->vals[k]);
		d->n++;
	}
	return 0;
}

/* "batch:1,4;seq:32,64": the gears are every combination. */
static int parse_named(ParsedGears *p, const char *s)
{
	Span t = trim(span_of(s));
	if (t.n && t.p[t.n - 1] == ';') /* atc ignores one */
		t.n--;
	size_t n = count_char(t, ';') + 1;
	if (n > NAMED_MAX)
		return error("--dynamic_dims: %zu names given, but at most %d "
			     "are allowed", n, NAMED_MAX);
	p->named = xcalloc(n, sizeof(*p->named));
	Fields f = fields(t, ';');
	Span e;
	int64_t gears = 1;
	while (next_field(&f, &e)) {
		NamedDim *d = &p->named[p->nnamed];
		int rc = parse_named_entry(d, p->nnamed + 1, e);
		p->nnamed++;
		if (rc < 0)
			return -1;
		for (int32_t k = 0; k + 1 < p->nnamed; k++)
			if (!strcmp(p->named[k].name, d->name)) {
				Quote q;
				return error("--dynamic_dims: '%s' is named "
					     "twice (entries %d and %d)",
					     quotes(&q, d->name), k + 1,
					     p->nnamed);
			}
		gears *= d->n;
		if (gears > GEAR_MAX)
			return error("--dynamic_dims: the named values make "
				     "more than %d gears (every combination "
				     "is one)", GEAR_MAX);
	}
	if (gears < GEAR_MIN)
		return error("--dynamic_dims: the named values make 1 gear, "
			     "but at least %d are needed", GEAR_MIN);
	p->ngears = (int32_t)gears;
	return 0;
}

/* ---- gear_parse ---------------------------------------------------------- */

static void copy_given(ParsedGears *p, const GearOptions *o)
{
	const char *v[GOPT_COUNT] = {
		[GOPT_INPUT_SHAPE] = o->input_shape,
		[GOPT_INPUT_FORMAT] = o->input_format,
		[GOPT_DYNAMIC_BATCH_SIZE] = o->dynamic_batch_size,
		[GOPT_DYNAMIC_IMAGE_SIZE] = o->dynamic_image_size,
		[GOPT_DYNAMIC_DIMS] = o->dynamic_dims,
	};
	for (int i = 0; i < GOPT_COUNT; i++)
		p->given[i] = v[i] ? xstrdup(v[i]) : NULL;
}

int gear_parse(ParsedGears *p, const GearOptions *o)
{
	char *shape = NULL;
	memset(p, 0, sizeof(*p));
	if (check_flags(p, o) < 0)
		goto fail;
	if (o->input_shape && normalize_shape(o->input_shape, &shape) < 0)
		goto fail;
	if (shape && parse_input_shape(p, shape) < 0)
		goto fail;
	if (p->mode == MODE_DIMS && strchr(o->dynamic_dims, ':')) {
		if (parse_named(p, o->dynamic_dims) < 0)
			goto fail;
	} else if (p->mode == MODE_STATIC) {
		if (check_no_gear_dims(p) < 0)
			goto fail;
	} else {
		if (check_gear_dims(p) < 0)
			goto fail;
		if (parse_gears(p, gear_value(o, p->mode)) < 0)
			goto fail;
	}
	copy_given(p, o);
	if (shape && shape != o->input_shape) { /* record atc's form */
		free(p->given[GOPT_INPUT_SHAPE]);
		p->given[GOPT_INPUT_SHAPE] = shape;
	}
	return 0;
fail:
	if (shape != o->input_shape)
		free(shape);
	gear_parsed_release(p);
	return -1;
}
