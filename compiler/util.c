/* compiler/util.c - errors, arenas, arithmetic, maps, threads, files. */
#include "cpu.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* ---- errors ---------------------------------------------------------- */

static _Thread_local char errbuf[1024];

/* Messages quote names from models and flags, which may hold any byte:
 * they are escaped (str_escape, ESC_CONTROLS) so that every message is
 * one line of valid UTF-8, and one too long for errbuf loses its middle,
 * never its end (which says what was expected) nor half a character. */
static void set_message(const char *msg, size_t n)
{
	size_t len, cap = sizeof(errbuf) - 1;
	char *e = str_escape(msg, n, ESC_CONTROLS, &len);
	if (len <= cap) {
		memcpy(errbuf, e, len + 1);
		free(e);
		return;
	}
	static const char gap[] = " ... ";
	size_t head = (cap - (sizeof(gap) - 1)) / 2;
	size_t tail = cap - (sizeof(gap) - 1) - head;
	size_t from = len - tail;
	while (head > 0 && ((unsigned char)e[head] & 0xc0) == 0x80)
		head--; /* e[head] starts a character: cut before it */
	while (from < len && ((unsigned char)e[from] & 0xc0) == 0x80)
		from++;
	memcpy(errbuf, e, head);
	memcpy(errbuf + head, gap, sizeof(gap) - 1);
	memcpy(errbuf + head + sizeof(gap) - 1, e + from, len - from + 1);
	free(e);
}

/* vsnprintf into a malloc'd buffer of the size it needs. */
static char *vformat(const char *fmt, va_list ap, size_t *n)
{
	va_list aq;
	va_copy(aq, ap);
	int k = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (k < 0)
		BUG("bad format %s", fmt);
	char *p = xmalloc((size_t)k + 1);
	vsnprintf(p, (size_t)k + 1, fmt, ap);
	*n = (size_t)k;
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	size_t n;
	return vformat(fmt, ap, &n);
}

int error(const char *fmt, ...)
{
	va_list ap;
	size_t n;
	va_start(ap, fmt);
	char *p = vformat(fmt, ap, &n);
	va_end(ap);
	set_message(p, n);
	free(p);
	return -1;
}

int error_prefix(const char *fmt, ...)
{
	va_list ap;
	size_t n, old = strlen(errbuf);
	va_start(ap, fmt);
	char *p = vformat(fmt, ap, &n);
	va_end(ap);
	p = xrealloc(p, n + 2 + old + 1);
	memcpy(p + n, ": ", 2);
	memcpy(p + n + 2, errbuf, old + 1);
	set_message(p, n + 2 + old);
	free(p);
	return -1;
}

const char *last_error(void) { return errbuf; }
void clear_error(void) { errbuf[0] = 0; }

void bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gearc: BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* ---- memory ---------------------------------------------------------- */

static _Thread_local OomTrap *oom_trap;

void oom_trap_push(OomTrap *t)
{
	t->bytes = 0;
	t->prev = oom_trap;
	oom_trap = t;
}

void oom_trap_pop(OomTrap *t)
{
	oom_trap = t->prev;
}

bool oom_trapped(void) { return oom_trap != NULL; }

static void *oom(size_t n)
{
	OomTrap *t = oom_trap;
	if (t) {
		oom_trap = t->prev;
		t->bytes = n;
		longjmp(t->jb, 1);
	}
	fprintf(stderr, "gearc: error: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	return p ? p : oom(n);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	return p ? p : oom(n * size);
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	return p ? p : oom(n);
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

struct ArenaChunk {
	ArenaChunk *next;
	size_t size, used;
	_Alignas(16) unsigned char mem[];
};

enum { CHUNK_MIN = 64 * 1024, HUGE_PAGE = 2u << 20 };

void *big_alloc(size_t bytes, size_t *got)
{
	if (bytes > SIZE_MAX - HUGE_PAGE)
		return NULL;
	size_t n = bytes ? (bytes + 63) / 64 * 64 : 64;
	if (n < HUGE_PAGE) {
		if (got)
			*got = n;
		return aligned_alloc(64, n);
	}
	n = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	void *p = aligned_alloc(HUGE_PAGE, n);
#ifdef MADV_HUGEPAGE
	if (p) /* a hint: no error if refused */
		madvise(p, n, MADV_HUGEPAGE);
#endif
	if (got)
		*got = n;
	return p;
}

/* A chunk of at least size bytes, from big_alloc: one of 2 MB or more in
 * huge pages.  On the machine gearrt is measured on, faulting 4 KB pages
 * in one by one cost 2.3 us each: 1.7 ms of PP-OCR det's 5 ms open went
 * to the 3 MB of constants that protobuf-c copies into the reader's
 * arena, and 1.7 of its prepare to the weights reordered for oneDNN. */
static ArenaChunk *chunk_new(size_t size)
{
	size_t total = 0;
	if (size > SIZE_MAX - sizeof(ArenaChunk))
		oom(size);
	ArenaChunk *c = big_alloc(sizeof(ArenaChunk) + size, &total);
	if (!c)
		oom(size);
	c->next = NULL;
	c->size = total - sizeof(ArenaChunk);
	c->used = 0;
	return c;
}

void arena_init(Arena *a) { memset(a, 0, sizeof(*a)); }

void arena_release(Arena *a)
{
	ArenaChunk *c = a->head, *next;
	size_t chunk = a->chunk;
	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	arena_init(a);
	a->chunk = chunk;
}

void arena_reset(Arena *a)
{
	ArenaChunk *c = a->head;
	size_t need = a->used; /* handed out since the last reset */
	a->used = 0;
	if (!c || (!c->next && c->size >= need)) {
		if (c)
			c->used = 0;
		return;
	}
	arena_release(a);
	a->head = chunk_new(need);
}

/* n bytes, 16-byte aligned, not zeroed. */
void *arena_alloc_raw(Arena *a, size_t n)
{
	ArenaChunk *c = a->head;
	size_t need = (n + 15) & ~(size_t)15;
	if (need < n)
		oom(n);
	if (!c || c->size - c->used < need) {
		size_t least = a->chunk > CHUNK_MIN ? a->chunk : CHUNK_MIN;
		c = chunk_new(need > least ? need : least);
		/* A big block gets its own chunk behind the current one, so
		 * the free space of the current chunk is not abandoned. */
		if (need > least && a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = c->mem + c->used;
	c->used += need;
	a->used += need;
	return p;
}

void *arena_alloc(Arena *a, size_t n)
{
	void *p = arena_alloc_raw(a, n);
	memset(p, 0, n);
	return p;
}

void *arena_array(Arena *a, size_t n, size_t size)
{
	size_t total;
	if (!mul_size(n, size, &total))
		oom(SIZE_MAX);
	return arena_alloc(a, total);
}

void *arena_grow(Arena *a, void *old, size_t oldn, size_t newn, size_t size)
{
	void *p = arena_array(a, newn, size);
	if (old && oldn)
		memcpy(p, old, oldn * size);
	return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		BUG("bad format %s", fmt);
	char *p = arena_alloc(a, (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void *arena_memdup(Arena *a, const void *p, size_t n)
{
	void *q = arena_alloc_raw(a, n); /* every byte is copied over */
	if (n)
		memcpy(q, p, n);
	return q;
}

/* ---- checked arithmetic ---------------------------------------------- */

bool mul_nonneg_i64(int64_t a, int64_t b, int64_t *r)
{
	if (a < 0 || b < 0)
		return false;
	return !__builtin_mul_overflow(a, b, r);
}

bool add_nonneg_i64(int64_t a, int64_t b, int64_t *r)
{
	if (a < 0 || b < 0)
		return false;
	return !__builtin_add_overflow(a, b, r);
}

bool mul_size(size_t a, size_t b, size_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/* ---- strings --------------------------------------------------------- */

bool parse_i64(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	uint64_t v = 0, lim;
	if (n > 0 && s[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == n)
		return false;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* The length of the valid UTF-8 character at p[0..n), or 0: no
 * overlong forms, no surrogates, nothing above U+10FFFF. */
size_t utf8_char_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t len = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3
		     : c < 0xf5				    ? 4
							    : 0;
	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return len;
}

char *str_escape(const char *s, size_t n, unsigned how, size_t *outlen)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = xmalloc(4 * n + 1), *o = out;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_char_len(p + i, n - i);
		bool ctl = (how & ESC_CONTROLS) &&
			   (p[i] < 0x20 || p[i] == 0x7f ||
			    (p[i] == 0xc2 && k == 2 && p[i + 1] < 0xa0));
		if (k && !ctl) {
			memcpy(o, p + i, k);
			o += k;
			i += k;
		} else if (ctl && (p[i] == '\n' || p[i] == '\t')) {
			o += sprintf(o, p[i] == '\n' ? "\\n" : "\\t");
			i++;
		} else {
			/* a C1 control is shown as its two bytes */
			for (size_t j = 0; j < (k ? k : 1); j++)
				o += sprintf(o, "\\x%02x", p[i + j]);
			i += k ? k : 1;
		}
	}
	*o = 0;
	if (outlen)
		*outlen = (size_t)(o - out);
	return out;
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	if (!h)
		h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

/* Slicing by 8 over n bytes of s; crc inverted (the running value). */
static uint32_t crc_slices(uint32_t crc, const unsigned char *s, size_t n)
{
	while (n >= 8) {
		uint32_t lo = crc ^ ((uint32_t)s[0] | (uint32_t)s[1] << 8 |
				     (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][s[4]] ^ crc_table[2][s[5]] ^
		      crc_table[1][s[6]] ^ crc_table[0][s[7]];
		s += 8;
		n -= 8;
	}
	while (n--)
		crc = crc_table[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define CRC_FOLD_TARGET __attribute__((target("pclmul,sse4.1")))

/* The carry-less products that fold 128 bits of x forward over the
 * distance k's constants stand for, added to y: the reflected form of
 * "x times x^d mod P" split in its two 64-bit halves. */
static inline __attribute__((always_inline)) CRC_FOLD_TARGET __m128i
crc_fold(__m128i x, __m128i k, __m128i y)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)),
			     y);
}

/* CRC-32 of n bytes (n a multiple of 16, at least 64) by carry-less
 * multiplication (Intel's "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ", reflected): four 128-bit lanes folded 64 bytes at a
 * time, then into one lane, then Barrett reduction to 32 bits.  The
 * constants are x^d mod P for d = 4*128+-32 (lanes), 128+-32 (one lane),
 * 64 (the last fold), and P and floor(x^64 / P), all bit-reflected;
 * crc inverted, as crc_slices takes it.  About 10 times slicing by 8,
 * which dominated opening a large .om. */
static CRC_FOLD_TARGET uint32_t crc_clmul(uint32_t crc, const unsigned char *s,
					  size_t n)
{
	const __m128i k4 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
	const __m128i k1 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
	const __m128i k64 = _mm_set_epi64x(0, 0x163cd6124);
	const __m128i pu = _mm_set_epi64x(0x1f7011641, 0x1db710641);
	const __m128i lo32 = _mm_set_epi32(0, 0, 0, -1);
	const __m128i *v = (const __m128i *)(const void *)s;
	__m128i x0 = _mm_xor_si128(_mm_loadu_si128(v),
				   _mm_cvtsi32_si128((int)crc));
	__m128i x1 = _mm_loadu_si128(v + 1), x2 = _mm_loadu_si128(v + 2);
	__m128i x3 = _mm_loadu_si128(v + 3);
	size_t i = 4, nv = n / 16;
	for (; i + 4 <= nv; i += 4) {
		x0 = crc_fold(x0, k4, _mm_loadu_si128(v + i));
		x1 = crc_fold(x1, k4, _mm_loadu_si128(v + i + 1));
		x2 = crc_fold(x2, k4, _mm_loadu_si128(v + i + 2));
		x3 = crc_fold(x3, k4, _mm_loadu_si128(v + i + 3));
	}
	__m128i a = crc_fold(crc_fold(crc_fold(x0, k1, x1), k1, x2), k1, x3);
	for (; i < nv; i++)
		a = crc_fold(a, k1, _mm_loadu_si128(v + i));
	/* 128 bits to 64, to 32, then Barrett */
	a = _mm_xor_si128(_mm_clmulepi64_si128(a, k1, 0x10),
			  _mm_srli_si128(a, 8));
	a = _mm_xor_si128(
		_mm_clmulepi64_si128(_mm_and_si128(a, lo32), k64, 0x00),
		_mm_srli_si128(a, 4));
	__m128i t = _mm_and_si128(
		_mm_clmulepi64_si128(_mm_and_si128(a, lo32), pu, 0x10), lo32);
	a = _mm_xor_si128(a, _mm_clmulepi64_si128(t, pu, 0x00));
	return (uint32_t)_mm_extract_epi32(a, 1);
}

static bool crc_has_clmul(void)
{
	return cpu_has(CPU_PCLMUL) && cpu_has(CPU_SSE41);
}
#else
static uint32_t crc_clmul(uint32_t crc, const unsigned char *s, size_t n)
{
	return crc_slices(crc, s, n);
}

static bool crc_has_clmul(void) { return false; }
#endif

/* CRC-32 (IEEE).  crc starts at 0.  Folding by carry-less multiplication
 * where the CPU has it, slicing by 8 for the rest. */
uint32_t crc32_update(uint32_t crc, const void *p, size_t n)
{
	static _Atomic int ready; /* 1: tables, 2: tables and pclmul */
	const unsigned char *s = p;
	if (!ready) {
		crc_init(); /* idempotent, so a race only repeats the work */
		ready = crc_has_clmul() ? 2 : 1;
	}
	crc = ~crc;
	if (ready == 2 && n >= 64) {
		size_t head = n & ~(size_t)15;
		crc = crc_clmul(crc, s, head);
		s += head;
		n -= head;
	}
	return ~crc_slices(crc, s, n);
}

/* ---- name and pointer maps ------------------------------------------- */

/* NameMap and PtrMap are one open-addressing table, linear probing, at
 * most half full; name says whether its keys are compared as strings
 * (FNV-1a of the name) or by address. */
static uint32_t key_slot(const KeyTable *t, const void *key, bool name)
{
	uint32_t mask = t->cap - 1;
	uint32_t h = name ? (uint32_t)hash_bytes(key, strlen(key), 0)
			  : (uint32_t)(((uintptr_t)key >> 4) * 2654435761u);
	uint32_t i = h & mask;
	while (t->keys[i] &&
	       (name ? strcmp(t->keys[i], key) != 0 : t->keys[i] != key))
		i = (i + 1) & mask;
	return i;
}

static void table_release(KeyTable *t)
{
	free(t->keys);
	free(t->vals);
	memset(t, 0, sizeof(*t));
}

static int32_t table_get(const KeyTable *t, const void *key, bool name)
{
	if (!t->cap)
		return -1;
	uint32_t i = key_slot(t, key, name);
	return t->keys[i] ? t->vals[i] : -1;
}

static void table_rehash(KeyTable *t, uint32_t cap, bool name)
{
	KeyTable n = { xcalloc(cap, sizeof(void *)),
		       xcalloc(cap, sizeof(int32_t)), cap, 0 };
	for (uint32_t i = 0; i < t->cap; i++) {
		if (!t->keys[i])
			continue;
		uint32_t j = key_slot(&n, t->keys[i], name);
		n.keys[j] = t->keys[i];
		n.vals[j] = t->vals[i];
		n.len++;
	}
	table_release(t);
	*t = n;
}

static int32_t table_put(KeyTable *t, const void *key, int32_t val, bool name)
{
	if (2 * (t->len + 1) > t->cap)
		table_rehash(t, t->cap ? 2 * t->cap : 64, name);
	uint32_t i = key_slot(t, key, name);
	if (t->keys[i]) {
		int32_t old = t->vals[i];
		t->vals[i] = val;
		return old;
	}
	t->keys[i] = key;
	t->vals[i] = val;
	t->len++;
	return -1;
}

void namemap_init(NameMap *m) { memset(m, 0, sizeof(*m)); }
void namemap_release(NameMap *m) { table_release(&m->t); }

int32_t namemap_get(const NameMap *m, const char *key)
{
	return table_get(&m->t, key, true);
}

int32_t namemap_put(NameMap *m, const char *key, int32_t val)
{
	return table_put(&m->t, key, val, true);
}

void ptrmap_release(PtrMap *m) { table_release(&m->t); }

int32_t ptrmap_get(const PtrMap *m, const void *key)
{
	return table_get(&m->t, key, false);
}

int32_t ptrmap_put(PtrMap *m, const void *key, int32_t val)
{
	return table_put(&m->t, key, val, false);
}

/* ---- threads --------------------------------------------------------- */

int thread_count(int jobs)
{
	long n = jobs > 0 ? jobs : cpu_usable_cores();
	return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

typedef struct ForJob {
	int (*fn)(void *ctx, int32_t i);
	void *ctx;
	pthread_mutex_t lock;
	int32_t next, n;
	char **errors; /* per index, NULL if it went well */
} ForJob;

static void *for_worker(void *arg)
{
	ForJob *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->lock);
		int32_t i = j->next < j->n ? j->next++ : -1;
		pthread_mutex_unlock(&j->lock);
		if (i < 0)
			return NULL;
		clear_error();
		if (j->fn(j->ctx, i) < 0)
			j->errors[i] = xstrdup(last_error());
	}
}

int32_t parallel_for(int32_t n, int threads, int (*fn)(void *ctx, int32_t i),
		     void *ctx)
{
	ForJob j = { .fn = fn, .ctx = ctx, .n = n };
	if (n <= 0)
		return -1;
	j.errors = xcalloc((size_t)n, sizeof(char *));
	pthread_mutex_init(&j.lock, NULL);
	if (threads > n)
		threads = n;
	pthread_t *t = xcalloc((size_t)(threads > 1 ? threads : 1),
			       sizeof(pthread_t));
	int started = 0;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, for_worker, &j) == 0)
			started = i;
		else
			break; /* fewer threads, same result */
	for_worker(&j);
	for (int i = 1; i <= started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&j.lock);
	free(t);
	int32_t bad = -1;
	for (int32_t i = 0; i < n; i++) {
		if (j.errors[i] && bad < 0) {
			bad = i;
			error("%s", j.errors[i]);
		}
		free(j.errors[i]);
	}
	free(j.errors);
	return bad;
}

/* ---- files ----------------------------------------------------------- */

const char *file_kind(mode_t m)
{
	return S_ISDIR(m)    ? "is a directory"
	       : S_ISFIFO(m) ? "is a FIFO"
	       : S_ISSOCK(m) ? "is a socket"
	       : S_ISCHR(m)  ? "is a character device"
	       : S_ISBLK(m)  ? "is a block device"
	       : S_ISLNK(m)  ? "is a symbolic link"
			     : "is not a regular file";
}

/* Opens name (relative to dirfd) for reading and checks it is a regular
 * file; *size is its size.  O_NONBLOCK makes the open of a FIFO return at
 * once (instead of waiting for a writer), so that fstat can refuse it.
 * shown is the path for messages. */
static int open_regular(int dirfd, const char *name, int flags,
			const char *what, const char *shown, size_t *size)
{
	struct stat st;
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags);
	if (fd < 0)
		return error("%s '%s': cannot open: %s", what, shown,
			     strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return error("%s '%s': cannot stat: %s", what, shown,
			     strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return error("%s '%s': %s, expected a regular file", what,
			     shown, file_kind(st.st_mode));
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return error("%s '%s': too large to read", what, shown);
	}
	*size = (size_t)st.st_size;
	return fd;
}

/* Maps the open regular file fd of size bytes and closes fd. */
static int map_fd(FileMap *f, int fd, size_t size, const char *what,
		  const char *shown)
{
	memset(f, 0, sizeof(*f));
	f->size = size;
	if (size == 0) {
		close(fd);
		f->data = (const uint8_t *)"";
		return 0;
	}
	void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED)
		return error("%s '%s': cannot map: %s", what, shown,
			     strerror(e));
	f->data = p;
	f->mapped = true;
	return 0;
}

int filemap_open(FileMap *f, const char *path, const char *what)
{
	size_t size;
	memset(f, 0, sizeof(*f));
	int fd = open_regular(AT_FDCWD, path, 0, what, path, &size);
	return fd < 0 ? -1 : map_fd(f, fd, size, what, path);
}

/* Memory for a file of size bytes (size > 0), released with munmap: an
 * anonymous mapping, of huge pages where the kernel has them, since
 * faulting in 4 KB pages one by one made reading a 256 MB file take 1.8 s
 * instead of the 0.4 s of mapping it. */
static uint8_t *file_buffer(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, size, MADV_HUGEPAGE); /* a hint: no error if refused */
#endif
	return p;
}

/* Reads all of fd (size bytes by fstat) into f->data; a file that is
 * shorter or longer than that by the time it is read changed under us. */
static int read_fd(FileMap *f, int fd, size_t size, const char *what,
		   const char *shown)
{
	uint8_t *buf, extra;
	size_t got = 0;
	if (size == 0) {
		f->data = (const uint8_t *)"";
		return 0;
	}
	if (!(buf = file_buffer(size)))
		return error("%s '%s': cannot read: %zu bytes do not fit in "
			     "memory", what, shown, size);
	while (got <= size) {
		/* the last read, of one byte past the end, must find EOF */
		uint8_t *at = got < size ? buf + got : &extra;
		size_t want = got < size ? size - got : 1;
		ssize_t k = read(fd, at, want);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			munmap(buf, size);
			return error("%s '%s': cannot read: %s", what, shown,
				     strerror(e));
		}
		if (k == 0 && got < size) {
			munmap(buf, size);
			return error("%s '%s': the file changed while it was "
				     "read: it has %zu bytes, not %zu", what,
				     shown, got, size);
		}
		if (k == 0)
			break;
		if (got == size) {
			munmap(buf, size);
			return error("%s '%s': the file changed while it was "
				     "read: it grew past %zu bytes", what,
				     shown, size);
		}
		got += (size_t)k;
	}
	f->data = buf;
	f->size = size;
	f->mapped = true; /* released with munmap */
	return 0;
}

int filemap_copy(FileMap *f, const void *data, size_t size, const char *what)
{
	memset(f, 0, sizeof(*f));
	if (size == 0) {
		f->data = (const uint8_t *)"";
		return 0;
	}
	uint8_t *buf = file_buffer(size);
	if (!buf)
		return error("%s: cannot copy: %zu bytes do not fit in memory",
			     what, size);
	memcpy(buf, data, size);
	f->data = buf;
	f->size = size;
	f->mapped = true;
	return 0;
}

int filemap_read(FileMap *f, const char *path, const char *what)
{
	size_t size;
	memset(f, 0, sizeof(*f));
	int fd = open_regular(AT_FDCWD, path, 0, what, path, &size);
	if (fd < 0)
		return -1;
	/* reads block on a regular file whatever O_NONBLOCK says; clear it
	 * all the same, so that the loop above never sees EAGAIN */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	int rc = read_fd(f, fd, size, what, path);
	close(fd);
	return rc;
}

/* Opens directory component name below dirfd without following a
 * symbolic link; closes dirfd.  shown is the whole path, for messages. */
static int open_dir_below(int dirfd, const char *name, const char *shown,
			  const char *what)
{
	struct stat st;
	int fd = openat(dirfd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int e = errno;
	if (fd < 0 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		e = ELOOP;
	close(dirfd);
	if (fd >= 0)
		return fd;
	if (e == ELOOP)
		return error("%s '%s': '%s' is a symbolic link, which could "
			     "lead out of the model's directory", what, shown,
			     name);
	return error("%s '%s': cannot open '%s': %s", what, shown, name,
		     strerror(e));
}

/* Opens the last component name below dirfd: a regular file, not a
 * symbolic link. */
static int open_file_below(int dirfd, const char *name, const char *shown,
			   const char *what, size_t *size)
{
	struct stat st;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return error("%s '%s': not a file name", what, shown);
	int fd = open_regular(dirfd, name, O_NOFOLLOW, what, shown, size);
	if (fd < 0 && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return error("%s '%s': is a symbolic link, which could lead "
			     "out of the model's directory", what, shown);
	return fd;
}

int filemap_open_below(FileMap *f, const char *dir, const char *rel,
		       const char *what)
{
	size_t size = 0;
	char *path = xstrdup(rel), *name = path, *slash;
	char *shown = xmalloc(strlen(dir) + strlen(rel) + 2);
	sprintf(shown, "%s%s%s", dir, *dir ? "/" : "", rel);
	memset(f, 0, sizeof(*f));
	int fd = -1, dirfd = -1;
	if (*rel == '/')
		error("%s '%s': an absolute path, expected one inside the "
		      "model's directory", what, rel);
	else if ((dirfd = open(*dir ? dir : ".",
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		error("%s '%s': cannot open its directory: %s", what, shown,
		      strerror(errno));
	/* every component but the last must be a real directory */
	while (dirfd >= 0 && (slash = strchr(name, '/'))) {
		*slash = 0;
		if (!strcmp(name, "..")) {
			close(dirfd);
			dirfd = error("%s '%s': '..' leads out of the model's "
				      "directory", what, shown);
		} else if (*name && strcmp(name, ".")) {
			dirfd = open_dir_below(dirfd, name, shown, what);
		}
		name = slash + 1;
	}
	if (dirfd >= 0) {
		fd = open_file_below(dirfd, name, shown, what, &size);
		close(dirfd);
	}
	int rc = fd < 0 ? -1 : map_fd(f, fd, size, what, shown);
	free(path);
	free(shown);
	return rc;
}

void filemap_drop(FileMap *f, size_t off, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)f->data + off, hi = lo + len;
	lo = (lo + page - 1) & ~(page - 1);
	hi &= ~(page - 1);
	/* An inaccessible mapping in their place, not a hole: the
	 * kernel could hand a hole to the next mmap (malloc's), and
	 * filemap_release's munmap of the whole would then take it away. */
	if (f->mapped && off <= f->size && len <= f->size - off && hi > lo)
		mmap((void *)lo, hi - lo, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
		     -1, 0);
}

void filemap_release(FileMap *f)
{
	if (f->mapped)
		munmap((void *)f->data, f->size);
	memset(f, 0, sizeof(*f));
}
