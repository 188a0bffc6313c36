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

/* The value of 'key' in the header dict: a pointer just past "'key':". */
static const char *dict_value(const char *h, const char *key)
{
	char pat[32];
	snprintf(pat, sizeof(pat), "'%s':", key);
	const char *p = strstr(h, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	return p;
}

static int parse_shape(const char *p, Shape *s)
{
	if (*p++ != '(')
		return -1;
	s->rank = 0;
	for (;;) {
		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ')')
			return 0;
		char *end;
		errno = 0;
		long long d = strtoll(p, &end, 10);
		if (end == p || errno || d < 0 || s->rank == MAX_RANK)
			return -1;
		s->dims[s->rank++] = d;
		p = end;
	}
}

static int parse_header(const char *h, int *dt, Shape *s)
{
	const char *d = dict_value(h, "descr"), *f = dict_value(h, "fortran_order");
	const char *sh = dict_value(h, "shape");
	char descr[8] = "";
	if (!d || !f || !sh || *d != '\'')
		return error("the header is not a .npy header dict");
	size_t n = strcspn(d + 1, "'");
	if (n < sizeof(descr))
		memcpy(descr, d + 1, n);
	if (!(*dt = descr_dtype(descr)))
		return error("dtype '%.*s' is not one gearc reads (little-endian "
			     "numbers or bool)", (int)(n < 16 ? n : 16), d + 1);
	if (strncmp(f, "False", 5))
		return error("the array is in Fortran order; save it in C order");
	if (parse_shape(sh, s) < 0)
		return error("the shape is not a tuple of at most %d dims",
			     MAX_RANK);
	return 0;
}

static Tensor *npy_parse(Arena *a, const uint8_t *p, size_t size)
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
	char *h = arena_strndup(a, (const char *)p + at, hl);
	int dt = DT_UNDEFINED;
	Shape s = { 0 };
	if (parse_header(h, &dt, &s) < 0)
		return NULL;
	int64_t bytes = shape_bytes(&s, dt);
	if (bytes < 0 || (uint64_t)bytes != size - at - hl)
		return error("the data holds %zu bytes, the shape needs %lld",
			     size - at - hl, (long long)bytes), NULL;
	return tensor_new(a, NULL, dt, &s, p + at + hl);
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

int npy_write(const char *path, int dtype, const Shape *s, const void *data)
{
	const char *d = dtype_descr(dtype);
	if (!d)
		return error("%s: %s cannot be written as .npy", path,
			     dtype_name(dtype));
	char h[512];
	int n = snprintf(h, sizeof(h), "{'descr': '%c%s', 'fortran_order': "
			 "False, 'shape': (", dtype_size(dtype) == 1 ? '|' : '<',
			 d);
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
	const void *parts[] = { pre, h, data };
	const size_t sizes[] = { sizeof(pre), hl,
				 (size_t)shape_bytes(s, dtype) };
	return om_write_bytes("--output-dir", path, parts, sizes, 3);
}
