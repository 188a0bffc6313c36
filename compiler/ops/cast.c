/*
 * compiler/ops/cast.c - the Cast conversions the numeric engine of
 * elementwise.c does not do (run_cast() there calls these):
 *   - to bfloat16: the top 16 bits of the float32 value (truncation, NaN
 *     kept a NaN), as ONNX 1.12's reference and backend test data do;
 *   - to string: numbers as numpy's str() writes them (the shortest
 *     decimal that reads back to the same value; positional between 1e-4
 *     and 1e16, else scientific with a two-digit exponent at least;
 *     "nan", "inf", "-inf"), integers in decimal, bools "True"/"False";
 *   - from string: a decimal number, "nan", "inf" or "infinity" (any
 *     case, optional sign, surrounding blanks) to a float type; a decimal
 *     integer to an integer type.  Anything else is an error naming the
 *     element.
 * String bytes are allocated with op_scratch(): when folding that is the
 * graph's arena; at run time the session's pool, which a task with a
 * string output allocates from (runtime/rt.h Task.keep) and which lives
 * until the next run.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opimpl.h"

/* ---- to bfloat16 --------------------------------------------------------- */

static uint16_t bf16_trunc(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	if (f != f)
		return (uint16_t)((u >> 16) | 0x7fc0);
	return (uint16_t)(u >> 16);
}

int cast_to_bfloat16(OpCtx *c, const Tensor *x)
{
	Tensor *y = op_new_output_zeroed(c, 0, DT_BFLOAT16, &x->shape);
	if (!y)
		return -1;
	uint16_t *yp = tensor_mut(y);
	int64_t n = shape_numel(&x->shape);
	if (x->dtype == DT_FLOAT) {
		const float *xp = x->data;
		for (int64_t i = 0; i < n; i++)
			yp[i] = bf16_trunc(xp[i]);
	} else if (x->dtype == DT_UINT64) {
		const uint64_t *xp = x->data;
		for (int64_t i = 0; i < n; i++)
			yp[i] = bf16_trunc((float)xp[i]);
	} else {
		for (int64_t i = 0; i < n; i++)
			yp[i] = bf16_trunc((float)tensor_get_f64(x, i));
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- to string ----------------------------------------------------------- */

/* v read back in dtype dt (float32, float16 or double precision). */
static double reread(int dt, double v)
{
	switch (dt) {
	case DT_FLOAT16: return minifloat_to(minifloat_from(v, 5, 10), 5, 10);
	case DT_DOUBLE: return v;
	default: return (float)v;
	}
}

/* numpy's str() of v, a value of float dtype dt, into buf[40]. */
static void float_str(int dt, double v, char *buf)
{
	char e[40], dig[20];
	int p, ex, len = 0;
	if (v != v) {
		strcpy(buf, "nan");
		return;
	}
	if (isinf(v)) {
		strcpy(buf, v < 0 ? "-inf" : "inf");
		return;
	}
	if (v == 0) {
		strcpy(buf, signbit(v) ? "-0.0" : "0.0");
		return;
	}
	/* the fewest significant digits that read back to v */
	for (p = 1; p < 17; p++) {
		snprintf(e, sizeof(e), "%.*e", p - 1, v);
		if (reread(dt, strtod(e, NULL)) == v)
			break;
	}
	snprintf(e, sizeof(e), "%.*e", p - 1, v);
	const char *s = e + (e[0] == '-');
	for (int i = 0; s[i] && s[i] != 'e'; i++)
		if (isdigit((unsigned char)s[i]))
			dig[len++] = s[i];
	while (len > 1 && dig[len - 1] == '0')
		len--;
	dig[len] = 0;
	ex = atoi(strchr(s, 'e') + 1);
	char *o = buf;
	if (v < 0)
		*o++ = '-';
	if (fabs(v) < 1e-4 || fabs(v) >= 1e16) {
		*o++ = dig[0];
		if (len > 1)
			o += sprintf(o, ".%s", dig + 1);
		sprintf(o, "e%c%02d", ex < 0 ? '-' : '+', ex < 0 ? -ex : ex);
	} else if (ex >= 0) {
		for (int i = 0; i <= ex; i++)
			*o++ = i < len ? dig[i] : '0';
		sprintf(o, ".%s", len > ex + 1 ? dig + ex + 1 : "0");
	} else {
		o += sprintf(o, "0.");
		for (int i = 0; i < -ex - 1; i++)
			*o++ = '0';
		strcpy(o, dig);
	}
}

int cast_to_string(OpCtx *c, const Tensor *x)
{
	Tensor *y = op_new_output_zeroed(c, 0, DT_STRING, &x->shape);
	if (!y)
		return -1;
	Bytes *o = tensor_mut(y);
	int64_t n = shape_numel(&x->shape);
	bool fl = DTS(x->dtype) & DTS_FLOAT;
	for (int64_t i = 0; i < n; i++) {
		char buf[48];
		if (x->dtype == DT_BFLOAT16)
			float_str(DT_FLOAT, tensor_get_f64(x, i), buf);
		else if (fl)
			float_str(x->dtype, tensor_get_f64(x, i), buf);
		else if (x->dtype == DT_BOOL)
			strcpy(buf, tensor_get_i64(x, i) ? "True" : "False");
		else if (x->dtype == DT_UINT64)
			snprintf(buf, sizeof(buf), "%llu",
				 (unsigned long long)((const uint64_t *)
							      x->data)[i]);
		else
			snprintf(buf, sizeof(buf), "%lld",
				 (long long)tensor_get_i64(x, i));
		size_t len = strlen(buf);
		uint8_t *p = op_scratch_zeroed(c, len + 1);
		if (!p)
			return -1;
		memcpy(p, buf, len + 1);
		o[i] = (Bytes){ .len = len, .data = p };
	}
	op_set_const(c, 0, y);
	return 0;
}

/* ---- from string --------------------------------------------------------- */

/* The string's bytes as a C string (blanks trimmed) in buf[n]; false if
 * it does not fit or holds a NUL. */
static bool trimmed(const Bytes *b, char *buf, size_t n)
{
	size_t s = 0, e = b->len;
	while (s < e && isspace(b->data[s]))
		s++;
	while (e > s && isspace(b->data[e - 1]))
		e--;
	if (e - s >= n || memchr(b->data + s, 0, e - s))
		return false;
	memcpy(buf, b->data + s, e - s);
	buf[e - s] = 0;
	return true;
}

/* A decimal float (no hex, as Python's float() reads). */
static bool parse_float(const char *s, double *v)
{
	char *end;
	const char *d = s + (*s == '+' || *s == '-');
	if (!*s || (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')))
		return false;
	*v = strtod(s, &end); /* out of range: inf or 0, as Python's */
	return *end == 0;
}

static bool parse_int(const char *s, bool sign, int64_t *v)
{
	char *end;
	if (!*s || isspace((unsigned char)*s) || (!sign && *s == '-'))
		return false;
	errno = 0;
	if (sign)
		*v = strtoll(s, &end, 10);
	else
		*v = (int64_t)strtoull(s, &end, 10);
	return *end == 0 && errno == 0;
}

int cast_from_string(OpCtx *c, const Tensor *x, int dt)
{
	if (dt == DT_BOOL)
		return op_error(c, "a cast from string to bool is not defined");
	Tensor *y = op_new_output_zeroed(c, 0, dt, &x->shape);
	if (!y)
		return -1;
	const Bytes *w = x->data;
	int64_t n = shape_numel(&x->shape);
	bool fl = DTS(dt) & DTS_FLOAT;
	for (int64_t i = 0; i < n; i++) {
		char buf[128];
		double f = 0;
		int64_t k = 0;
		bool ok = trimmed(&w[i], buf, sizeof(buf));
		if (ok && fl)
			ok = parse_float(buf, &f);
		else if (ok)
			ok = parse_int(buf, dt != DT_UINT64, &k);
		if (!ok)
			return op_error(c, "element %lld ('%.*s') is not %s "
					"number", (long long)i,
					(int)(w[i].len < 64 ? w[i].len : 64),
					(const char *)w[i].data,
					fl ? "a" : "an integer");
		if (dt == DT_BFLOAT16)
			((uint16_t *)tensor_mut(y))[i] = bf16_trunc((float)f);
		else if (dt == DT_FLOAT)
			((float *)tensor_mut(y))[i] = (float)f;
		else if (fl)
			tensor_set_f64(y, i, f);
		else if (dt == DT_UINT64)
			((uint64_t *)tensor_mut(y))[i] = (uint64_t)k;
		else
			tensor_set_i64(y, i, k);
	}
	op_set_const(c, 0, y);
	return 0;
}
