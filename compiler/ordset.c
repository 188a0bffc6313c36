/*
 * compiler/ordset.c - the ordered set of ordset.h: a treap by key, heap
 * ordered by priority, each node knowing its subtree's largest weight.
 * Split and merge do all the changes; lookups walk down from the root.
 */
#include <stdlib.h>

#include "ordset.h"

struct OrdNode {
	OrdKey key;
	uint64_t weight, heaviest; /* its own; its subtree's largest */
	uint32_t prio;
	int32_t left, right;
};

void ordset_init(OrdSet *s, int32_t n)
{
	*s = (OrdSet){ .root = -1, .n = n, .seed = 0x2545f4914f6cdd1dull };
	s->node = xcalloc((size_t)n + 1, sizeof(OrdNode));
}

void ordset_release(OrdSet *s)
{
	free(s->node);
	s->node = NULL;
}

static bool key_lt(OrdKey x, OrdKey y)
{
	return x.a != y.a ? x.a < y.a : x.b < y.b;
}

static void pull(OrdSet *s, int32_t t)
{
	OrdNode *x = &s->node[t];
	x->heaviest = x->weight;
	if (x->left >= 0 && s->node[x->left].heaviest > x->heaviest)
		x->heaviest = s->node[x->left].heaviest;
	if (x->right >= 0 && s->node[x->right].heaviest > x->heaviest)
		x->heaviest = s->node[x->right].heaviest;
}

/* Splits t into the keys < k (or <= k if incl) and the rest. */
static void split(OrdSet *s, int32_t t, OrdKey k, bool incl, int32_t *l,
		  int32_t *r)
{
	if (t < 0) {
		*l = *r = -1;
		return;
	}
	OrdNode *x = &s->node[t];
	bool goes_left = incl ? !key_lt(k, x->key) : key_lt(x->key, k);
	if (goes_left) {
		split(s, x->right, k, incl, &x->right, r);
		*l = t;
	} else {
		split(s, x->left, k, incl, l, &x->left);
		*r = t;
	}
	pull(s, t);
}

/* Every key of l is below every key of r. */
static int32_t merge(OrdSet *s, int32_t l, int32_t r)
{
	if (l < 0 || r < 0)
		return l < 0 ? r : l;
	if (s->node[l].prio > s->node[r].prio) {
		s->node[l].right = merge(s, s->node[l].right, r);
		pull(s, l);
		return l;
	}
	s->node[r].left = merge(s, l, s->node[r].left);
	pull(s, r);
	return r;
}

void ordset_insert(OrdSet *s, int32_t i, OrdKey k, uint64_t weight)
{
	ASSERT(i >= 0 && i < s->n);
	s->seed ^= s->seed << 13;
	s->seed ^= s->seed >> 7;
	s->seed ^= s->seed << 17;
	s->node[i] = (OrdNode){ k, weight, weight, (uint32_t)(s->seed >> 32),
				-1, -1 };
	int32_t l, r;
	split(s, s->root, k, false, &l, &r);
	s->root = merge(s, merge(s, l, i), r);
}

void ordset_remove(OrdSet *s, int32_t i)
{
	int32_t l, m, r;
	split(s, s->root, s->node[i].key, false, &l, &m);
	split(s, m, s->node[i].key, true, &m, &r);
	ASSERT(m == i);
	s->root = merge(s, l, r);
}

uint64_t ordset_weight(const OrdSet *s, int32_t i)
{
	return s->node[i].weight;
}

int32_t ordset_ceil(const OrdSet *s, OrdKey k)
{
	int32_t t = s->root, found = -1;
	while (t >= 0) {
		if (key_lt(s->node[t].key, k)) {
			t = s->node[t].right;
		} else {
			found = t;
			t = s->node[t].left;
		}
	}
	return found;
}

int32_t ordset_above(const OrdSet *s, OrdKey k)
{
	int32_t t = s->root, found = -1;
	while (t >= 0) {
		if (key_lt(k, s->node[t].key)) {
			found = t;
			t = s->node[t].left;
		} else {
			t = s->node[t].right;
		}
	}
	return found;
}

int32_t ordset_below(const OrdSet *s, OrdKey k)
{
	int32_t t = s->root, found = -1;
	while (t >= 0) {
		if (key_lt(s->node[t].key, k)) {
			found = t;
			t = s->node[t].right;
		} else {
			t = s->node[t].left;
		}
	}
	return found;
}

int32_t ordset_last(const OrdSet *s)
{
	int32_t t = s->root;
	while (t >= 0 && s->node[t].right >= 0)
		t = s->node[t].right;
	return t;
}

int32_t ordset_first_heavy(const OrdSet *s, uint64_t w)
{
	int32_t t = s->root;
	if (t < 0 || s->node[t].heaviest < w)
		return -1;
	for (;;) {
		const OrdNode *x = &s->node[t];
		if (x->left >= 0 && s->node[x->left].heaviest >= w)
			t = x->left;
		else if (x->weight >= w)
			return t;
		else
			t = x->right;
	}
}
