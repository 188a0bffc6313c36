/*
 * compiler/act.c - the activation table's rows as data (compiler/act.h).
 */
#include <stdio.h>

#include "act.h"

const ActInfo act_info[ACT_COUNT] = {
#define X(nm, op, an, ad, bn, bd, f64, f32, rel, abs, alg, dp, since, wr) \
	[ACT_##nm] = { #nm, op, an, bn, ad, bd, rel, abs, since },
	GEARC_ACTS(X)
#undef X
};

int act_lookup(const char *s, size_t len)
{
	for (int k = 0; k < ACT_COUNT; k++)
		if (strlen(act_info[k].name) == len &&
		    !memcmp(act_info[k].name, s, len))
			return k;
	return -1;
}

const char *act_names(char *buf, size_t size)
{
	size_t at = 0;
	*buf = 0;
	for (int k = 0; k < ACT_COUNT && at < size; k++)
		at += (size_t)snprintf(buf + at, size - at, "%s%s",
				       k ? ", " : "", act_info[k].name);
	return buf;
}
