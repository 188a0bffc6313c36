/*
 * tests/test_gearspec.c - --input_shape and the gear options.
 *
 * Every rule of compiler/gearspec.h: the return value, the exact message
 * and which of gear_parse (usage error, exit 2) and gear_apply (exit 1)
 * caught it.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compiler/gearspec.h"

/* ---- models ---------------------------------------------------------- */

static ValId add_input(Model *m, const char *name, int dt, int32_t rank, ...)
{
	Graph *g = m->graph;
	ValId id = graph_add_value(g, name, VAL_INPUT);
	Value *v = &g->vals[id];
	va_list ap;
	v->dtype = dt;
	v->shape.rank = rank;
	va_start(ap, rank);
	for (int32_t d = 0; d < rank; d++)
		v->shape.dims[d] = va_arg(ap, int);
	va_end(ap);
	ValId *in = arena_array(&m->arena, (size_t)g->ninputs + 1, sizeof(*in));
	if (g->ninputs)
		memcpy(in, g->inputs, (size_t)g->ninputs * sizeof(*in));
	in[g->ninputs++] = id;
	g->inputs = in;
	return id;
}

static void add_weight(Model *m, const char *name)
{
	Graph *g = m->graph;
	int64_t dims[1] = { 4 };
	Shape s = shape_of(1, dims);
	ValId id = graph_add_value(g, name, VAL_WEIGHT);
	g->vals[id].dtype = DT_FLOAT;
	g->vals[id].shape = s;
	g->vals[id].konst = tensor_new(&m->arena, name, DT_FLOAT, &s, NULL);
}

static Model *new_model(void)
{
	Model *m = model_new();
	m->graph = graph_new(&m->arena, "main", NULL);
	return m;
}

/* x:[-1,3,-1,-1] */
static Model *model1(void)
{
	Model *m = new_model();
	add_input(m, "x", DT_FLOAT, 4, -1, 3, -1, -1);
	add_weight(m, "conv.weight");
	return m;
}

/* x:[-1,3,-1,-1], mask:[-1,-1] */
static Model *model2(void)
{
	Model *m = model1();
	add_input(m, "mask", DT_INT64, 2, -1, -1);
	return m;
}

/* tokens:[-1,-1] int64, mask:[-1,-1], image:[1,3,224,224] */
static Model *model3(void)
{
	Model *m = new_model();
	add_input(m, "tokens", DT_INT64, 2, -1, -1);
	add_input(m, "mask", DT_INT64, 2, -1, -1);
	add_input(m, "image", DT_FLOAT, 4, 1, 3, 224, 224);
	add_weight(m, "emb");
	return m;
}

static ValId val_named(const Model *m, const char *name)
{
	for (ValId v = 0; v < m->graph->nvals; v++)
		if (!strcmp(m->graph->vals[v].name, name))
			return v;
	return -1;
}

static const Shape *shape_named(const Model *m, const char *name)
{
	ValId v = val_named(m, name);
	cr_assert(v >= 0, "no value %s", name);
	return &m->graph->vals[v].shape;
}

/* ---- helpers ---------------------------------------------------------- */

static GearOptions opts(const char *is, const char *batch, const char *image,
			const char *dims, const char *fmt)
{
	GearOptions o = { is, batch, image, dims, fmt };
	return o;
}

static void parse_ok(ParsedGears *p, GearOptions o)
{
	clear_error();
	int rc = gear_parse(p, &o);
	cr_assert_eq(rc, 0, "gear_parse failed: %s", last_error());
}

/* gear_parse must reject o with exactly msg. */
static void parse_err(GearOptions o, const char *msg)
{
	ParsedGears p;
	clear_error();
	cr_assert_eq(gear_parse(&p, &o), -1, "gear_parse accepted; want: %s",
		     msg);
	cr_assert_str_eq(last_error(), msg);
	cr_assert_eq(p.nshapes, 0);
	cr_assert_null(p.shapes);
	cr_assert_null(p.table);
	gear_parsed_release(&p);
}

/* gear_parse must accept o and gear_apply on m reject it with exactly
 * msg, leaving m unchanged.  Frees m. */
static void apply_err(Model *m, GearOptions o, const char *msg)
{
	ParsedGears p;
	Shape before[8];
	int32_t n = m->graph->ninputs;
	for (int32_t i = 0; i < n && i < 8; i++)
		before[i] = m->graph->vals[m->graph->inputs[i]].shape;
	parse_ok(&p, o);
	clear_error();
	cr_assert_eq(gear_apply(m, &p), -1, "gear_apply accepted; want: %s",
		     msg);
	cr_assert_str_eq(last_error(), msg);
	cr_assert_eq(m->mode, MODE_STATIC);
	cr_assert_null(m->gears);
	cr_assert_eq(m->noptions, 0);
	for (int32_t i = 0; i < n && i < 8; i++)
		cr_assert(shape_equal(&before[i],
				      &m->graph->vals[m->graph->inputs[i]].shape));
	gear_parsed_release(&p);
	model_free(m);
}

static void apply_ok(Model *m, ParsedGears *p, GearOptions o)
{
	parse_ok(p, o);
	clear_error();
	cr_assert_eq(gear_apply(m, p), 0, "gear_apply failed: %s",
		     last_error());
}

static void assert_table(const int64_t *t, const int64_t *want, size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(t[i], want[i], "table[%zu] = %lld, want %lld", i,
			     (long long)t[i], (long long)want[i]);
}

static void assert_shape(Shape s, int32_t rank, const int64_t *dims)
{
	cr_assert_eq(s.rank, rank);
	for (int32_t d = 0; d < rank; d++)
		cr_assert_eq(s.dims[d], dims[d], "dim %d = %lld, want %lld", d,
			     (long long)s.dims[d], (long long)dims[d]);
}

/* ==== gear_parse: accepted ============================================= */

Test(gearspec, no_options_is_static)
{
	ParsedGears p;
	parse_ok(&p, opts(NULL, NULL, NULL, NULL, NULL));
	cr_assert_eq(p.mode, MODE_STATIC);
	cr_assert_eq(p.format, FMT_NCHW);
	cr_assert_eq(p.nshapes, 0);
	cr_assert_eq(p.ngears, 0);
	cr_assert_null(p.table);
	gear_parsed_release(&p);
}

Test(gearspec, static_input_shape)
{
	ParsedGears p;
	parse_ok(&p, opts("x:1,3,224,224;mask:1,16", NULL, NULL, NULL, NULL));
	cr_assert_eq(p.mode, MODE_STATIC);
	cr_assert_eq(p.nshapes, 2);
	cr_assert_str_eq(p.shapes[0].name, "x");
	assert_shape(shape_of(p.shapes[0].rank, p.shapes[0].dims), 4,
		     (int64_t[]){ 1, 3, 224, 224 });
	cr_assert_str_eq(p.shapes[1].name, "mask");
	cr_assert_eq(p.shapes[1].rank, 2);
	gear_parsed_release(&p);
}

/* 0 is a dim (a zero-size tensor, valid in ONNX), also beside a gear dim;
 * a gear value of 0 stays refused, as atc refuses it. */
Test(gearspec, zero_dims)
{
	ParsedGears p;
	parse_ok(&p, opts("x:0,3;y:2, 0 ,4", NULL, NULL, NULL, NULL));
	assert_shape(shape_of(p.shapes[0].rank, p.shapes[0].dims), 2,
		     (int64_t[]){ 0, 3 });
	assert_shape(shape_of(p.shapes[1].rank, p.shapes[1].dims), 3,
		     (int64_t[]){ 2, 0, 4 });
	gear_parsed_release(&p);
	parse_ok(&p, opts("x:-1,0", "1,2", NULL, NULL, NULL));
	cr_assert_eq(p.mode, MODE_BATCH);
	gear_parsed_release(&p);
	parse_err(opts("x:-1,3", "0,2", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 1 (\"0\") must be a positive "
		  "integer");
}

Test(gearspec, name_split_at_last_colon)
{
	ParsedGears p;
	parse_ok(&p, opts("input:0:1,2;a:b:c:3", NULL, NULL, NULL, NULL));
	cr_assert_str_eq(p.shapes[0].name, "input:0");
	cr_assert_eq(p.shapes[0].rank, 2);
	cr_assert_str_eq(p.shapes[1].name, "a:b:c");
	cr_assert_eq(p.shapes[1].dims[0], 3);
	gear_parsed_release(&p);
}

Test(gearspec, names_and_values_trimmed)
{
	ParsedGears p;
	parse_ok(&p, opts("  x :-1, 3 ;\ty\t: -1 ", " 1 , 8 ", NULL, NULL,
			  NULL));
	cr_assert_str_eq(p.shapes[0].name, "x");
	cr_assert_str_eq(p.shapes[1].name, "y");
	cr_assert_eq(p.shapes[0].dims[1], 3);
	assert_table(p.table, (int64_t[]){ 1, 1, 8, 8 }, 4);
	gear_parsed_release(&p);
}

Test(gearspec, batch_table_repeats_value_per_input)
{
	ParsedGears p;
	parse_ok(&p, opts("a:-1,3;b:-1,5", "1,8,16", NULL, NULL, NULL));
	cr_assert_eq(p.mode, MODE_BATCH);
	cr_assert_eq(p.ngears, 3);
	cr_assert_eq(p.nvals, 2);
	assert_table(p.table, (int64_t[]){ 1, 1, 8, 8, 16, 16 }, 6);
	gear_parsed_release(&p);
}

Test(gearspec, batch_static_inputs_take_no_values)
{
	ParsedGears p;
	parse_ok(&p, opts("a:-1,3;b:2,5;c:-1", "2,4", NULL, NULL, NULL));
	cr_assert_eq(p.nvals, 2);
	assert_table(p.table, (int64_t[]){ 2, 2, 4, 4 }, 4);
	gear_parsed_release(&p);
}

Test(gearspec, image_size_nchw)
{
	ParsedGears p;
	parse_ok(&p, opts("x:1,3,-1,-1", NULL, "224,224;448,320", NULL, NULL));
	cr_assert_eq(p.mode, MODE_IMAGE_SIZE);
	cr_assert_eq(p.format, FMT_NCHW);
	cr_assert_eq(p.ngears, 2);
	cr_assert_eq(p.nvals, 2);
	assert_table(p.table, (int64_t[]){ 224, 224, 448, 320 }, 4);
	gear_parsed_release(&p);
}

Test(gearspec, image_size_nhwc_two_inputs)
{
	ParsedGears p;
	parse_ok(&p, opts("a:1,-1,-1,3;b:2,-1,-1,1", NULL,
			  "224,225;448,449;64,65", NULL, "NHWC"));
	cr_assert_eq(p.format, FMT_NHWC);
	cr_assert_eq(p.nvals, 4);
	assert_table(p.table,
		     (int64_t[]){ 224, 225, 224, 225, 448, 449, 448, 449, 64,
				  65, 64, 65 },
		     12);
	gear_parsed_release(&p);
}

Test(gearspec, dims_three_inputs)
{
	ParsedGears p;
	parse_ok(&p, opts("tokens:-1,-1;mask:-1,-1;image:1,3,224,224", NULL,
			  NULL, "1,32,1,32;4,64,4,64", NULL));
	cr_assert_eq(p.mode, MODE_DIMS);
	cr_assert_eq(p.ngears, 2);
	cr_assert_eq(p.nvals, 4);
	assert_table(p.table, (int64_t[]){ 1, 32, 1, 32, 4, 64, 4, 64 }, 8);
	gear_parsed_release(&p);
}

Test(gearspec, dims_seed_example)
{
	ParsedGears p;
	parse_ok(&p, opts("data:1,1,40,-1;label:1,-1;mask:-1,-1", NULL, NULL,
			  "20,20,1,1;40,40,2,2;80,60,4,4", NULL));
	cr_assert_eq(p.ngears, 3);
	cr_assert_eq(p.nvals, 4);
	assert_table(p.table + 8, (int64_t[]){ 80, 60, 4, 4 }, 4);
	gear_parsed_release(&p);
}

Test(gearspec, one_trailing_gear_separator_is_ignored)
{
	ParsedGears p;
	parse_ok(&p, opts("x:-1,3", "1,8,", NULL, NULL, NULL));
	cr_assert_eq(p.ngears, 2);
	gear_parsed_release(&p);
	parse_ok(&p, opts("x:1,3,-1,-1", NULL, "224,224;448,448;", NULL,
			  NULL));
	cr_assert_eq(p.ngears, 2);
	gear_parsed_release(&p);
	parse_ok(&p, opts("x:-1,-1", NULL, NULL, "1,32;1,64; ", NULL));
	cr_assert_eq(p.ngears, 2);
	gear_parsed_release(&p);
}

Test(gearspec, int64_max_value)
{
	ParsedGears p;
	parse_ok(&p, opts("x:-1,9223372036854775807", "1,9223372036854775807",
			  NULL, NULL, NULL));
	cr_assert_eq(p.shapes[0].dims[1], INT64_MAX);
	cr_assert_eq(p.table[1], INT64_MAX);
	gear_parsed_release(&p);
}

Test(gearspec, hundred_gears)
{
	char buf[1024] = "";
	ParsedGears p;
	for (int i = 1; i <= 100; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%d",
			 i > 1 ? "," : "", i);
	parse_ok(&p, opts("x:-1", buf, NULL, NULL, NULL));
	cr_assert_eq(p.ngears, 100);
	cr_assert_eq(p.table[99], 100);
	gear_parsed_release(&p);
}

Test(gearspec, eight_dims)
{
	ParsedGears p;
	parse_ok(&p, opts("x:1,2,3,4,5,6,7,-1", NULL, NULL, "3;4", NULL));
	cr_assert_eq(p.shapes[0].rank, 8);
	gear_parsed_release(&p);
}

Test(gearspec, input_format_without_image_size)
{
	ParsedGears p;
	parse_ok(&p, opts("x:-1,-1", NULL, NULL, "1,2;3,4", "ND"));
	cr_assert_eq(p.format, FMT_ND);
	gear_parsed_release(&p);
}

Test(gearspec, release_twice_is_safe)
{
	ParsedGears p;
	parse_ok(&p, opts("x:-1,-1", NULL, NULL, "1,2;3,4", "ND"));
	gear_parsed_release(&p);
	gear_parsed_release(&p);
}

/* ==== gear_parse: flag combinations ==================================== */

Test(gearspec, two_gear_options)
{
	parse_err(opts("x:-1,3", "1,2", NULL, "1;2", NULL),
		  "--dynamic_batch_size and --dynamic_dims cannot be used "
		  "together; give only one of --dynamic_batch_size, "
		  "--dynamic_image_size and --dynamic_dims");
	parse_err(opts("x:-1,3", NULL, "1,2;3,4", "1;2", NULL),
		  "--dynamic_image_size and --dynamic_dims cannot be used "
		  "together; give only one of --dynamic_batch_size, "
		  "--dynamic_image_size and --dynamic_dims");
}

Test(gearspec, gear_option_needs_input_shape)
{
	parse_err(opts(NULL, "1,2", NULL, NULL, NULL),
		  "--dynamic_batch_size needs --input_shape to say which dims "
		  "are gear dims (-1)");
	parse_err(opts(NULL, NULL, "1,2;3,4", NULL, NULL),
		  "--dynamic_image_size needs --input_shape to say which dims "
		  "are gear dims (-1)");
	parse_err(opts(NULL, NULL, NULL, "1;2", NULL),
		  "--dynamic_dims needs --input_shape to say which dims are "
		  "gear dims (-1)");
}

Test(gearspec, bad_input_format)
{
	parse_err(opts("x:1", NULL, NULL, NULL, "NCWH"),
		  "--input_format: \"NCWH\" is not supported; use NCHW, NHWC "
		  "or ND");
	parse_err(opts("x:1", NULL, NULL, NULL, "nchw"),
		  "--input_format: \"nchw\" is not supported; use NCHW, NHWC "
		  "or ND");
	parse_err(opts("x:1", NULL, NULL, NULL, ""),
		  "--input_format: \"\" is not supported; use NCHW, NHWC or "
		  "ND");
}

Test(gearspec, nd_with_image_size)
{
	parse_err(opts("x:1,3,-1,-1", NULL, "1,2;3,4", NULL, "ND"),
		  "--input_format: ND cannot be used with --dynamic_image_size, "
		  "which needs NCHW or NHWC to find H and W");
}

Test(gearspec, minus_one_without_gear_option)
{
	parse_err(opts("x:1,3;y:-1,3", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 2 (\"y:-1,3\") has -1 at dim 0, but no "
		  "gear option is given; add --dynamic_batch_size, "
		  "--dynamic_image_size or --dynamic_dims, or give a fixed "
		  "size");
}

Test(gearspec, gear_option_without_minus_one)
{
	parse_err(opts("x:1,3", "1,2", NULL, NULL, NULL),
		  "--input_shape: no dim is -1, but --dynamic_batch_size needs "
		  "at least one gear dim (-1)");
	parse_err(opts("x:1,3,4,4", NULL, "1,2;3,4", NULL, NULL),
		  "--input_shape: no dim is -1, but --dynamic_image_size needs "
		  "at least one gear dim (-1)");
	parse_err(opts("x:1,3", NULL, NULL, "1;2", NULL),
		  "--input_shape: no dim is -1, but --dynamic_dims needs at "
		  "least one gear dim (-1)");
}

/* ==== gear_parse: --input_shape syntax ================================= */

Test(gearspec, input_shape_empty)
{
	const char *m = "--input_shape: empty value; expected "
			"\"name:d0,d1,...\" entries separated by ';'";
	parse_err(opts("", NULL, NULL, NULL, NULL), m);
	parse_err(opts("  ", "1,2", NULL, NULL, NULL), m);
}

Test(gearspec, input_shape_empty_entry)
{
	parse_err(opts("x:1;;y:2", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 2 is empty (stray ';')");
	parse_err(opts(";x:1", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 is empty (stray ';')");
	parse_err(opts("x:1;", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 2 is empty (stray ';')");
	parse_err(opts(";;", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 is empty (stray ';')");
}

Test(gearspec, input_shape_missing_colon)
{
	parse_err(opts("x:1,2;mask", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 2 (\"mask\") has no ':' between name "
		  "and dims");
	parse_err(opts("1,2,3", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"1,2,3\") has no ':' between name "
		  "and dims");
}

Test(gearspec, input_shape_empty_name)
{
	parse_err(opts(":1,2", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\":1,2\") has no name before ':'");
	parse_err(opts("x:1; :2", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 2 (\":2\") has no name before ':'");
}

/* atc's scalar syntax: "sr:" (no dims) is rank 0. */
Test(gearspec, input_shape_empty_dims_is_scalar)
{
	ParsedGears p;
	parse_ok(&p, opts("x:1,3,8,8;sr: ", NULL, NULL, NULL, NULL));
	cr_assert_eq(p.nshapes, 2);
	cr_assert_str_eq(p.shapes[1].name, "sr");
	cr_assert_eq(p.shapes[1].rank, 0);
	gear_parsed_release(&p);
}

Test(gearspec, scalar_entry_applies_rank0)
{
	Model *m = model1();
	ParsedGears p;
	add_input(m, "sr", DT_INT64, -1);
	apply_ok(m, &p, opts("x:-1,3,8,8;sr:", "1,2", NULL, NULL, NULL));
	cr_assert_eq(shape_named(m, "sr")->rank, 0);
	cr_assert_eq(m->gears->ninputs, 1);
	gear_parsed_release(&p);
	model_free(m);
	/* a model scalar written with a dim: the message shows the syntax */
	m = model1();
	add_input(m, "sr", DT_INT64, 0);
	apply_err(m, opts("x:1,3,8,8;sr:1", NULL, NULL, NULL, NULL),
		  "--input_shape: 'sr' has 1 dim, but the model declares "
		  "rank 0 ([]); write 'sr:' for a scalar");
}

Test(gearspec, input_shape_bad_dims)
{
	parse_err(opts("x:1,,2", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:1,,2\"): dim 1 is empty (stray "
		  "',')");
	parse_err(opts("x:1,2,", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:1,2,\"): dim 2 is empty (stray "
		  "',')");
	parse_err(opts("x:,1", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:,1\"): dim 0 is empty (stray "
		  "',')");
	parse_err(opts("x:1,-0", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:1,-0\"): dim 1 (\"-0\") must be "
		  "an integer >= 0 or -1");
	parse_err(opts("x:-2,3", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:-2,3\"): dim 0 (\"-2\") must be "
		  "an integer >= 0 or -1");
	parse_err(opts("x:abc", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:abc\"): dim 0 (\"abc\") must be "
		  "an integer >= 0 or -1");
	parse_err(opts("x:1.5", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:1.5\"): dim 0 (\"1.5\") must be "
		  "an integer >= 0 or -1");
	parse_err(opts("x:+3", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:+3\"): dim 0 (\"+3\") must be "
		  "an integer >= 0 or -1");
	parse_err(opts("x:1 2", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:1 2\"): dim 0 (\"1 2\") must be "
		  "an integer >= 0 or -1");
	parse_err(opts("x:3,99999999999999999999", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:3,99999999999999999999\"): dim 1 "
		  "(\"99999999999999999999\") is too large for int64");
	parse_err(opts("x:9223372036854775808", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:9223372036854775808\"): dim 0 "
		  "(\"9223372036854775808\") is too large for int64");
}

Test(gearspec, input_shape_too_many_dims)
{
	parse_err(opts("x:1,2,3,4,5,6,7,8,9", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:1,2,3,4,5,6,7,8,9\") has 9 dims, "
		  "but at most 8 are supported");
}

Test(gearspec, input_shape_duplicate_name)
{
	parse_err(opts("x:1,2;y:3;x:1,2", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 3 (\"x:1,2\") gives 'x' again (first in "
		  "entry 1); each input may be listed once");
	parse_err(opts("x:-1;  x :-1", "1,2", NULL, NULL, NULL),
		  "--input_shape: entry 2 (\"x:-1\") gives 'x' again (first in "
		  "entry 1); each input may be listed once");
}

Test(gearspec, messages_quote_safely)
{
	/* control characters escaped, long text cut: one bounded line */
	parse_err(opts("a\nb", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"a\\x0ab\") has no ':' between "
		  "name and dims");
	parse_err(opts("\"q\"", NULL, NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"\\\"q\\\"\") has no ':' between "
		  "name and dims");
	char *big = malloc(100001);
	memset(big, 'n', 100000);
	big[100000] = 0;
	ParsedGears p;
	GearOptions o = opts(big, NULL, NULL, NULL, NULL);
	cr_assert_eq(gear_parse(&p, &o), -1);
	cr_assert(strstr(last_error(), "nnn...\") has no ':'"));
	cr_assert(strlen(last_error()) < 200);
	free(big);
}

/* ==== gear_parse: mode rules on --input_shape ========================= */

Test(gearspec, batch_minus_one_only_in_dim0)
{
	parse_err(opts("x:-1,3;mask:-1,-1", "1,2", NULL, NULL, NULL),
		  "--input_shape: entry 2 (\"mask:-1,-1\"): with "
		  "--dynamic_batch_size only dim 0 (the batch) may be -1, not "
		  "dim 1");
	parse_err(opts("x:1,-1", "1,2", NULL, NULL, NULL),
		  "--input_shape: entry 1 (\"x:1,-1\"): with --dynamic_batch_size "
		  "only dim 0 (the batch) may be -1, not dim 1");
}

Test(gearspec, image_size_needs_rank4)
{
	parse_err(opts("x:3,-1,-1", NULL, "1,2;3,4", NULL, NULL),
		  "--input_shape: entry 1 (\"x:3,-1,-1\"): with "
		  "--dynamic_image_size an input with -1 must have 4 dims "
		  "(NCHW), not 3");
}

Test(gearspec, image_size_minus_one_only_at_hw)
{
	parse_err(opts("x:-1,3,-1,-1", NULL, "1,2;3,4", NULL, NULL),
		  "--input_shape: entry 1 (\"x:-1,3,-1,-1\"): with "
		  "--dynamic_image_size only H and W (dims 2 and 3 for NCHW) "
		  "may be -1, not dim 0");
	parse_err(opts("x:1,3,-1,-1", NULL, "1,2;3,4", NULL, "NHWC"),
		  "--input_shape: entry 1 (\"x:1,3,-1,-1\"): with "
		  "--dynamic_image_size only H and W (dims 1 and 2 for NHWC) "
		  "may be -1, not dim 3");
}

Test(gearspec, image_size_both_h_and_w)
{
	parse_err(opts("ok:1,3,-1,-1;x:1,3,224,-1", NULL, "1,2;3,4", NULL,
		       NULL),
		  "--input_shape: entry 2 (\"x:1,3,224,-1\"): with "
		  "--dynamic_image_size both H and W (dims 2 and 3 for NCHW) "
		  "must be -1");
}

/* ==== gear_parse: the gear lists ======================================= */

Test(gearspec, batch_bad_values)
{
	parse_err(opts("x:-1", "1,0", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 2 (\"0\") must be a positive "
		  "integer");
	parse_err(opts("x:-1", "-1,2", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 1 (\"-1\") must be a positive "
		  "integer");
	parse_err(opts("x:-1", "1,abc", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 2 (\"abc\") must be a positive "
		  "integer");
	parse_err(opts("x:-1", "1.5,2", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 1 (\"1.5\") must be a positive "
		  "integer");
	parse_err(opts("x:-1", "1,99999999999999999999", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 2 (\"99999999999999999999\") is "
		  "too large for int64");
}

Test(gearspec, batch_stray_separators)
{
	parse_err(opts("x:-1", "1,,2", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 2 is empty (stray ',')");
	parse_err(opts("x:-1", ",1,2", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 1 is empty (stray ',')");
	parse_err(opts("x:-1", "1,2,,", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 3 is empty (stray ',')");
	parse_err(opts("x:-1", "1;2", NULL, NULL, NULL),
		  "--dynamic_batch_size: found ';', but batch sizes are "
		  "separated by ',' with one value per gear, e.g. \"1,8,16\"");
}

Test(gearspec, gear_list_empty)
{
	parse_err(opts("x:-1", "", NULL, NULL, NULL),
		  "--dynamic_batch_size: no gears given; expected e.g. "
		  "\"1,8,16\"");
	parse_err(opts("x:-1", ",", NULL, NULL, NULL),
		  "--dynamic_batch_size: no gears given; expected e.g. "
		  "\"1,8,16\"");
	parse_err(opts("x:1,3,-1,-1", NULL, ";", NULL, NULL),
		  "--dynamic_image_size: no gears given; expected e.g. "
		  "\"224,224;448,448\"");
	parse_err(opts("x:-1", NULL, NULL, " ", NULL),
		  "--dynamic_dims: no gears given; expected e.g. "
		  "\"1,32;1,64\"");
}

Test(gearspec, gear_count_limits)
{
	char buf[1024] = "";
	for (int i = 1; i <= 101; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%d",
			 i > 1 ? "," : "", i);
	parse_err(opts("x:-1", buf, NULL, NULL, NULL),
		  "--dynamic_batch_size: 101 gears given, but at most 100 are "
		  "allowed");
	parse_err(opts("x:-1", "8", NULL, NULL, NULL),
		  "--dynamic_batch_size: 1 gear given (\"8\"), but at least 2 "
		  "are needed");
	parse_err(opts("x:-1", "8,", NULL, NULL, NULL),
		  "--dynamic_batch_size: 1 gear given (\"8\"), but at least 2 "
		  "are needed");
	parse_err(opts("x:1,3,-1,-1", NULL, "224,224;", NULL, NULL),
		  "--dynamic_image_size: 1 gear given (\"224,224\"), but at "
		  "least 2 are needed");
	parse_err(opts("x:-1,-1", NULL, NULL, "1,32", NULL),
		  "--dynamic_dims: 1 gear given (\"1,32\"), but at least 2 are "
		  "needed");
}

Test(gearspec, batch_duplicates)
{
	parse_err(opts("x:-1", "1,8,4,8", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 4 (\"8\") repeats value 2; every "
		  "gear must differ");
	parse_err(opts("x:-1", "1, 01", NULL, NULL, NULL),
		  "--dynamic_batch_size: value 2 (\"01\") repeats value 1; every "
		  "gear must differ");
}

Test(gearspec, image_size_value_counts)
{
	parse_err(opts("x:1,3,-1,-1", NULL, "224,224;224,224,3", NULL, NULL),
		  "--dynamic_image_size: gear 2 (\"224,224,3\") has 3 values, "
		  "but each gear needs 2 (height,width)");
	parse_err(opts("x:1,3,-1,-1", NULL, "224;448", NULL, NULL),
		  "--dynamic_image_size: gear 1 (\"224\") has 1 value, but each "
		  "gear needs 2 (height,width)");
}

Test(gearspec, image_size_bad_gears)
{
	parse_err(opts("x:1,3,-1,-1", NULL, "224,224;;448,448", NULL, NULL),
		  "--dynamic_image_size: gear 2 is empty (stray ';')");
	parse_err(opts("x:1,3,-1,-1", NULL, "224,224;448,448;;", NULL, NULL),
		  "--dynamic_image_size: gear 3 is empty (stray ';')");
	parse_err(opts("x:1,3,-1,-1", NULL, "224,224;448,0", NULL, NULL),
		  "--dynamic_image_size: gear 2 (\"448,0\"): value 2 (\"0\") "
		  "must be a positive integer");
	parse_err(opts("x:1,3,-1,-1", NULL, "224,224;448,,448", NULL, NULL),
		  "--dynamic_image_size: gear 2 (\"448,,448\"): value 2 is empty "
		  "(stray ',')");
	parse_err(opts("x:1,3,-1,-1", NULL, "224,224;448,448;224, 224", NULL,
		       NULL),
		  "--dynamic_image_size: gear 3 (\"224, 224\") repeats gear 1; "
		  "every gear must differ");
}

Test(gearspec, dims_value_count)
{
	parse_err(opts("x:-1,-1", NULL, NULL, "1,32;1,64;8,640,2", NULL),
		  "--dynamic_dims: gear 3 (\"8,640,2\") has 3 values, but "
		  "--input_shape has 2 dynamic dims (-1)");
	parse_err(opts("x:-1,3", NULL, NULL, "1;2,3", NULL),
		  "--dynamic_dims: gear 2 (\"2,3\") has 2 values, but "
		  "--input_shape has 1 dynamic dim (-1)");
	parse_err(opts("tokens:-1,-1;mask:-1,-1;image:1,3,224,224", NULL, NULL,
		       "1,32;4,64", NULL),
		  "--dynamic_dims: gear 1 (\"1,32\") has 2 values, but "
		  "--input_shape has 4 dynamic dims (-1)");
}

Test(gearspec, dims_bad_gears)
{
	parse_err(opts("x:-1,-1", NULL, NULL, ";;", NULL),
		  "--dynamic_dims: gear 1 is empty (stray ';')");
	parse_err(opts("x:-1,-1", NULL, NULL, "1,32;;1,64", NULL),
		  "--dynamic_dims: gear 2 is empty (stray ';')");
	parse_err(opts("x:-1,-1", NULL, NULL, "1,32;1,-64", NULL),
		  "--dynamic_dims: gear 2 (\"1,-64\"): value 2 (\"-64\") must be "
		  "a positive integer");
	parse_err(opts("x:-1,-1", NULL, NULL, "1,32;1,x", NULL),
		  "--dynamic_dims: gear 2 (\"1,x\"): value 2 (\"x\") must be a "
		  "positive integer");
	parse_err(opts("x:-1,-1", NULL, NULL,
		       "1,32;1,18446744073709551616", NULL),
		  "--dynamic_dims: gear 2 (\"1,18446744073709551616\"): value 2 "
		  "(\"18446744073709551616\") is too large for int64");
	/* a bad value is reported before the gear count */
	parse_err(opts("x:-1,-1", NULL, NULL, "1,x", NULL),
		  "--dynamic_dims: gear 1 (\"1,x\"): value 2 (\"x\") must be a "
		  "positive integer");
	parse_err(opts("x:-1,-1", NULL, NULL, "1,32;1,,64", NULL),
		  "--dynamic_dims: gear 2 (\"1,,64\"): value 2 is empty (stray "
		  "',')");
	parse_err(opts("x:-1,-1", NULL, NULL, "1,32;2,32;1,32", NULL),
		  "--dynamic_dims: gear 3 (\"1,32\") repeats gear 1; every gear "
		  "must differ");
}

/* ==== gear_apply: accepted ============================================= */

Test(gearspec, apply_dims_three_inputs)
{
	Model *m = model3();
	ParsedGears p;
	GearOptions o = opts("tokens:-1,-1;mask:-1,-1;image:1,3,224,224", NULL,
			     NULL, "1,32,1,32;4,64,4,64", NULL);
	apply_ok(m, &p, o);
	cr_assert_eq(m->mode, MODE_DIMS);
	const GearSpec *s = m->gears;
	cr_assert_not_null(s);
	cr_assert_eq(s->mode, MODE_DIMS);
	cr_assert_eq(s->ninputs, 2);
	cr_assert_eq(s->ngears, 2);
	cr_assert_eq(s->nvals, 4);
	assert_table(s->table, (int64_t[]){ 1, 32, 1, 32, 4, 64, 4, 64 }, 8);
	cr_assert_str_eq(s->inputs[0].name, "tokens");
	cr_assert_eq(s->inputs[0].val, val_named(m, "tokens"));
	cr_assert_eq(s->inputs[0].ndyn, 2);
	cr_assert_eq(s->inputs[0].dyn_axes[0], 0);
	cr_assert_eq(s->inputs[0].dyn_axes[1], 1);
	cr_assert_eq(s->inputs[0].first, 0);
	cr_assert_str_eq(s->inputs[1].name, "mask");
	cr_assert_eq(s->inputs[1].val, val_named(m, "mask"));
	cr_assert_eq(s->inputs[1].first, 2);
	assert_shape(s->inputs[1].shape, 2, (int64_t[]){ -1, -1 });
	assert_shape(*shape_named(m, "tokens"), 2, (int64_t[]){ -1, -1 });
	assert_shape(*shape_named(m, "image"), 4,
		     (int64_t[]){ 1, 3, 224, 224 });
	assert_shape(gear_input_shape(s, 0, 1), 2, (int64_t[]){ 4, 64 });
	assert_shape(gear_input_shape(s, 1, 0), 2, (int64_t[]){ 1, 32 });
	cr_assert_eq(gear_max_index(s, 0), 1);
	cr_assert_eq(gear_input_index(s, val_named(m, "mask")), 1);
	cr_assert_eq(gear_input_index(s, val_named(m, "image")), -1);
	cr_assert_eq(m->noptions, 2);
	cr_assert_str_eq(m->options[0].key, "input_shape");
	cr_assert_str_eq(m->options[0].val, o.input_shape);
	cr_assert_str_eq(m->options[1].key, "dynamic_dims");
	cr_assert_str_eq(m->options[1].val, "1,32,1,32;4,64,4,64");
	gear_parsed_release(&p);
	/* the spec lives in the model's arena, not in p */
	cr_assert_eq(m->gears->table[7], 64);
	model_free(m);
}

/* --dynamic_dims counts the -1s in --input_shape order; the spec (and
 * the .om) lists the gear inputs in the model's order, as the runtime
 * matches a gear's values, with the table's columns moved alongside. */
Test(gearspec, apply_gear_inputs_in_model_order)
{
	Model *m = model3();
	ParsedGears p;
	apply_ok(m, &p, opts("mask:-1,-1;tokens:2,-1", NULL, NULL,
			     "1,8,8;2,16,16", NULL));
	const GearSpec *s = m->gears;
	cr_assert_str_eq(s->inputs[0].name, "tokens");
	cr_assert_str_eq(s->inputs[1].name, "mask");
	cr_assert_eq(s->inputs[0].first, 0);
	cr_assert_eq(s->inputs[0].ndyn, 1);
	cr_assert_eq(s->inputs[0].dyn_axes[0], 1);
	cr_assert_eq(s->inputs[1].first, 1);
	assert_table(s->table, (int64_t[]){ 8, 1, 8, 16, 2, 16 }, 6);
	assert_shape(gear_input_shape(s, 0, 1), 2, (int64_t[]){ 2, 16 });
	assert_shape(gear_input_shape(s, 1, 1), 2, (int64_t[]){ 2, 16 });
	assert_shape(*shape_named(m, "tokens"), 2, (int64_t[]){ 2, -1 });
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, apply_batch_two_inputs)
{
	Model *m = model2();
	ParsedGears p;
	apply_ok(m, &p, opts("x:-1,3,224,224;mask:-1,16", "1,8,4", NULL, NULL,
			     NULL));
	const GearSpec *s = m->gears;
	cr_assert_eq(m->mode, MODE_BATCH);
	cr_assert_eq(s->mode, MODE_BATCH);
	cr_assert_eq(s->ninputs, 2);
	cr_assert_eq(s->nvals, 2);
	assert_table(s->table, (int64_t[]){ 1, 1, 8, 8, 4, 4 }, 6);
	assert_shape(gear_input_shape(s, 0, 1), 4,
		     (int64_t[]){ 8, 3, 224, 224 });
	assert_shape(gear_input_shape(s, 1, 2), 2, (int64_t[]){ 4, 16 });
	assert_shape(gear_max_shape(s, 1), 2, (int64_t[]){ 8, 16 });
	cr_assert_eq(gear_max_index(s, 0), 1);
	assert_shape(*shape_named(m, "x"), 4, (int64_t[]){ -1, 3, 224, 224 });
	assert_shape(*shape_named(m, "mask"), 2, (int64_t[]){ -1, 16 });
	cr_assert_str_eq(m->options[1].key, "dynamic_batch_size");
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, apply_image_size)
{
	Model *m = model1();
	ParsedGears p;
	apply_ok(m, &p, opts("x:1,3,-1,-1", NULL, "224,224;448,448", NULL,
			     "NCHW"));
	const GearSpec *s = m->gears;
	cr_assert_eq(s->mode, MODE_IMAGE_SIZE);
	cr_assert_eq(s->ninputs, 1);
	assert_shape(gear_input_shape(s, 0, 1), 4,
		     (int64_t[]){ 1, 3, 448, 448 });
	cr_assert_eq(m->noptions, 3);
	cr_assert_str_eq(m->options[0].key, "input_shape");
	cr_assert_str_eq(m->options[1].key, "input_format");
	cr_assert_str_eq(m->options[1].val, "NCHW");
	cr_assert_str_eq(m->options[2].key, "dynamic_image_size");
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, apply_static)
{
	Model *m = model2();
	ParsedGears p;
	apply_ok(m, &p, opts("mask:2,16;x:2,3,64,64", NULL, NULL, NULL, NULL));
	cr_assert_eq(m->mode, MODE_STATIC);
	cr_assert_null(m->gears);
	assert_shape(*shape_named(m, "x"), 4, (int64_t[]){ 2, 3, 64, 64 });
	assert_shape(*shape_named(m, "mask"), 2, (int64_t[]){ 2, 16 });
	cr_assert_eq(m->noptions, 1);
	cr_assert_str_eq(m->options[0].val, "mask:2,16;x:2,3,64,64");
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, apply_nothing_to_static_model)
{
	Model *m = new_model();
	add_input(m, "x", DT_FLOAT, 2, 1, 3);
	ParsedGears p;
	apply_ok(m, &p, opts(NULL, NULL, NULL, NULL, NULL));
	cr_assert_eq(m->mode, MODE_STATIC);
	cr_assert_null(m->gears);
	cr_assert_eq(m->noptions, 0);
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, apply_unknown_rank_accepts_any_rank)
{
	Model *m = new_model();
	add_input(m, "x", DT_FLOAT, -1);
	ParsedGears p;
	apply_ok(m, &p, opts("x:-1,5,7", "1,2", NULL, NULL, NULL));
	assert_shape(*shape_named(m, "x"), 3, (int64_t[]){ -1, 5, 7 });
	assert_shape(gear_input_shape(m->gears, 0, 1), 3,
		     (int64_t[]){ 2, 5, 7 });
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, apply_keeps_dim_params_at_gear_dims)
{
	Model *m = new_model();
	ValId v = add_input(m, "x", DT_FLOAT, 2, -1, -1);
	const char **dp = arena_array(&m->arena, 2, sizeof(*dp));
	dp[0] = "batch";
	dp[1] = "seq";
	m->graph->vals[v].dim_params = dp;
	ParsedGears p;
	apply_ok(m, &p, opts("x:-1,16", "1,2", NULL, NULL, NULL));
	const Value *x = &m->graph->vals[v];
	cr_assert_str_eq(x->dim_params[0], "batch");
	cr_assert_null(x->dim_params[1]);
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, apply_static_listed_input_may_be_restated)
{
	Model *m = model3();
	ParsedGears p;
	apply_ok(m, &p, opts("tokens:1,-1;mask:1,-1;image:1,3,224,224", NULL,
			     NULL, "5,5;9,9", NULL));
	cr_assert_eq(m->gears->ninputs, 2);
	gear_parsed_release(&p);
	model_free(m);
}

/* ==== gear_apply: rejected ============================================= */

Test(gearspec, apply_unknown_name_lists_inputs)
{
	apply_err(model2(), opts("imgs:-1,3,224,224", "1,2", NULL, NULL, NULL),
		  "--input_shape: 'imgs' is not an input of the model (inputs: "
		  "x, mask)");
	apply_err(new_model(), opts("x:1", NULL, NULL, NULL, NULL),
		  "--input_shape: 'x' is not an input of the model (it has no "
		  "inputs)");
}

Test(gearspec, apply_unknown_name_long_list_cut)
{
	Model *m = new_model();
	char name[64];
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "input_number_%03d", i);
		add_input(m, name, DT_FLOAT, 1, 1);
	}
	ParsedGears p;
	GearOptions o = opts("nope:1", NULL, NULL, NULL, NULL);
	parse_ok(&p, o);
	cr_assert_eq(gear_apply(m, &p), -1);
	cr_assert(strstr(last_error(), "(inputs: input_number_000, "));
	cr_assert(strstr(last_error(), " more)"));
	cr_assert(strlen(last_error()) < 500);
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, apply_initializer_is_not_input)
{
	apply_err(model1(), opts("x:-1,3,8,8;conv.weight:4", "1,2", NULL, NULL,
				 NULL),
		  "--input_shape: 'conv.weight' is an initializer (a weight) of "
		  "the model, not an input");
	/* an initializer also listed in graph.input (ONNX IR < 4) */
	Model *m = model1();
	Graph *g = m->graph;
	ValId *in = arena_array(&m->arena, 2, sizeof(*in));
	in[0] = g->inputs[0];
	in[1] = val_named(m, "conv.weight");
	g->inputs = in;
	g->ninputs = 2;
	apply_err(m, opts("conv.weight:4", NULL, NULL, NULL, NULL),
		  "--input_shape: 'conv.weight' is an initializer (a weight) of "
		  "the model, not an input");
}

Test(gearspec, apply_not_a_tensor)
{
	Model *m = new_model();
	ValId v = add_input(m, "seq", DT_FLOAT, 1, 4);
	m->graph->vals[v].tkind = TK_SEQUENCE;
	apply_err(m, opts("seq:4", NULL, NULL, NULL, NULL),
		  "--input_shape: 'seq' is not a tensor input (a sequence, "
		  "optional or map); --input_shape gives tensor shapes only");
}

Test(gearspec, apply_rank_mismatch)
{
	apply_err(model1(), opts("x:-1,3,224", "1,2", NULL, NULL, NULL),
		  "--input_shape: 'x' has 3 dims, but the model declares rank 4 "
		  "([-1,3,-1,-1])");
	apply_err(model3(), opts("tokens:-1;mask:-1,4;image:1,3,224,224", "1,2",
				 NULL, NULL, NULL),
		  "--input_shape: 'tokens' has 1 dim, but the model declares "
		  "rank 2 ([-1,-1])");
}

Test(gearspec, apply_static_dim_mismatch)
{
	apply_err(model1(), opts("x:-1,4,224,224", "1,2", NULL, NULL, NULL),
		  "--input_shape: 'x' dim 1 is 4, but the model declares 3 "
		  "([-1,3,-1,-1])");
	apply_err(model3(), opts("tokens:1,8;mask:1,8;image:1,3,224,225", NULL,
				 NULL, NULL, NULL),
		  "--input_shape: 'image' dim 3 is 225, but the model declares "
		  "224 ([1,3,224,224])");
}

Test(gearspec, apply_minus_one_where_model_is_fixed)
{
	apply_err(model1(), opts("x:1,-1,224,224", NULL, NULL, "3;4", NULL),
		  "--input_shape: 'x' dim 1 is -1, but the model fixes it to 3 "
		  "([-1,3,-1,-1]); only dims the model leaves dynamic can be "
		  "gear dims");
}

Test(gearspec, apply_dynamic_input_must_be_listed)
{
	apply_err(model3(), opts("tokens:-1,-1", NULL, NULL, "1,2;3,4", NULL),
		  "--input_shape: model input 'mask' has dynamic shape [-1,-1]; "
		  "give it in --input_shape");
	apply_err(model1(), opts(NULL, NULL, NULL, NULL, NULL),
		  "--input_shape: model input 'x' has dynamic shape "
		  "[-1,3,-1,-1]; give it in --input_shape");
	Model *m = model1();
	add_input(m, "u", DT_FLOAT, -1);
	apply_err(m, opts("x:1,3,8,8", NULL, NULL, NULL, NULL),
		  "--input_shape: model input 'u' has an unknown shape; give it "
		  "in --input_shape");
}

Test(gearspec, apply_error_after_good_entries_changes_nothing)
{
	/* the first entry is fine; the failure in the second must not
	 * leave the first applied (apply_err checks every input) */
	apply_err(model2(), opts("x:-1,3,8,8;mask:-1,4,1", "1,2", NULL, NULL,
				 NULL),
		  "--input_shape: 'mask' has 3 dims, but the model declares "
		  "rank 2 ([-1,-1])");
}

/* ==== queries ========================================================== */

Test(gearspec, max_index_first_on_ties)
{
	Model *m = model2();
	ParsedGears p;
	apply_ok(m, &p, opts("x:1,3,-1,-1;mask:1,-1", NULL, NULL,
			     "1,64,5;4,16,9;2,8,9;64,1,2", NULL));
	const GearSpec *s = m->gears;
	cr_assert_eq(gear_max_index(s, 0), 0); /* 64, 64, 16, 64 */
	cr_assert_eq(gear_max_index(s, 1), 1); /* 5, 9, 9, 2 */
	assert_shape(gear_max_shape(s, 0), 4, (int64_t[]){ 1, 3, 1, 64 });
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, max_index_saturates_on_overflow)
{
	Model *m = model1();
	ParsedGears p;
	apply_ok(m, &p, opts("x:1,3,-1,-1", NULL, NULL,
			     "4,4;9223372036854775807,2;3037000500,3037000500",
			     NULL));
	/* gears 1 and 2 both overflow: the first wins */
	cr_assert_eq(gear_max_index(m->gears, 0), 1);
	gear_parsed_release(&p);
	model_free(m);
}

Test(gearspec, option_keys)
{
	cr_assert_str_eq(gear_option_key(GOPT_INPUT_SHAPE), "input_shape");
	cr_assert_str_eq(gear_option_key(GOPT_DYNAMIC_DIMS), "dynamic_dims");
	cr_assert_null(gear_option_key(GOPT_COUNT));
}
