/* cli/npy.c - .npy reading and writing (npy.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"
#include "serializer/om.h"

static const struct {
	const char *descr;
	int dtype;
} descrs[] = {
	{ "f4", DT_FLOAT },  { "f8", DT_DOUBLE }, { "f2", DT_FLOAT16 },
	{ "b1", DT_BOOL },   { "i1", DT_INT8 },	  { "u1", DT_UINT8 },
	{ "i2", DT_INT16 },  { "u2", DT_UINT16 }, { "i4", DT_INT32 },
	{ "u4", DT_UINT32 }, { "i8", DT_INT64 },  { "u8", DT_UINT64 },
};

static int descr_dtype(const char *d)
{
	if ((d[0] != '<' && d[0] != '|') || strlen(d) != 3)
		return DT_UNDEFINED;
	for (size_t i = 0; i < ARRAY_SIZE(descrs); i++)
		if (!strcmp(d + 1, descrs[i].descr))
			return descrs[i].dtype;
	return DT_UNDEFINED;
}

static const char *dtype_descr(int dt)
{
	for (size_t i = 0; i < ARRAY_SIZE(descrs); i++)
		if (descrs[i].dtype == dt)
			return descrs[i].descr;
	return NULL;
}

/* ---- the header: the Python dict literal numpy writes -------------------
 *
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *
 * Keys and descr are string literals (either quote; \\ \' \" the only
 * escapes, as no valid key or dtype holds another), fortran_order is
 * True or False, shape a tuple of integers ("(3,)", "()"); each of the
 * three keys once, no other.  Anything else is refused naming what was
 * expected. */

typedef struct Header {
	const char *p, *end, *start;
	char descr[32];
	bool fortran;
	Shape shape;
	unsigned seen; /* 1 << key */
} Header;

static const char *const header_keys[] = { "descr", "fortran_order", "shape" };

static int expected(const Header *h, const char *what)
{
	return error("the header is not a .npy header dict: expected %s at "
		     "byte %zu of it", what, (size_t)(h->p - h->start));
}

static void skip_space(Header *h)
{
	while (h->p < h->end && strchr(" \t\r\n", *h->p) && *h->p)
		h->p++;
}

/* The character c next (after space): taken, true. */
static bool take(Header *h, char c)
{
	skip_space(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return true;
	}
	return false;
}

/* A string literal into buf[0..n) (NUL-terminated); -1 with an error if
 * there is none, or it does not fit (what: for the message). */
static int string_lit(Header *h, char *buf, size_t n, const char *what)
{
	skip_space(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return expected(h, what);
	const char *start = h->p;
	char q = *h->p++;
	size_t len = 0;
	for (;;) {
		if (h->p >= h->end || *h->p == '\n' || !*h->p)
			return expected(h, "the string's closing quote");
		char c = *h->p++;
		if (c == q)
			break;
		if (c == '\\') {
			if (h->p >= h->end || !strchr("\\'\"", *h->p) || !*h->p)
				return expected(h, "\\\\, \\' or \\\" (no key "
						   "or dtype holds another "
						   "escape)");
			c = *h->p++;
		}
		if (len + 1 >= n)
			return error("the header's string at byte %zu is longer "
				     "than %zu characters (no key or dtype "
				     "gearc reads is)",
				     (size_t)(start - h->start), n - 1);
		buf[len++] = c;
	}
	buf[len] = 0;
	return 0;
}

static int fortran_value(Header *h)
{
	skip_space(h);
	const char *w = h->p;
	while (h->p < h->end && (*h->p == '_' || (*h->p >= 'a' && *h->p <= 'z') ||
				 (*h->p >= 'A' && *h->p <= 'Z') ||
				 (*h->p >= '0' && *h->p <= '9')))
		h->p++;
	size_t n = (size_t)(h->p - w);
	if (n == 4 && !memcmp(w, "True", 4))
		h->fortran = true;
	else if (n == 5 && !memcmp(w, "False", 5))
		h->fortran = false;
	else
		return h->p = w, expected(h, "True or False for "
					     "'fortran_order'");
	return 0;
}

/* One dim of the shape tuple: a decimal integer, perhaps negative. */
static int shape_dim(Header *h)
{
	Shape *s = &h->shape;
	skip_space(h);
	bool neg = h->p < h->end && *h->p == '-';
	h->p += neg;
	if (h->p >= h->end || *h->p < '0' || *h->p > '9')
		return expected(h, "an integer in 'shape'");
	uint64_t d = 0;
	for (; h->p < h->end && *h->p >= '0' && *h->p <= '9'; h->p++)
		if (d > (UINT64_C(1) << 63) / 10 ||
		    (d = d * 10 + (uint64_t)(*h->p - '0')) > (UINT64_C(1) << 63))
			return error("'shape' dim %d does not fit 64 bits",
				     s->rank);
	if (neg && d)
		return error("'shape' dim %d is negative (-%llu)", s->rank,
			     (unsigned long long)d);
	if (d > (uint64_t)INT64_MAX)
		return error("'shape' dim %d does not fit 64 bits", s->rank);
	if (s->rank == MAX_RANK)
		return error("'shape' has more than %d dims (gearc reads at "
			     "most %d)", MAX_RANK, MAX_RANK);
	s->dims[s->rank++] = (int64_t)d;
	return 0;
}

/* (d0, d1, ...): "()" and "(d0,)" as Python writes them. */
static int shape_value(Header *h)
{
	if (!take(h, '('))
		return expected(h, "a tuple for 'shape'");
	h->shape.rank = 0;
	if (take(h, ')'))
		return 0;
	for (;;) {
		if (shape_dim(h) < 0)
			return -1;
		bool comma = take(h, ',');
		if (take(h, ')'))
			return h->shape.rank == 1 && !comma
				       ? error("'shape' (%lld) is an integer, "
					       "not a tuple (a 1-D shape is "
					       "written (%lld,))",
					       (long long)h->shape.dims[0],
					       (long long)h->shape.dims[0])
				       : 0;
		if (!comma)
			return expected(h, "',' or ')' in 'shape'");
	}
}

/* key: value, the value read as the key wants it. */
static int header_entry(Header *h)
{
	char key[32];
	if (string_lit(h, key, sizeof(key), "a quoted key") < 0)
		return -1;
	unsigned k = 0;
	while (k < ARRAY_SIZE(header_keys) && strcmp(key, header_keys[k]))
		k++;
	if (k == ARRAY_SIZE(header_keys))
		return error("the header has key '%s'; a .npy header has "
			     "'descr', 'fortran_order' and 'shape' only", key);
	if (h->seen & 1u << k)
		return error("the header gives '%s' twice", key);
	h->seen |= 1u << k;
	if (!take(h, ':'))
		return expected(h, "':' after the key");
	return k == 0	? string_lit(h, h->descr, sizeof(h->descr),
				     "dtype string for 'descr'")
	       : k == 1 ? fortran_value(h)
			: shape_value(h);
}

/* The dict: '{' entries separated by ',' (one may trail) '}'. */
static int parse_dict(Header *h)
{
	if (!take(h, '{'))
		return expected(h, "'{'");
	while (!take(h, '}')) {
		if (header_entry(h) < 0)
			return -1;
		if (take(h, ','))
			continue;
		skip_space(h);
		if (h->p >= h->end || *h->p != '}')
			return expected(h, "',' or '}'");
	}
	skip_space(h);
	if (h->p != h->end)
		return expected(h, "the end of the header after '}'");
	for (unsigned k = 0; k < ARRAY_SIZE(header_keys); k++)
		if (!(h->seen & 1u << k))
			return error("the header has no '%s'", header_keys[k]);
	return 0;
}

/* descr as a dtype: *dt, and *width code points for a string ("<U7"). */
static int header_dtype(const Header *h, int *dt, int64_t *width)
{
	const char *d = h->descr;
	*width = 0;
	if (!strncmp(d, "<U", 2) && d[2] >= '0' && d[2] <= '9' &&
	    strlen(d) <= 11) {
		char *end;
		*width = strtoll(d + 2, &end, 10);
		*dt = *end ? DT_UNDEFINED : DT_STRING;
	} else {
		*dt = descr_dtype(d);
	}
	if (!*dt)
		return error("dtype '%s' is not one gearc reads (little-endian "
			     "numbers, bool, or <U strings)", d);
	if (h->fortran)
		return error("the array is in Fortran order; save it in C "
			     "order");
	return 0;
}

/* cp as UTF-8 at q: the bytes written (1..4). */
static size_t utf8_put(uint8_t *q, uint32_t cp)
{
	static const uint8_t lead[] = { 0, 0, 0xC0, 0xE0, 0xF0 };
	size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	for (size_t k = n - 1; k > 0; k--, cp >>= 6)
		q[k] = (uint8_t)(0x80 | (cp & 0x3F));
	q[0] = (uint8_t)(lead[n] | cp);
	return n;
}

/* The code point of the valid UTF-8 character p[0..len). */
static uint32_t utf8_get(const uint8_t *p, size_t len)
{
	static const uint8_t mask[] = { 0, 0x7F, 0x1F, 0x0F, 0x07 };
	uint32_t cp = p[0] & mask[len];
	for (size_t k = 1; k < len; k++)
		cp = cp << 6 | (p[k] & 0x3F);
	return cp;
}

/* A <U array's elements (width code points each, UTF-32LE, NUL padded)
 * as UTF-8 strings: the Bytes of a DT_STRING tensor, in a. */
static const Bytes *utf32_strings(Arena *a, const uint8_t *p, int64_t n,
				  int64_t width)
{
	Bytes *b = arena_array(a, (size_t)n + 1, sizeof(Bytes));
	for (int64_t i = 0; i < n; i++, p += 4 * width) {
		int64_t len = width;
		while (len && !(p[4 * len - 4] | p[4 * len - 3] |
				p[4 * len - 2] | p[4 * len - 1]))
			len--; /* numpy drops trailing NULs too */
		uint8_t *u = arena_alloc(a, (size_t)len * 4 + 1), *q = u;
		for (int64_t k = 0; k < len; k++) {
			const uint8_t *c = p + 4 * k;
			uint32_t cp = (uint32_t)c[0] | (uint32_t)c[1] << 8 |
				      (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
			if (!cp)
				return error("string element %lld holds a NUL "
					     "character before its end "
					     "(strings cross gearrt.h "
					     "NUL-terminated)", (long long)i),
				       NULL;
			if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
				return error("string element %lld holds U+%X, "
					     "which is not a Unicode scalar "
					     "value", (long long)i, cp),
				       NULL;
			q += utf8_put(q, cp);
		}
		b[i] = (Bytes){ (size_t)(q - u), u };
	}
	return b;
}

static Tensor *npy_body(Arena *a, const Header *h, int dt, int64_t width,
			const uint8_t *p, size_t size)
{
	char buf[160];
	const Shape *s = &h->shape;
	int64_t n = shape_numel(s), bytes = -1;
	int64_t es = dt == DT_STRING ? 4 * width : (int64_t)dtype_size(dt);
	if (n < 0 || !mul_nonneg_i64(n, es, &bytes))
		return error("the shape %s of '%s' holds more than 2^63 bytes",
			     shape_str(s, buf, sizeof(buf)), h->descr), NULL;
	if ((uint64_t)bytes != size)
		return error("the data holds %zu bytes, the shape %s of '%s' "
			     "needs %lld", size, shape_str(s, buf, sizeof(buf)),
			     h->descr, (long long)bytes), NULL;
	if (dt != DT_STRING)
		return tensor_new(a, NULL, dt, s, p);
	const Bytes *b = utf32_strings(a, p, n, width);
	return b ? tensor_new(a, NULL, DT_STRING, s, b) : NULL;
}

Tensor *npy_parse(Arena *a, const uint8_t *p, size_t size)
{
	if (size < 10 || memcmp(p, "\x93NUMPY", 6))
		return error("not a .npy file (no \\x93NUMPY magic)"), NULL;
	int major = p[6];
	size_t hl, at;
	if (major == 1) {
		hl = (size_t)p[8] | (size_t)p[9] << 8;
		at = 10;
	} else if ((major == 2 || major == 3) && size >= 12) {
		hl = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 |
		     (size_t)p[11] << 24;
		at = 12;
	} else {
		return error("format version %d is not one gearc reads", major),
		       NULL;
	}
	if (hl > size - at)
		return error("the header runs past the end of the file"), NULL;
	Header h = { .p = (const char *)p + at, .end = (const char *)p + at + hl,
		     .start = (const char *)p + at };
	int dt;
	int64_t width;
	if (parse_dict(&h) < 0 || header_dtype(&h, &dt, &width) < 0)
		return NULL;
	return npy_body(a, &h, dt, width, p + at + hl, size - at - hl);
}

Tensor *npy_read(Arena *a, const char *path)
{
	FileMap map;
	if (filemap_open(&map, path, "input file") < 0)
		return NULL;
	Tensor *t = npy_parse(a, map.data, map.size);
	filemap_release(&map);
	if (!t)
		error_prefix("%s", path);
	return t;
}

/* n UTF-8 strings as the body of a <U array (UTF-32LE, *width code
 * points an element, NUL padded; malloc'd, *size bytes); NULL with an
 * error naming path and the element that is not UTF-8. */
static uint8_t *utf32_body(const char *path, const char *const *str,
			   int64_t n, int64_t *width, size_t *size)
{
	int64_t w = 1; /* numpy's width for empty strings too */
	for (int64_t i = 0; i < n; i++) {
		const uint8_t *p = (const uint8_t *)str[i];
		size_t len = strlen(str[i]), k;
		int64_t cps = 0;
		for (size_t at = 0; at < len; at += k, cps++)
			if (!(k = utf8_char_len(p + at, len - at)))
				return error("%s: string element %lld is not "
					     "valid UTF-8", path, (long long)i),
				       NULL;
		w = cps > w ? cps : w;
	}
	*width = w;
	*size = (size_t)n * (size_t)w * 4;
	uint8_t *b = xcalloc(*size + 1, 1), *q = b;
	for (int64_t i = 0; i < n; i++, q += 4 * w) {
		const uint8_t *p = (const uint8_t *)str[i];
		size_t len = strlen(str[i]), k;
		for (size_t at = 0, c = 0; at < len; at += k, c++) {
			k = utf8_char_len(p + at, len - at);
			uint32_t cp = utf8_get(p + at, k);
			for (int byte = 0; byte < 4; byte++)
				q[4 * c + (size_t)byte] = (uint8_t)(cp >> 8 * byte);
		}
	}
	return b;
}

/* What npy_write writes: the descr, and the body (*own: malloc'd for
 * strings, else NULL and the body is data). */
static int npy_body_of(const char *path, int dtype, const Shape *s,
		       const void *data, char *descr, size_t dn,
		       const void **body, size_t *size, uint8_t **own)
{
	*own = NULL;
	if (dtype == DT_STRING) {
		int64_t w;
		if (!(*own = utf32_body(path, data, shape_numel(s), &w, size)))
			return -1;
		snprintf(descr, dn, "<U%lld", (long long)w);
		*body = *own;
		return 0;
	}
	const char *d = dtype_descr(dtype);
	if (!d)
		return error("%s: %s cannot be written as .npy", path,
			     dtype_name(dtype));
	snprintf(descr, dn, "%c%s", dtype_size(dtype) == 1 ? '|' : '<', d);
	*body = data;
	*size = (size_t)shape_bytes(s, dtype);
	return 0;
}

bool npy_writable(int dtype)
{
	return dtype == DT_STRING || dtype_descr(dtype);
}

int npy_write(const char *path, int dtype, const Shape *s, const void *data)
{
	return npy_write_as("--output-dir", path, dtype, s, data);
}

int npy_write_as(const char *flag, const char *path, int dtype,
		 const Shape *s, const void *data)
{
	char descr[32], h[512];
	const void *body = NULL;
	size_t nbody = 0;
	uint8_t *own;
	if (npy_body_of(path, dtype, s, data, descr, sizeof(descr), &body,
			&nbody, &own) < 0)
		return -1;
	int n = snprintf(h, sizeof(h), "{'descr': '%s', 'fortran_order': "
			 "False, 'shape': (", descr);
	for (int32_t k = 0; k < s->rank; k++)
		n += snprintf(h + n, sizeof(h) - (size_t)n, "%lld%s",
			      (long long)s->dims[k], s->rank == 1 ? "," :
			      k + 1 < s->rank ? ", " : "");
	n += snprintf(h + n, sizeof(h) - (size_t)n, "), }");
	size_t total = ((size_t)n + 11 + 63) / 64 * 64; /* magic..'\n' */
	size_t hl = total - 10;
	memset(h + n, ' ', hl - (size_t)n - 1);
	h[hl - 1] = '\n';
	uint8_t pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
			    (uint8_t)hl, (uint8_t)(hl >> 8) };
	const void *parts[] = { pre, h, body };
	const size_t sizes[] = { sizeof(pre), hl, nbody };
	int rc = om_write_bytes(flag, path, parts, sizes, 3);
	free(own);
	return rc;
}

/* ---- file names --------------------------------------------------------- */

static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

char *npy_file(const char *name)
{
	char *p = xmalloc(3 * strlen(name) + 5), *q = p;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++)
		q += plain_byte(*s) ? sprintf(q, "%c", *s)
				    : sprintf(q, "%%%02x", *s);
	strcpy(q, ".npy");
	return p;
}

char *npy_path(const char *dir, const char *name)
{
	char *f = npy_file(name);
	size_t n = strlen(dir) + strlen(f) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, f);
	free(f);
	return p;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

char *npy_name(const char *file)
{
	size_t n = strlen(file);
	if (n <= 4 || strcmp(file + n - 4, ".npy"))
		return NULL;
	char *name = xmalloc(n), *q = name;
	for (size_t i = 0; i < n - 4; i++) {
		int hi, lo;
		if (file[i] != '%') {
			*q++ = file[i];
			continue;
		}
		if (i + 2 >= n - 4 || (hi = hex_digit(file[i + 1])) < 0 ||
		    (lo = hex_digit(file[i + 2])) < 0 || !(hi | lo)) {
			free(name);
			return NULL;
		}
		*q++ = (char)(hi << 4 | lo);
		i += 2;
	}
	*q = 0;
	return name;
}
