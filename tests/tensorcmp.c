/* tests/tensorcmp.c - tensor_close() (tensorcmp.h). */
#include <math.h>
#include <string.h>

#include "tensorcmp.h"

static bool is_float(int dt)
{
	return dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_FLOAT16 ||
	       dt == DT_BFLOAT16;
}

static bool same_dtype(int got, int want)
{
	return got == want || (got == DT_BFLOAT16 && want == DT_UINT16);
}

static double elem_f64(const Tensor *t, int dt, int64_t i)
{
	if (dt == DT_BFLOAT16)
		return minifloat_to(((const uint16_t *)t->data)[i], 8, 7);
	return tensor_get_f64(t, i);
}

static int compare_floats(const Tensor *got, const Tensor *want, int64_t n,
			  double rtol, double atol)
{
	int64_t bad = -1;
	double worst = 0;
	for (int64_t i = 0; i < n; i++) {
		double a = elem_f64(got, got->dtype, i);
		double b = elem_f64(want, got->dtype, i);
		if ((isnan(a) && isnan(b)) || a == b)
			continue;
		double err = fabs(a - b);
		if (isnan(err) || err > atol + rtol * fabs(b)) {
			if (bad < 0)
				bad = i;
			if (isnan(err) || err > worst)
				worst = isnan(err) ? INFINITY : err;
		}
	}
	if (bad < 0)
		return 0;
	return error("element %lld is %.9g, expected %.9g (largest error "
		     "%.3g)", (long long)bad, elem_f64(got, got->dtype, bad),
		     elem_f64(want, got->dtype, bad), worst);
}

static int compare_strings(const Tensor *got, const Tensor *want, int64_t n)
{
	const Bytes *a = got->data, *b = want->data;
	for (int64_t i = 0; i < n; i++)
		if (a[i].len != b[i].len ||
		    (a[i].len && memcmp(a[i].data, b[i].data, a[i].len)))
			return error("string element %lld differs",
				     (long long)i);
	return 0;
}

static int compare_ints(const Tensor *got, const Tensor *want, int64_t n)
{
	size_t es = dtype_size(got->dtype);
	const uint8_t *a = got->data, *b = want->data;
	for (int64_t i = 0; i < n; i++)
		if (memcmp(a + (size_t)i * es, b + (size_t)i * es, es))
			return error("element %lld is %lld, expected %lld",
				     (long long)i,
				     (long long)tensor_get_i64(got, i),
				     (long long)tensor_get_i64(want, i));
	return 0;
}

int tensor_close(const Tensor *got, const Tensor *want, double rtol,
		 double atol)
{
	char a[160], b[160];
	if (!same_dtype(got->dtype, want->dtype))
		return error("dtype %s, expected %s", dtype_name(got->dtype),
			     dtype_name(want->dtype));
	if (!shape_equal(&got->shape, &want->shape))
		return error("shape %s, expected %s",
			     shape_str(&got->shape, a, sizeof(a)),
			     shape_str(&want->shape, b, sizeof(b)));
	int64_t n = shape_numel(&got->shape);
	if (got->dtype == DT_STRING)
		return compare_strings(got, want, n);
	if (is_float(got->dtype))
		return compare_floats(got, want, n, rtol, atol);
	return compare_ints(got, want, n);
}
