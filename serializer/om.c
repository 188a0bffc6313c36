/*
 * serializer/om.c - the .om container (layout in om.h): a streaming
 * writer and a reader that checks every byte it relies on.
 *
 * The writer lowers the Model, packs the rest of MODEL_DEF in memory,
 * writes each graph's bytes (on several threads: with many gears they are
 * nearly all of it) and then streams the file: a zeroed header, the
 * partition table, MODEL_DEF and the weights straight from their Tensors
 * (never one copy of all weights), computing the CRC on the way; the
 * header is written last.  om_encode streams the same bytes into memory.
 */
#define _GNU_SOURCE /* O_TMPFILE, AT_EMPTY_PATH */
#include "omimpl.h"

#include "compiler/pbwire.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- layout ------------------------------------------------------------ */

typedef struct Layout {
	OmLowered low;
	/* MODEL_DEF: the model less its graphs, then one Model.graphs
	 * entry per graph (a parser takes a repeated field's entries
	 * wherever they stand, in order) */
	uint8_t *head;
	size_t head_size;
	OmBuf *graphs;
	size_t def_size;
	uint32_t nparts;
	uint64_t def_off, w_off, total;
} Layout;

static void layout_release(Layout *l)
{
	for (int32_t i = 0; l->graphs && i < l->low.ngraphs; i++)
		free(l->graphs[i].p);
	free(l->graphs);
	free(l->head);
	om_lowered_release(&l->low);
	memset(l, 0, sizeof(*l));
}

/* ---- packing MODEL_DEF ------------------------------------------------- */

static int emit_one(void *ctx, int32_t i)
{
	Layout *l = ctx;
	OmBuf b = { 0 }; /* not in l->graphs: threads share its cache lines */
	int rc = om_emit_graph(&l->low, i, &b);
	l->graphs[i] = b;
	return rc;
}

/* -1 with the first failing graph's error, whatever thread saw it. */
static int pack_model(Layout *l, int threads)
{
	const ProtobufCMessage *msg = &l->low.msg->base;
	l->head_size = protobuf_c_message_get_packed_size(msg);
	l->head = xmalloc(l->head_size ? l->head_size : 1);
	if (protobuf_c_message_pack(msg, l->head) != l->head_size)
		BUG("MODEL_DEF packed to an unexpected size");
	l->graphs = xcalloc((size_t)l->low.ngraphs, sizeof(OmBuf));
	if (parallel_for(l->low.ngraphs, threads, emit_one, l) >= 0)
		return -1;
	l->def_size = l->head_size;
	for (int32_t i = 0; i < l->low.ngraphs; i++)
		l->def_size += l->graphs[i].n - l->graphs[i].start;
	return 0;
}

#ifdef GEARC_DEBUG
/* Debug builds read back what they are about to write. */
static void check_written(const Layout *l)
{
	uint8_t *def = xmalloc(l->def_size ? l->def_size : 1);
	size_t k = l->head_size;
	memcpy(def, l->head, l->head_size);
	for (int32_t i = 0; i < l->low.ngraphs; i++) {
		const OmBuf *b = &l->graphs[i];
		memcpy(def + k, b->p + b->start, b->n - b->start);
		k += b->n - b->start;
	}
	Gearom__Model *m = gearom__model__unpack(NULL, l->def_size, def);
	if (!m)
		BUG("MODEL_DEF written does not decode");
	if (om_check_model(m, NULL, l->low.weights_size, false) < 0)
		BUG("MODEL_DEF written is not valid: %s", last_error());
	if (m->n_graphs != (size_t)l->low.ngraphs)
		BUG("MODEL_DEF written has %zu graphs, not %d", m->n_graphs,
		    l->low.ngraphs);
	gearom__model__free_unpacked(m, NULL);
	free(def);
}
#endif

static int layout_init(Layout *l, const Model *m)
{
	memset(l, 0, sizeof(*l));
	if (om_lower(&l->low, m) < 0) {
		layout_release(l);
		return -1;
	}
	/* Never write what the reader would reject. */
	if (pack_model(l, thread_count(m->jobs)) < 0) {
		layout_release(l);
		return error_prefix("cannot write a valid .om file");
	}
#ifdef GEARC_DEBUG
	check_written(l);
#endif
	l->nparts = l->low.weights_size ? 2 : 1; /* inline constants only: none */
	l->def_off = om_align(OM_HEADER_SIZE + OM_PART_SIZE * l->nparts);
	l->w_off = om_align(l->def_off + l->def_size);
	l->total = l->def_off + l->def_size;
	if (l->nparts == 2 &&
	    __builtin_add_overflow(l->w_off, l->low.weights_size, &l->total)) {
		layout_release(l);
		return error("the weights are too large to write");
	}
	return 0;
}

static void put_header(uint8_t h[OM_HEADER_SIZE], const Layout *l,
		       uint32_t crc)
{
	memset(h, 0, OM_HEADER_SIZE);
	memcpy(h, OM_MAGIC, 8);
	om_put_u32(h + 8, OM_VERSION);
	om_put_u32(h + 12, OM_HEADER_SIZE);
	om_put_u64(h + 16, l->total);
	om_put_u32(h + 24, crc);
	om_put_u32(h + 28, l->nparts);
}

/* ---- sinks: memory or file --------------------------------------------- */

#define SINK_BUF (1 << 16)

typedef struct Sink {
	int fd;       /* the file, or -1 for memory */
	uint8_t *mem; /* memory: the whole file */
	uint64_t pos;
	uint32_t crc;
	int err; /* errno of the first failed write; later writes skipped */
	size_t nbuf;
	uint8_t *buf;
} Sink;

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno;
		if (k == 0)
			return EIO;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static void sink_flush(Sink *s)
{
	if (s->fd >= 0 && s->nbuf && !s->err)
		s->err = write_all(s->fd, s->buf, s->nbuf);
	s->nbuf = 0;
}

/* Appends n bytes, without the checksum. */
static void sink_raw(Sink *s, const void *p, size_t n)
{
	if (!n)
		return;
	if (s->fd < 0) {
		memcpy(s->mem + s->pos, p, n);
	} else if (n <= SINK_BUF - s->nbuf) {
		memcpy(s->buf + s->nbuf, p, n);
		s->nbuf += n;
	} else {
		sink_flush(s);
		if (n < SINK_BUF) {
			memcpy(s->buf, p, n);
			s->nbuf = n;
		} else if (!s->err) {
			s->err = write_all(s->fd, p, n);
		}
	}
	s->pos += n;
}

static void sink_put(Sink *s, const void *p, size_t n)
{
	if (!n)
		return;
	s->crc = crc32_update(s->crc, p, n);
	sink_raw(s, p, n);
}

static void sink_pad_to(Sink *s, uint64_t off)
{
	static const uint8_t zeros[OM_ALIGN];
	ASSERT(off >= s->pos);
	while (s->pos < off) {
		uint64_t n = off - s->pos;
		sink_put(s, zeros, n < sizeof(zeros) ? (size_t)n : sizeof(zeros));
	}
}

/* n float32 values, each a float16 number, as float16 (exact). */
static void put_half(Sink *s, const float *x, size_t n)
{
	uint16_t buf[4096];
	for (size_t i = 0; i < n; i += 4096) {
		size_t k = n - i < 4096 ? n - i : 4096;
		for (size_t j = 0; j < k; j++)
			buf[j] = minifloat_from(x[i + j], 5, 10);
		sink_put(s, buf, k * sizeof(uint16_t));
	}
}

static void put_tensor(Sink *s, const Tensor *t)
{
	if (t->from_half && t->dtype == DT_FLOAT) { /* Weight.stored_dtype */
		put_half(s, t->data, t->nbytes / sizeof(float));
		return;
	}
	if (t->dtype != DT_STRING) {
		sink_put(s, t->data, t->nbytes);
		return;
	}
	const Bytes *b = t->data;
	for (size_t i = 0; i < t->nbytes / sizeof(Bytes); i++) {
		uint8_t len[8];
		om_put_u64(len, b[i].len);
		sink_put(s, len, sizeof(len));
		sink_put(s, b[i].data, b[i].len);
	}
}

/* Everything after the header; s->crc is then the file's checksum. */
static void put_body(Sink *s, const Layout *l)
{
	uint8_t table[OM_PART_SIZE * 2] = { 0 };
	om_put_u32(table, OM_PART_MODEL_DEF);
	om_put_u64(table + 8, l->def_off);
	om_put_u64(table + 16, l->def_size);
	if (l->nparts == 2) {
		om_put_u32(table + OM_PART_SIZE, OM_PART_WEIGHTS);
		om_put_u64(table + OM_PART_SIZE + 8, l->w_off);
		om_put_u64(table + OM_PART_SIZE + 16, l->low.weights_size);
	}
	sink_put(s, table, OM_PART_SIZE * l->nparts);
	sink_pad_to(s, l->def_off);
	sink_put(s, l->head, l->head_size);
	for (int32_t i = 0; i < l->low.ngraphs; i++)
		sink_put(s, l->graphs[i].p + l->graphs[i].start,
			 l->graphs[i].n - l->graphs[i].start);
	for (int32_t i = 0; i < l->low.nweights; i++) {
		/* inline in MODEL_DEF, or no bytes at all (empty tensors
		 * only: then there is no WEIGHTS partition) */
		if (!l->low.weights[i] || l->nparts < 2)
			continue;
		sink_pad_to(s, l->w_off + l->low.msg->weights[i]->offset);
		put_tensor(s, l->low.weights[i]);
	}
	if (s->pos != l->total)
		BUG("wrote %llu bytes, layout says %llu",
		    (unsigned long long)s->pos, (unsigned long long)l->total);
}

int om_encode(const Model *m, uint8_t **out, size_t *len)
{
	Layout l;
	uint8_t zeros[OM_HEADER_SIZE] = { 0 };
	*out = NULL;
	*len = 0;
	if (layout_init(&l, m) < 0)
		return -1;
	if (l.total > SIZE_MAX) {
		layout_release(&l);
		return error("the model is too large to encode in memory");
	}
	Sink s = { .fd = -1, .mem = xmalloc((size_t)l.total) };
	sink_raw(&s, zeros, sizeof(zeros));
	put_body(&s, &l);
	put_header(s.mem, &l, s.crc);
	*out = s.mem;
	*len = (size_t)l.total;
	layout_release(&l);
	return 0;
}

/* ---- om_write: temporary file, fsync, rename --------------------------- */

/* The named temporary file om_write may leave if the process dies: set
 * (the name first, then the flag) just before the name exists, cleared
 * once it is renamed or removed, so om_remove_temp() can run from a
 * signal handler. */
static char pending_temp[4096];
static volatile sig_atomic_t pending;

void om_remove_temp(void)
{
	if (pending)
		unlink(pending_temp);
}

static void set_pending(const char *tmp)
{
	size_t n = strlen(tmp);
	pending = 0;
	if (n >= sizeof(pending_temp))
		return; /* too long to keep: best effort */
	memcpy(pending_temp, tmp, n + 1);
	atomic_signal_fence(memory_order_seq_cst); /* the name, then the flag */
	pending = 1;
}

/* "DIR/" of path ("" for none), and its base name. */
static char *dir_of(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	*base = slash ? slash + 1 : path;
	return slash ? strndup(path, (size_t)(slash - path) + 1) : xstrdup("");
}

/* A fresh name "DIR/.BASE.tmp.PID.N" next to path. */
static char *temp_name(const char *path)
{
	static unsigned counter;
	const char *base;
	char *dir = dir_of(path, &base);
	size_t n = strlen(path) + 64;
	char *tmp = xmalloc(n);
	snprintf(tmp, n, "%s.%s.tmp.%ld.%u", dir, base, (long)getpid(),
		 counter++);
	free(dir);
	return tmp;
}

/* What is at path, if anything, must be a regular file: an output never
 * replaces a device, FIFO, socket, directory or symbolic link.  (A path
 * that cannot be looked at is left to the file's creation to report.) */
static int check_replaceable(const char *flag, const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	return error("%s '%s': %s; gearc replaces only a regular file",
		     flag, path, file_kind(st.st_mode));
}

/* Creates "DIR/.BASE.tmp.PID.N" next to path (mode 0666 less umask),
 * exclusively: a name taken by anything, a planted symbolic link
 * included, is skipped for the next N. */
static int create_temp(const char *flag, const char *path, char **tmp)
{
	for (int tries = 0; tries < 100; tries++) {
		*tmp = temp_name(path);
		set_pending(*tmp);
		int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					    O_CLOEXEC,
			      0666);
		if (fd >= 0)
			return fd;
		int e = errno;
		pending = 0;
		free(*tmp);
		*tmp = NULL;
		if (e != EEXIST)
			return error("%s '%s': cannot create file: %s", flag,
				     path, strerror(e));
	}
	return error("%s '%s': cannot create a temporary file", flag, path);
}

bool om_use_tmpfile = true;

/* An unnamed file in path's directory (O_TMPFILE), or -1 where the system
 * or file system has none: nothing is visible until it is linked. */
static int create_unnamed(const char *path)
{
#ifdef O_TMPFILE
	if (!om_use_tmpfile)
		return -1;
	const char *base;
	char *dir = dir_of(path, &base);
	int fd = open(*dir ? dir : ".", O_TMPFILE | O_WRONLY | O_CLOEXEC,
		      0666);
	free(dir);
	return fd;
#else
	(void)path;
	return -1;
#endif
}

/* Gives the unnamed file fd the name tmp; errno on failure. */
static int link_unnamed(int fd, const char *tmp)
{
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
		return 0;
#ifdef AT_EMPTY_PATH
	if (linkat(fd, "", AT_FDCWD, tmp, AT_EMPTY_PATH) == 0)
		return 0;
#endif
	return errno;
}

static int write_header_at_start(int fd, const uint8_t *h)
{
	size_t done = 0;
	while (done < OM_HEADER_SIZE) {
		ssize_t k = pwrite(fd, h + done, OM_HEADER_SIZE - done,
				   (off_t)done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		done += (size_t)k;
	}
	return 0;
}

/* Best effort: makes the rename durable where directories can be synced. */
static void sync_dir_of(const char *path)
{
	const char *base;
	char *dir = dir_of(path, &base);
	int fd = open(*dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

/* Writes the file to fd and syncs it; 0 or errno. */
static int write_file(int fd, const Layout *l)
{
	uint8_t h[OM_HEADER_SIZE] = { 0 };
	Sink s = { .fd = fd, .buf = xmalloc(SINK_BUF) };
	sink_raw(&s, h, sizeof(h));
	put_body(&s, l);
	sink_flush(&s);
	free(s.buf);
	put_header(h, l, s.crc);
	if (!s.err)
		s.err = write_header_at_start(fd, h);
	if (!s.err && fsync(fd) < 0)
		s.err = errno;
	return s.err;
}

/* The PID in a temporary file name ".BASE.om.tmp.PID.N" (any BASE), or
 * -1. */
static long temp_pid(const char *name)
{
	const char *tmp = strstr(name, ".om.tmp."), *p, *dot;
	while (tmp && strstr(tmp + 1, ".om.tmp."))
		tmp = strstr(tmp + 1, ".om.tmp.");
	if (name[0] != '.' || !tmp || tmp == name)
		return -1;
	p = tmp + 8;
	dot = strchr(p, '.');
	int64_t pid, n;
	if (!dot || !parse_i64(p, (size_t)(dot - p), &pid) || pid <= 0 ||
	    pid > INT32_MAX || !parse_i64(dot + 1, strlen(dot + 1), &n) ||
	    n < 0)
		return -1;
	return (long)pid;
}

void om_remove_stale_temps(const char *path)
{
	const char *base;
	char *dir = dir_of(path, &base);
	DIR *d = opendir(*dir ? dir : ".");
	struct dirent *e;
	time_t now = time(NULL);
	while (d && (e = readdir(d))) {
		long pid = temp_pid(e->d_name);
		struct stat st;
		if (pid < 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH ||
		    fstatat(dirfd(d), e->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) ||
		    now - st.st_mtime < OM_STALE_TEMP_SECONDS)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	if (d)
		closedir(d);
	free(dir);
}

/* Writes l to path through a temporary file; 0 or -1 with the error. */
static int write_and_rename(const Layout *l, const char *path)
{
	if (check_replaceable("--output", path) < 0)
		return -1;
	char *tmp = NULL;
	int e = 0, fd = create_unnamed(path);
	if (fd >= 0) {
		e = write_file(fd, l);
		tmp = temp_name(path);
		set_pending(tmp);
		if (!e && link_unnamed(fd, tmp)) {
			/* no way to name it here: write a named one */
			pending = 0;
			free(tmp);
			tmp = NULL;
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		if ((fd = create_temp("--output", path, &tmp)) < 0)
			return -1;
		e = write_file(fd, l);
	}
	return om_temp_commit(fd, tmp, "--output", path, e);
}

int om_temp_open(const char *flag, const char *path, char **tmp)
{
	*tmp = NULL;
	if (check_replaceable(flag, path) < 0)
		return -1;
	return create_temp(flag, path, tmp);
}

int om_temp_commit(int fd, char *tmp, const char *flag, const char *path,
		   int e)
{
	if (close(fd) < 0 && !e)
		e = errno;
	int rc = 0;
	if (e)
		rc = error("%s '%s': cannot write: %s", flag, path,
			   strerror(e));
	else if (check_replaceable(flag, path) < 0)
		rc = -1; /* put there while the file was written */
	else if (rename(tmp, path) < 0)
		rc = error("%s '%s': cannot replace it: %s", flag, path,
			   strerror(errno));
	if (rc < 0)
		unlink(tmp);
	pending = 0;
	free(tmp);
	return rc;
}

int om_write_bytes(const char *flag, const char *path,
		   const void *const *parts, const size_t *sizes, int nparts)
{
	char *tmp;
	int e = 0, fd = om_temp_open(flag, path, &tmp);
	if (fd < 0)
		return -1;
	for (int i = 0; i < nparts && !e; i++)
		e = write_all(fd, parts[i], sizes[i]);
	if (!e && fsync(fd) < 0)
		e = errno;
	return om_temp_commit(fd, tmp, flag, path, e);
}

int om_write(const Model *m, const char *path)
{
	Layout l;
	const char *slash = strrchr(path, '/');
	if (!*(slash ? slash + 1 : path))
		return error("--output '%s': not a file name", path);
	if (layout_init(&l, m) < 0)
		return -1;
	int rc = write_and_rename(&l, path);
	layout_release(&l);
	if (!rc)
		sync_dir_of(path);
	return rc;
}

/* ---- reading ----------------------------------------------------------- */

static int check_header(const uint8_t *d, size_t size)
{
	if (size < OM_HEADER_SIZE) {
		if (size == 0)
			return error("file is empty");
		if (memcmp(d, OM_MAGIC, size < 8 ? size : 8))
			return error("not a gearc .om file (bad magic)");
		return error("file is truncated: %zu bytes, shorter than the "
			     "%d-byte header",
			     size, OM_HEADER_SIZE);
	}
	if (memcmp(d, OM_MAGIC, 8))
		return error("not a gearc .om file (bad magic)");
	uint32_t version = om_get_u32(d + 8), hsize = om_get_u32(d + 12);
	uint64_t flen = om_get_u64(d + 16);
	if (version != OM_VERSION)
		return error("unsupported .om format version %u (this gearc "
			     "reads %d)",
			     version, OM_VERSION);
	if (hsize != OM_HEADER_SIZE)
		return error("header size is %u, expected %d", hsize,
			     OM_HEADER_SIZE);
	for (int i = 32; i < OM_HEADER_SIZE; i++)
		if (d[i])
			return error("reserved header bytes are not zero");
	if (flen > size)
		return error("file is truncated: header says %llu bytes, file "
			     "has %zu",
			     (unsigned long long)flen, size);
	if (flen < size)
		return error("file has %zu bytes, header says %llu: trailing "
			     "data",
			     size, (unsigned long long)flen);
	if (crc32_update(0, d + OM_HEADER_SIZE, size - OM_HEADER_SIZE) !=
	    om_get_u32(d + 24))
		return error("checksum mismatch: file is corrupt");
	return 0;
}

typedef struct Part {
	uint32_t type;
	uint64_t off, size;
} Part;

static int read_part(const uint8_t *d, size_t size, uint32_t i,
		     uint64_t table_end, Part *p)
{
	const uint8_t *e = d + OM_HEADER_SIZE + (size_t)i * OM_PART_SIZE;
	uint64_t end;
	p->type = om_get_u32(e);
	p->off = om_get_u64(e + 8);
	p->size = om_get_u64(e + 16);
	if (p->type != OM_PART_MODEL_DEF && p->type != OM_PART_WEIGHTS)
		return error("partition %u has unknown type %u", i, p->type);
	if (om_get_u32(e + 4))
		return error("partition %u: reserved field is %u, expected 0",
			     i, om_get_u32(e + 4));
	if (p->off % OM_ALIGN)
		return error("partition %u at offset %llu is not %d-byte "
			     "aligned",
			     i, (unsigned long long)p->off, OM_ALIGN);
	if (p->off < table_end)
		return error("partition %u at offset %llu overlaps the "
			     "partition table",
			     i, (unsigned long long)p->off);
	if (__builtin_add_overflow(p->off, p->size, &end) || end > size)
		return error("partition %u (offset %llu, size %llu) runs past "
			     "the end of the file (%zu bytes)",
			     i, (unsigned long long)p->off,
			     (unsigned long long)p->size, size);
	return 0;
}

/* Where the last partition ends: the file must end there. */
static uint64_t last_end(const Part *parts, uint32_t n)
{
	uint64_t end = 0;
	for (uint32_t i = 0; i < n; i++)
		if (parts[i].off + parts[i].size > end)
			end = parts[i].off + parts[i].size;
	return end;
}

/* Finds MODEL_DEF and WEIGHTS in the partition table. */
static int read_parts(const uint8_t *d, size_t size, Part *def, Part *w)
{
	Part parts[OM_MAX_PARTS];
	uint32_t n = om_get_u32(d + 28), ndef = 0, nw = 0;
	uint64_t table_end = OM_HEADER_SIZE + (uint64_t)n * OM_PART_SIZE;
	if (n < 1 || n > OM_MAX_PARTS)
		return error("partition count %u is out of range (1..%d)", n,
			     OM_MAX_PARTS);
	if (table_end > size)
		return error("partition table runs past the end of the file");
	memset(w, 0, sizeof(*w));
	for (uint32_t i = 0; i < n; i++) {
		Part *p = &parts[i];
		if (read_part(d, size, i, table_end, p) < 0)
			return -1;
		for (uint32_t j = 0; j < i; j++)
			if (p->size && parts[j].size &&
			    p->off < parts[j].off + parts[j].size &&
			    parts[j].off < p->off + p->size)
				return error("partitions %u and %u overlap", j,
					     i);
		if (p->type == OM_PART_MODEL_DEF && !ndef++)
			*def = *p;
		if (p->type == OM_PART_WEIGHTS && !nw++)
			*w = *p;
	}
	if (ndef != 1)
		return error("%u MODEL_DEF partitions, expected one", ndef);
	if (last_end(parts, n) != size)
		return error("%llu bytes after the last partition",
			     (unsigned long long)(size - last_end(parts, n)));
	if (nw > 1)
		return error("%u WEIGHTS partitions, expected at most one", nw);
	return 0;
}

/* What unpacking MODEL_DEF may allocate, at most: OM_DECODE_RATIO times
 * its size, plus OM_DECODE_SLACK (which covers the fixed part that
 * dominates small files).  The files gearc writes need about 20 times at
 * most (measured with pb_scan's bound: a 20,000-node Relu chain 20.4, the
 * test models with gears 11 to 16, the ONNX backend test models 24 at
 * most, all of them under 1 KB); a file of empty repeated entries needs
 * 50 to 90 times (two bytes of input each, a struct of 50 to 150 bytes
 * and protobuf-c's 32-byte scan record), and is refused before anything
 * is allocated.  Entries of one small field each can still cost about 26
 * times their bytes: that, not the 1.3 GB of a 16 MB file, is the most a
 * file can make the reader take. */
enum { OM_DECODE_RATIO = 40, OM_DECODE_SLACK = 1 << 20 };

static int check_wire(const uint8_t *p, size_t n)
{
	PbScan s = { .max_depth = 16 };
	switch (pb_scan(p, n, &gearom__model__descriptor, &s)) {
	case PB_OK:
		break;
	case PB_NUL:
		return error("MODEL_DEF: field %s.%s holds a NUL byte",
			     s.message, s.field);
	case PB_DEEP:
		return error("MODEL_DEF: messages are nested deeper than a "
			     "gearom.Model's");
	default:
		return error("MODEL_DEF does not decode as a gearom.Model");
	}
	if (s.alloc > (uint64_t)n * OM_DECODE_RATIO + OM_DECODE_SLACK)
		return error("MODEL_DEF would take %llu bytes of memory to "
			     "decode, more than %d times its %zu bytes: its "
			     "repeated fields hold more entries than a "
			     "gearc file has", (unsigned long long)s.alloc,
			     OM_DECODE_RATIO, n);
	return 0;
}

static void *pb_alloc(void *arena, size_t size)
{
	return arena_alloc_raw(arena, size);
}

static void pb_free(void *arena, void *p)
{
	(void)arena, (void)p; /* the arena goes at once */
}

static int parse(OmFile *f)
{
	ProtobufCAllocator in_arena = { pb_alloc, pb_free, &f->pb };
	Part def = { 0 }, w = { 0 };
	if (check_header(f->data, f->size) < 0 ||
	    read_parts(f->data, f->size, &def, &w) < 0)
		return -1;
	if (check_wire(f->data + def.off, (size_t)def.size) < 0)
		return -1;
	/* the message in chunks of MODEL_DEF's size (huge pages from 2 MB):
	 * its inline constants are most of it (util.c chunk_new) */
	f->pb.chunk = (size_t)def.size;
	f->model = gearom__model__unpack(f->in_arena ? &in_arena : NULL,
					 (size_t)def.size, f->data + def.off);
	if (!f->model)
		return error("MODEL_DEF does not decode as a gearom.Model");
	f->weights = w.size ? f->data + w.off : NULL;
	f->weights_size = w.size;
	f->def_off = def.off;
	f->def_size = def.size;
	return om_check_model(f->model, f->weights, f->weights_size, true);
}

static void om_free_model(OmFile *f)
{
	if (f->model && !f->in_arena)
		gearom__model__free_unpacked(f->model, NULL);
	arena_release(&f->pb);
	f->model = NULL;
}

static int parse_as(OmFile *f, const uint8_t *data, size_t size,
		    const char *name, bool in_arena)
{
	memset(f, 0, sizeof(*f));
	f->data = data;
	f->size = size;
	f->in_arena = in_arena;
	if (parse(f) < 0) {
		om_free_model(f);
		memset(f, 0, sizeof(*f));
		return error_prefix("%s", name);
	}
	return 0;
}

int om_parse(OmFile *f, const uint8_t *data, size_t size, const char *name)
{
	return parse_as(f, data, size, name, false);
}

/* map (taken: released on failure) parsed and validated into f, named
 * path in messages. */
static int open_map(OmFile *f, FileMap map, const char *path, bool in_arena)
{
	if (parse_as(f, map.data, map.size, path, in_arena) < 0) {
		filemap_release(&map);
		return -1;
	}
	f->map = map;
	if (in_arena)
		filemap_drop(&f->map, (size_t)f->def_off, (size_t)f->def_size);
	return 0;
}

static int open_as(OmFile *f, const char *path, bool in_arena)
{
	FileMap map;
	if (filemap_read(&map, path, "file") < 0) {
		memset(f, 0, sizeof(*f));
		return -1;
	}
	return open_map(f, map, path, in_arena);
}

int om_open_memory(OmFile *f, const void *data, size_t size,
		   const char *name)
{
	FileMap map;
	if (filemap_copy(&map, data, size, name) < 0) {
		memset(f, 0, sizeof(*f));
		return -1;
	}
	return open_map(f, map, name, true);
}

int om_open(OmFile *f, const char *path)
{
	return open_as(f, path, false);
}

int om_open_readonly(OmFile *f, const char *path)
{
	return open_as(f, path, true);
}

void om_close(OmFile *f)
{
	om_free_model(f);
	filemap_release(&f->map);
	memset(f, 0, sizeof(*f));
}
