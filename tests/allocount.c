/*
 * tests/allocount.c - counts heap allocations made by the code linked into
 * the test binary: the unit tests link with -Wl,--wrap=malloc (and calloc,
 * realloc, aligned_alloc), so those calls come here first.  Shared
 * libraries (libc's own, protobuf-c, json-c) are not counted.
 */
#include <stddef.h>

long alloc_count;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);

void *__wrap_malloc(size_t n)
{
	__atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	__atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	__atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
	return __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	__atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
	return __real_aligned_alloc(align, n);
}
