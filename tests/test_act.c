/*
 * tests/test_act.c - the activation table (compiler/act.h): each
 * activation's one fp32 form is within the accuracy its row states of
 * its double form, over a sweep of float inputs (every 4099th bit
 * pattern up to 1e4 in magnitude, and [-16, 16] in steps of 2^-12);
 * NaN stays NaN.  A faster fp32 form of less accuracy fails here.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "compiler/act.h"

/* The parameters the sweep uses: the defaults, or Clip's and Linear's
 * own (they have no defaults that exercise them). */
static void sweep_params(int k, float *a, float *b)
{
	*a = act_info[k].adef, *b = act_info[k].bdef;
	if (k == ACT_Clip)
		*a = -1, *b = 6;
	if (k == ACT_Linear)
		*a = 0.7f, *b = 0.3f;
}

typedef struct Worst {
	double excess; /* |f32 - f64| - (rel |f64| + abs), largest */
	float x;
} Worst;

static void check_at(int k, float x, float a, float b, Worst *w)
{
	double y = act_f64(k, x, a, b);
	float z = act_f32(k, x, a, b);
	const ActInfo *ai = &act_info[k];
	double e = fabs((double)z - y) - (ai->rel * fabs(y) + ai->abs);
	if (isnan(y) != isnan(z))
		e = INFINITY;
	if (e > w->excess)
		w->excess = e, w->x = x;
}

static Worst sweep(int k)
{
	float a, b;
	Worst w = { 0, 0 };
	sweep_params(k, &a, &b);
	for (uint32_t u = 0; u < 0x461c4000u; u += 4099) /* |x| <= 1e4 */
		for (int sign = 0; sign < 2; sign++) {
			uint32_t bits = u | (sign ? 0x80000000u : 0);
			float x;
			memcpy(&x, &bits, sizeof(x));
			check_at(k, x, a, b, &w);
		}
	for (int i = -65536; i <= 65536; i++)
		check_at(k, (float)i / 4096, a, b, &w);
	check_at(k, NAN, a, b, &w);
	return w;
}

Test(act, fp32_forms_within_stated_accuracy)
{
	for (int k = 0; k < ACT_COUNT; k++) {
		Worst w = sweep(k);
		const ActInfo *ai = &act_info[k];
		cr_expect(w.excess <= 0, "%s at %.9g: f32 %.9g, f64 %.17g, "
			  "beyond rel %g abs %g by %g", ai->name, w.x,
			  act_f32(k, w.x, ai->adef, ai->bdef),
			  act_f64(k, w.x, ai->adef, ai->bdef), ai->rel,
			  ai->abs, w.excess);
	}
}

Test(act, names_and_ops_are_unique)
{
	for (int k = 0; k < ACT_COUNT; k++) {
		const ActInfo *ai = &act_info[k];
		cr_expect_eq(act_lookup(ai->name, strlen(ai->name)), k, "%s",
			     ai->name);
		for (int j = 0; j < k; j++)
			cr_expect(!ai->op || act_info[j].op != ai->op,
				  "%s and %s are both op %d", ai->name,
				  act_info[j].name, ai->op);
	}
	cr_expect_eq(act_lookup("Gel", 3), -1);
}

/* Sigmoid's fp32 form is 0 from -88 down to -inf, so that x Sigmoid(x)
 * at -inf is NaN as ONNX computes it (QuickGelu's standard form), not
 * -inf times a tiny positive value. */
Test(act, sigmoid_is_zero_at_minus_inf)
{
	cr_expect_eq(act_sigmoid_f32(-INFINITY), 0.0f);
	cr_expect_eq(act_sigmoid_f32(-89.0f), 0.0f);
	cr_expect(isnan(-INFINITY * act_sigmoid_f32(-INFINITY)));
	cr_expect_gt(act_sigmoid_f32(-87.0f), 0.0f);
}
