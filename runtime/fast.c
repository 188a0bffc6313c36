/*
 * runtime/fast.c - fast paths chosen when a gear is prepared (rt.h
 * FastKernel).  None is registered yet: every node runs its op's
 * reference kernel.
 */
#include "rt.h"

int rt_fast_prepare(gearrt_session *s, Prepared *p, Task *t)
{
	(void)s;
	(void)p;
	(void)t;
	return 0;
}
