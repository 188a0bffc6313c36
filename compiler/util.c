/* compiler/util.c - errors, arenas, arithmetic, maps, threads, files. */
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

/* ---- errors ---------------------------------------------------------- */

static _Thread_local char errbuf[1024];

/* Messages quote names from models and flags, which may hold any byte:
 * control characters are shown as \n, \t or \xNN so that every message
 * stays one line. */
static void escape_controls(void)
{
	char out[sizeof(errbuf)];
	size_t k = 0;
	bool any = false;
	for (const unsigned char *p = (const unsigned char *)errbuf; *p; p++)
		any |= *p < 0x20 || *p == 0x7f;
	if (!any)
		return;
	for (const unsigned char *p = (const unsigned char *)errbuf;
	     *p && k + 5 < sizeof(out); p++) {
		if (*p == '\n')
			k += (size_t)snprintf(out + k, sizeof(out) - k, "\\n");
		else if (*p == '\t')
			k += (size_t)snprintf(out + k, sizeof(out) - k, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			k += (size_t)snprintf(out + k, sizeof(out) - k, "\\x%02x",
					      *p);
		else
			out[k++] = (char)*p;
	}
	out[k] = 0;
	memcpy(errbuf, out, k + 1);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	escape_controls();
	return -1;
}

int error_prefix(const char *fmt, ...)
{
	char prefix[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(prefix, sizeof(prefix) - 2, fmt, ap);
	va_end(ap);
	size_t plen = n < 0 ? 0 : strlen(prefix);
	memcpy(prefix + plen, ": ", 3);
	plen += 2;
	size_t old = strnlen(errbuf, sizeof(errbuf) - 1);
	if (plen + old >= sizeof(errbuf)) /* keep the start of the message */
		old = sizeof(errbuf) - 1 - plen;
	memmove(errbuf + plen, errbuf, old);
	memcpy(errbuf, prefix, plen);
	errbuf[plen + old] = 0;
	escape_controls();
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

static void *oom(size_t n)
{
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

enum { CHUNK_MIN = 64 * 1024 };

void arena_init(Arena *a) { memset(a, 0, sizeof(*a)); }

void arena_release(Arena *a)
{
	ArenaChunk *c = a->head, *next;
	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	arena_init(a);
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
	c = malloc(sizeof(ArenaChunk) + need);
	if (!c)
		oom(need);
	c->next = NULL;
	c->size = need;
	c->used = 0;
	a->head = c;
}

/* n bytes, 16-byte aligned, not zeroed. */
void *arena_alloc_raw(Arena *a, size_t n)
{
	ArenaChunk *c = a->head;
	size_t need = (n + 15) & ~(size_t)15;
	if (need < n)
		oom(n);
	if (!c || c->size - c->used < need) {
		size_t size = need > CHUNK_MIN ? need : CHUNK_MIN;
		if (size > SIZE_MAX - sizeof(ArenaChunk))
			oom(n);
		c = malloc(sizeof(ArenaChunk) + size);
		if (!c)
			oom(n);
		c->size = size;
		c->used = 0;
		/* A big block gets its own chunk behind the current one, so
		 * the free space of the current chunk is not abandoned. */
		if (size > CHUNK_MIN && a->head) {
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

/* CRC-32 (IEEE), slicing by 8.  crc starts at 0. */
uint32_t crc32_update(uint32_t crc, const void *p, size_t n)
{
	static _Atomic int ready;
	const unsigned char *s = p;
	if (!ready) {
		crc_init(); /* idempotent, so a race only repeats the work */
		ready = 1;
	}
	crc = ~crc;
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
	return ~crc;
}

/* ---- name map -------------------------------------------------------- */

void namemap_init(NameMap *m) { memset(m, 0, sizeof(*m)); }

void namemap_release(NameMap *m)
{
	free(m->keys);
	free(m->vals);
	namemap_init(m);
}

static uint32_t slot_of(const NameMap *m, const char *key)
{
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)hash_bytes(key, strlen(key), 0) & mask;
	while (m->keys[i] && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & mask;
	return i;
}

int32_t namemap_get(const NameMap *m, const char *key)
{
	if (!m->cap)
		return -1;
	uint32_t i = slot_of(m, key);
	return m->keys[i] ? m->vals[i] : -1;
}

static void namemap_rehash(NameMap *m, uint32_t cap)
{
	NameMap n = { xcalloc(cap, sizeof(char *)), xcalloc(cap, sizeof(int32_t)),
		      cap, 0 };
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		uint32_t j = slot_of(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.len++;
	}
	namemap_release(m);
	*m = n;
}

int32_t namemap_put(NameMap *m, const char *key, int32_t val)
{
	if (2 * (m->len + 1) > m->cap)
		namemap_rehash(m, m->cap ? 2 * m->cap : 64);
	uint32_t i = slot_of(m, key);
	if (m->keys[i]) {
		int32_t old = m->vals[i];
		m->vals[i] = val;
		return old;
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->len++;
	return -1;
}

/* ---- threads --------------------------------------------------------- */

int thread_count(int jobs)
{
	long n = jobs > 0 ? jobs : sysconf(_SC_NPROCESSORS_ONLN);
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

int filemap_open(FileMap *f, const char *path, const char *what)
{
	struct stat st;
	memset(f, 0, sizeof(*f));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error("%s '%s': cannot open: %s", what, path,
			     strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return error("%s '%s': cannot stat: %s", what, path, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return error("%s '%s': is a directory, expected a file", what,
			     path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return error("%s '%s': not a regular file", what, path);
	}
	f->size = (size_t)st.st_size;
	if (f->size == 0) {
		close(fd);
		f->data = (const uint8_t *)"";
		return 0;
	}
	void *p = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return error("%s '%s': cannot map: %s", what, path,
			     strerror(errno));
	f->data = p;
	f->mapped = true;
	return 0;
}

void filemap_release(FileMap *f)
{
	if (f->mapped)
		munmap((void *)f->data, f->size);
	memset(f, 0, sizeof(*f));
}
