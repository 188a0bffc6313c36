/*
 * compiler/util.h - the small things every part of gearc uses.
 *
 * Errors.  There are two classes (as in git and ggml):
 *   - user errors (bad flag, malformed model, corrupt .om): a function
 *     formats a one-line message with error(), which stores it in a
 *     thread-local buffer and returns -1; callers pass the -1 up; cli/
 *     prints "gearc: error: <message>" and picks the exit status.
 *   - internal bugs: BUG() prints file:line and aborts.
 * Nothing below cli/ calls exit().
 *
 * Arenas.  A compile allocates its IR from one Arena and frees it at once
 * (ggml context, git mem-pool).  Allocation never fails silently: on OOM
 * we abort with a message, since no caller could do better.
 */
#ifndef GEARC_UTIL_H
#define GEARC_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#define NORETURN __attribute__((noreturn))
#else
#define PRINTF_LIKE(f, a)
#define NORETURN
#endif

/* ---- errors ---------------------------------------------------------- */

/* Format a user error into the thread's error buffer; returns -1. */
int error(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* Prepend "prefix: " to the current error message; returns -1. */
int error_prefix(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* The last message set by error() on this thread ("" if none). */
const char *last_error(void);
void clear_error(void);

NORETURN void bug_at(const char *file, int line, const char *fmt, ...)
	PRINTF_LIKE(3, 4);
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
#define ASSERT(c) ((c) ? (void)0 : BUG("assertion failed: %s", #c))

/* ---- memory ---------------------------------------------------------- */

/* An allocation that fails (memory short, or a size past the address
 * space) aborts, unless this thread has set a trap: then it returns to
 * the trap's setjmp with the size asked for.  libgearrt sets one around
 * a run's kernels, so a hostile input's huge tensor is an error, not an
 * abort:
 *
 *	OomTrap t;
 *	if (setjmp(t.jb))
 *		return error("cannot allocate %zu bytes", t.bytes);
 *	oom_trap_push(&t);
 *	...
 *	oom_trap_pop(&t);
 *
 * Memory the interrupted code held outside an arena is lost; locks it
 * held stay held, so no code under a lock runs inside a trap. */
typedef struct OomTrap {
	jmp_buf jb;
	size_t bytes;
	struct OomTrap *prev;
} OomTrap;
void oom_trap_push(OomTrap *t);
void oom_trap_pop(OomTrap *t);
/* Whether this thread has set one. */
bool oom_trapped(void);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* vsnprintf into a malloc'd string of the length it needs. */
char *xvasprintf(const char *fmt, va_list ap);

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
	ArenaChunk *head;
	size_t used;  /* bytes handed out, for statistics */
	size_t chunk; /* the least a new chunk takes (0: 64 KB); set it
		       * before the first allocation to have few large
		       * chunks, of huge pages from 2 MB up */
} Arena;

/* bytes (at least 64), 64-byte aligned, released with free(): from 2 MB
 * up, whole 2 MB pages, huge where the kernel has them (transparent huge
 * pages on request, as Debian ships them), which spares a run over large
 * feature maps most of its TLB misses and a load most of its page
 * faults.  *got (if not NULL) receives the bytes allocated; NULL if
 * memory is short. */
void *big_alloc(size_t bytes, size_t *got);

void arena_init(Arena *a);
void arena_release(Arena *a); /* frees everything; a may be reused */
void *arena_alloc(Arena *a, size_t n);  /* zeroed, 16-byte aligned */
void *arena_alloc_raw(Arena *a, size_t n); /* the same, not zeroed */
/* Forgets every allocation but keeps memory for the next round: the
 * chunks become one chunk as large as this round handed out, so a
 * workload that repeats (a runtime session's scratch, reset after each
 * node) stops calling malloc once one chunk holds its largest round. */
void arena_reset(Arena *a);
void *arena_array(Arena *a, size_t n, size_t size); /* overflow-checked */
/* n zeroed elements of type from arena a. */
#define ARENA_ARRAY(a, n, type) \
	((type *)arena_array((a), (size_t)(n), sizeof(type)))
void *arena_grow(Arena *a, void *old, size_t oldn, size_t newn, size_t size);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) PRINTF_LIKE(2, 3);
void *arena_memdup(Arena *a, const void *p, size_t n);

/* Append one element to an arena-backed growable array.  Returns the
 * index of the new, zeroed element.  *cap is the capacity. */
#define ARENA_PUSH(arena, arr, n, cap)                                      \
	((n) == (cap) ? ((arr) = arena_grow((arena), (arr), (cap),          \
					    (cap) ? 2 * (cap) : 8,          \
					    sizeof(*(arr))),                \
			 (cap) = (cap) ? 2 * (cap) : 8, (n)++)              \
		      : (n)++)

/* ---- checked arithmetic ---------------------------------------------- */

/* *r = a * b; false on overflow or if either is negative. */
bool mul_nonneg_i64(int64_t a, int64_t b, int64_t *r);
bool add_nonneg_i64(int64_t a, int64_t b, int64_t *r);
bool mul_size(size_t a, size_t b, size_t *r);

/* ---- strings --------------------------------------------------------- */

/* Parse a whole string as a decimal int64 (optional leading '-').
 * No spaces, no '+', no trailing characters.  false on any error. */
bool parse_i64(const char *s, size_t n, int64_t *out);
/* The length of the valid UTF-8 character starting p[0..n), or 0. */
size_t utf8_char_len(const unsigned char *p, size_t n);
/* s[0..n) as valid UTF-8 text (malloc'd, NUL-terminated, length in
 * *outlen if not NULL): every byte that is not part of a valid UTF-8
 * character becomes \xNN; with ESC_CONTROLS also control characters
 * (C0 as \n, \t or \xNN, DEL and the C1 ones as \xNN bytes), so that
 * a name from a file cannot move a terminal's cursor (ESC[2J) or break a
 * line.  An embedded NUL (n counts it) becomes \x00. */
char *str_escape(const char *s, size_t n, unsigned how, size_t *outlen);
enum { ESC_CONTROLS = 1 };
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed); /* FNV-1a 64 */
/* SHA-256 of p[0..n) (compiler/sha256.c): its 32 bytes, or as 64
 * lower-case hex digits and a NUL, as sha256sum prints it. */
void sha256(const void *p, size_t n, uint8_t out[32]);
void sha256_hex(const void *p, size_t n, char out[65]);
uint32_t crc32_update(uint32_t crc, const void *p, size_t n);

/* The table behind NameMap and PtrMap (compiler/util.c): open
 * addressing, keys not copied, zero is empty. */
typedef struct KeyTable {
	const void **keys;
	int32_t *vals;
	uint32_t cap, len;
} KeyTable;

/* Name -> int32 map; keys are not copied. */
typedef struct NameMap {
	KeyTable t;
} NameMap;

void namemap_init(NameMap *m);
void namemap_release(NameMap *m);
/* Returns the value for key, or -1. */
int32_t namemap_get(const NameMap *m, const char *key);
/* Sets key -> val; returns the previous value or -1 if it was new. */
int32_t namemap_put(NameMap *m, const char *key, int32_t val);

/* Pointer -> int32 map, the same for keys compared by address (a weight
 * met again: passes/flatten.c, serializer/export.c).  Zero is empty. */
typedef struct PtrMap {
	KeyTable t;
} PtrMap;

void ptrmap_release(PtrMap *m);
/* Returns the value for key (not NULL), or -1. */
int32_t ptrmap_get(const PtrMap *m, const void *key);
/* Sets key (not NULL) -> val; returns the previous value or -1. */
int32_t ptrmap_put(PtrMap *m, const void *key, int32_t val);

/* ---- threads --------------------------------------------------------- */

/* The threads -j N asks for: N, or the number of cores if N <= 0. */
int thread_count(int jobs);

/* Calls fn(ctx, i) once for every i in [0, n), on up to `threads`
 * threads (the caller's among them), taking indices in order; returns
 * when all calls have: -1 if every call returned 0, else the smallest i
 * whose call failed, with that call's error set on this thread.  So the
 * result does not depend on the thread count. */
int32_t parallel_for(int32_t n, int threads, int (*fn)(void *ctx, int32_t i),
		     void *ctx);

/* ---- files ----------------------------------------------------------- */

/* A read-only view of a whole file: mapped, or read into memory.
 * Every opener refuses what is not a regular file (a FIFO, socket,
 * device or directory) with an error, without waiting on it. */
typedef struct FileMap {
	const uint8_t *data;
	size_t size;
	bool mapped; /* data is a mapping (of the file, or of the memory
		      * filemap_read read it into) */
} FileMap;

/* "is a FIFO", "is a directory", ... for a file that is not a regular
 * one (mode from stat or lstat), as the errors about it say it. */
const char *file_kind(mode_t m);

/* Maps path; on failure sets an error naming what/path and returns -1.
 * A mapping faults (SIGBUS) if the file is truncated while it is used:
 * for files that must be read whole and whose reader must survive that,
 * use filemap_read. */
int filemap_open(FileMap *f, const char *path, const char *what);
/* Reads path into memory; a file that changes size while it is read is
 * an error. */
int filemap_read(FileMap *f, const char *path, const char *what);
/* The same from size bytes at data (a copy, in the memory filemap_read
 * reads into): -1 with an error naming what if memory is short. */
int filemap_copy(FileMap *f, const void *data, size_t size, const char *what);
/* Gives back the whole pages of [off, off + len) of a mapped f (nothing
 * for one that is not): for bytes read once and kept elsewhere, such as
 * a message unpacked into its own memory.  Their pages stay reserved
 * but inaccessible: reading them afterwards faults, where zeros would be
 * a silent wrong answer. */
void filemap_drop(FileMap *f, size_t off, size_t len);
/* Maps the file at the relative path rel inside directory dir ("" for the
 * current one) without leaving dir: no component of rel may be "..", and
 * none may be a symbolic link (each is opened with O_NOFOLLOW below the
 * one before), so no byte outside dir is read. */
int filemap_open_below(FileMap *f, const char *dir, const char *rel,
		       const char *what);
void filemap_release(FileMap *f);

#endif
