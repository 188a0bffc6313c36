/*
 * tests/test_gearspec_fuzz.c - random and mutated gear options.
 *
 * 20000 option sets, made from a list of valid ones by inserting,
 * deleting and replacing characters (separators, digits, '-', blanks,
 * huge numbers, names), go through gear_parse and gear_apply on a
 * three-input model.  Asserted: each returns 0 or -1; on -1 the message
 * is one non-empty line starting with "--" and the model is unchanged;
 * on 0 the result is consistent.  The PRNG seed is fixed, so a failure
 * is reproducible; the iteration number is in the failure message.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compiler/gearspec.h"

enum { ITERATIONS = 20000, MAX_LEN = 2048, NOPT = 5 };

static uint64_t rng_state;

static uint64_t rnd(void) /* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

/* input_shape, batch, image, dims, format - as in GearOptions */
static const char *const seeds[][NOPT] = {
	{ "tokens:-1,-1;mask:-1,-1;image:-1,3,-1,-1", NULL, NULL,
	  "1,32,1,32,1,224,224;4,64,4,64,2,448,448", NULL },
	{ "tokens:-1,16;mask:-1,16;image:-1,3,224,224", "1,8,16", NULL, NULL,
	  NULL },
	{ "tokens:-1,16;mask:-1,16;image:-1,3,224,224", "1,2,", NULL, NULL,
	  NULL },
	{ "tokens:1,16;mask:1,16;image:1,3,-1,-1", NULL,
	  "224,224;448,448;112,112", NULL, "NCHW" },
	{ "tokens:1,16;mask:1,16;image:1,3,-1,-1", NULL, "64,64;32,32;", NULL,
	  NULL },
	{ "tokens:2,16;mask:2,16;image:2,3,32,32", NULL, NULL, NULL, NULL },
	{ "mask:-1,-1;tokens:-1,-1;image:1,3,-1,-1", NULL, NULL,
	  "1,2,1,2,8,8;2,4,2,4,16,16;3,3,3,3,3,3;", NULL },
	{ "tokens:-1,-1;mask:-1,-1;image:1,3,224,224", NULL, NULL,
	  "1,32,1,32;4,64,4,64", "ND" },
	{ " tokens : 1 , -1 ;mask:1,-1;image:1,3,8,8", NULL, NULL,
	  "5, 5;9 ,9", NULL },
	{ "image:1,-1,-1,3;tokens:1,1;mask:1,1", NULL, "8,8;16,16", NULL,
	  "NHWC" },
};

static const char alphabet[] = ";;,,::--0123456789  \tax.+_";
static const char *const tokens[] = {
	"-1", "0", "1", "-0", "99999999999999999999", "9223372036854775807",
	"9223372036854775808", "-9223372036854775808", "-", ";", ",", ":",
	";;", ",,", " ", "tokens", "mask", "image", "emb", "\n", "\"", "\\",
	"1,2;3,4", "x:-1", "NHWC",
};

typedef struct Str {
	char *s;
	size_t n;
} Str;

static void str_set(Str *s, const char *v)
{
	free(s->s);
	s->s = NULL;
	s->n = 0;
	if (!v)
		return;
	s->n = strlen(v);
	s->s = malloc(s->n + 1);
	memcpy(s->s, v, s->n + 1);
}

static void str_insert(Str *s, size_t at, const char *v, size_t n)
{
	if (s->n + n > MAX_LEN)
		return;
	s->s = realloc(s->s, s->n + n + 1);
	memmove(s->s + at + n, s->s + at, s->n - at + 1);
	memcpy(s->s + at, v, n);
	s->n += n;
}

static void mutate(Str *s)
{
	char c = alphabet[rnd_below(sizeof(alphabet) - 1)];
	size_t at = rnd_below(s->n + 1);
	switch (rnd_below(7)) {
	case 0: /* insert a character */
		str_insert(s, at, &c, 1);
		break;
	case 1: /* delete a character */
		if (s->n) {
			at = rnd_below(s->n);
			memmove(s->s + at, s->s + at + 1, s->n - at);
			s->n--;
		}
		break;
	case 2: /* replace a character */
		if (s->n)
			s->s[rnd_below(s->n)] = c;
		break;
	case 3: { /* insert a token */
		const char *t = tokens[rnd_below(ARRAY_SIZE(tokens))];
		str_insert(s, at, t, strlen(t));
		break;
	}
	case 4: { /* repeat a slice: more gears, more entries */
		size_t from = rnd_below(s->n + 1);
		size_t len = rnd_below(s->n - from + 1);
		char *slice = malloc(len + 1);
		memcpy(slice, s->s + from, len);
		str_insert(s, at, slice, len);
		free(slice);
		break;
	}
	case 5: /* truncate */
		s->n = at;
		s->s[at] = 0;
		break;
	default: { /* replace a number by a random one */
		char num[32];
		snprintf(num, sizeof(num), "%llu",
			 (unsigned long long)(rnd() >> rnd_below(64)));
		str_insert(s, at, num, strlen(num));
		break;
	}
	}
}

static void random_string(Str *s)
{
	size_t n = rnd_below(48);
	str_set(s, "");
	for (size_t i = 0; i < n; i++) {
		char c = alphabet[rnd_below(sizeof(alphabet) - 1)];
		str_insert(s, s->n, &c, 1);
	}
}

/* One option set: a seed, then a few mutations or swaps. */
static void make_options(Str o[NOPT])
{
	const char *const *seed = seeds[rnd_below(ARRAY_SIZE(seeds))];
	for (int i = 0; i < NOPT; i++)
		str_set(&o[i], seed[i]);
	int nmut = (int)rnd_below(5);
	for (int k = 0; k < nmut; k++) {
		/* mostly the options the seed gives: a new gear option
		 * mostly just makes a conflict */
		size_t i = rnd_below(NOPT);
		while (!o[i].s && rnd_below(8))
			i = rnd_below(NOPT);
		Str *f = &o[i];
		switch (rnd_below(10)) {
		case 0:
			str_set(f, NULL);
			break;
		case 1:
			random_string(f);
			break;
		case 2: /* a value from another seed, maybe another field */
			str_set(f, seeds[rnd_below(ARRAY_SIZE(seeds))]
					[rnd_below(NOPT)]);
			break;
		default:
			if (!f->s)
				str_set(f, "");
			mutate(f);
		}
	}
}

static Model *fuzz_model(void)
{
	Model *m = model_new();
	Graph *g = graph_new(&m->arena, "main", NULL);
	static const int64_t dims[][4] = { { -1, -1 }, { -1, -1 },
					   { -1, 3, -1, -1 } };
	static const char *const names[] = { "tokens", "mask", "image" };
	static const int32_t ranks[] = { 2, 2, 4 };
	m->graph = g;
	g->inputs = arena_array(&m->arena, 3, sizeof(ValId));
	for (int i = 0; i < 3; i++) {
		ValId v = graph_add_value(g, names[i], VAL_INPUT);
		g->vals[v].dtype = i < 2 ? DT_INT64 : DT_FLOAT;
		g->vals[v].shape = shape_of(ranks[i], dims[i]);
		g->inputs[g->ninputs++] = v;
	}
	const char **dp = arena_array(&m->arena, 2, sizeof(*dp));
	dp[0] = "batch";
	dp[1] = "seq";
	g->vals[1].dim_params = dp;
	int64_t wd[1] = { 8 };
	Shape ws = shape_of(1, wd);
	ValId w = graph_add_value(g, "emb", VAL_WEIGHT);
	g->vals[w].shape = ws;
	g->vals[w].konst = tensor_new(&m->arena, "emb", DT_FLOAT, &ws, NULL);
	return m;
}

static void check_message(int iter, const char *fn)
{
	const char *e = last_error();
	cr_assert(e[0] == '-' && e[1] == '-',
		  "iteration %d: %s message does not start with --: '%s'",
		  iter, fn, e);
	cr_assert(!strchr(e, '\n') && !strchr(e, '\r'),
		  "iteration %d: %s message is not one line: '%s'", iter, fn,
		  e);
	cr_assert(strlen(e) > 4, "iteration %d: empty message", iter);
}

static void check_parsed(int iter, const ParsedGears *p, const GearOptions *o)
{
	bool gear_opt = o->dynamic_batch_size || o->dynamic_image_size ||
			o->dynamic_dims;
	int64_t ndyn = 0;
	cr_assert(p->mode >= MODE_STATIC && p->mode <= MODE_DIMS);
	cr_assert_eq(p->mode != MODE_STATIC, gear_opt, "iteration %d", iter);
	for (int32_t i = 0; i < p->nshapes; i++) {
		const ShapeEntry *e = &p->shapes[i];
		size_t n = strlen(e->name);
		cr_assert(n > 0 && e->name[0] != ' ' && e->name[n - 1] != ' ');
		/* rank 0: "sr:", a scalar */
		cr_assert(e->rank >= 0 && e->rank <= MAX_RANK);
		for (int32_t d = 0; d < e->rank; d++) {
			cr_assert(e->dims[d] >= 0 || e->dims[d] == -1,
				  "iteration %d: dim %lld", iter,
				  (long long)e->dims[d]);
			ndyn += e->dims[d] == -1;
		}
		for (int32_t j = 0; j < i; j++)
			cr_assert(strcmp(e->name, p->shapes[j].name),
				  "iteration %d: name twice", iter);
	}
	if (!gear_opt) {
		cr_assert_eq(ndyn, 0, "iteration %d", iter);
		cr_assert_eq(p->ngears, 0);
		cr_assert_null(p->table);
		return;
	}
	cr_assert(p->ngears >= 2 && p->ngears <= 100,
		  "iteration %d: %d gears", iter, p->ngears);
	if (p->nnamed) /* the named form: the model gives the table */
		return;
	cr_assert(ndyn > 0 && p->nvals == ndyn, "iteration %d", iter);
	for (int64_t i = 0; i < (int64_t)p->ngears * p->nvals; i++)
		cr_assert(p->table[i] > 0, "iteration %d: table value %lld",
			  iter, (long long)p->table[i]);
	for (int32_t a = 0; a < p->ngears; a++)
		for (int32_t b = 0; b < a; b++)
			cr_assert(memcmp(p->table + (size_t)a * p->nvals,
					 p->table + (size_t)b * p->nvals,
					 (size_t)p->nvals * 8),
				  "iteration %d: gears %d and %d alike", iter,
				  a, b);
}

static void check_applied(int iter, const Model *m, const ParsedGears *p)
{
	const Graph *g = m->graph;
	const GearSpec *s = m->gears;
	cr_assert_eq(m->mode, p->mode, "iteration %d", iter);
	if (p->mode == MODE_STATIC) {
		cr_assert_null(s);
	} else {
		cr_assert_not_null(s);
		cr_assert_eq(s->ngears, p->ngears);
		cr_assert_eq(s->nvals, p->nvals);
		cr_assert(s->ninputs >= 1 && s->ninputs <= 3);
		for (int32_t k = 0; k < s->ninputs; k++) {
			const GearInput *in = &s->inputs[k];
			cr_assert_eq(g->vals[in->val].kind, VAL_INPUT);
			cr_assert(in->ndyn >= 1);
			for (int32_t gi = 0; gi < s->ngears; gi++) {
				Shape sh = gear_input_shape(s, k, gi);
				cr_assert(shape_is_static(&sh));
				for (int32_t d = 0; d < sh.rank; d++)
					cr_assert(sh.dims[d] > 0);
			}
			int32_t mx = gear_max_index(s, k);
			cr_assert(mx >= 0 && mx < s->ngears);
		}
	}
	/* every input is now static or a gear input */
	for (int32_t i = 0; i < g->ninputs; i++) {
		const Value *v = &g->vals[g->inputs[i]];
		if (!shape_is_static(&v->shape))
			cr_assert(gear_input_index(s, g->inputs[i]) >= 0,
				  "iteration %d: '%s' left dynamic", iter,
				  v->name);
	}
}

Test(gearspec_fuzz, random_options)
{
	Str o[NOPT] = { { 0 } };
	int parse_ok = 0, apply_ok = 0, apply_fail = 0, gears_ok = 0;
	rng_state = 0x9e3779b97f4a7c15ull;
	for (int iter = 0; iter < ITERATIONS; iter++) {
		make_options(o);
		GearOptions go = { o[0].s, o[1].s, o[2].s, o[3].s, o[4].s };
		ParsedGears p;
		clear_error();
		int rc = gear_parse(&p, &go);
		cr_assert(rc == 0 || rc == -1, "iteration %d: rc %d", iter, rc);
		if (rc < 0) {
			check_message(iter, "gear_parse");
			cr_assert_eq(p.nshapes, 0);
			gear_parsed_release(&p);
			continue;
		}
		parse_ok++;
		check_parsed(iter, &p, &go);
		Model *m = fuzz_model();
		clear_error();
		rc = gear_apply(m, &p);
		cr_assert(rc == 0 || rc == -1, "iteration %d: rc %d", iter, rc);
		if (rc < 0) {
			apply_fail++;
			check_message(iter, "gear_apply");
			cr_assert_eq(m->mode, MODE_STATIC);
			cr_assert_null(m->gears);
			cr_assert_eq(m->noptions, 0);
		} else {
			apply_ok++;
			gears_ok += m->gears != NULL;
			check_applied(iter, m, &p);
		}
		model_free(m);
		gear_parsed_release(&p);
	}
	for (int i = 0; i < NOPT; i++)
		str_set(&o[i], NULL);
	/* the mutations must reach every stage, or the test proves little */
	cr_assert(parse_ok > 1000, "only %d parsed", parse_ok);
	cr_assert(apply_ok > 1000, "only %d applied", apply_ok);
	cr_assert(gears_ok > 500, "only %d with gears", gears_ok);
	cr_assert(apply_fail > 100, "only %d rejected by gear_apply",
		  apply_fail);
}
