/*
 * cli/compare.c - `gearc compare A B [--rtol=R] [--atol=A]`: two folders
 * of tensors, matched by name (msquickcmp's job for atc's dumps,
 * Polygraphy's --compare for TensorRT's).
 *
 * A folder is what `gearc run --dump-tensors` writes (cli/tensors.h:
 * index.json gives the run order, the names and what was fused away) or
 * any folder of NAME.npy files (ONNX Runtime's tensors saved with numpy,
 * names escaped as gearc names files: npy_name).  Tensors are listed in
 * the run order of the first folder with an index (else by name), each
 * with its largest absolute and relative difference and the elements
 * past |A - B| <= atol + rtol |B| (B is the reference) or whose NaN or
 * infinity does not match; the first tensor past the tolerance is named
 * at the end: where a wrong kernel or weight first shows.  Exit 1 if any
 * tensor is past it (or has another shape), 0 if none is, 2 for a usage
 * error.
 */
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "npy.h"
#include "tensors.h"

/* The default tolerance: the one this project compares with ONNX
 * Runtime by (tests/check_models_ort.mjs, make bench). */
#define DEFAULT_RTOL 1e-4
#define DEFAULT_ATOL 1e-5

typedef struct Entry {
	char *name, *file; /* file NULL: not written (fused away, ...) */
	char *kind, *node, *op;
} Entry;

typedef struct Side {
	const char *dir;
	bool indexed;
	Entry *e;
	int n;
	int *by_name; /* entries sorted by name, for find() */
	bool *matched;
} Side;

typedef struct Diff {
	bool same_shape;
	double max_abs, max_rel;
	int64_t n, past, nonfinite;
} Diff;

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static const char *jstring(json_object *o, const char *key)
{
	json_object *v;
	return json_object_object_get_ex(o, key, &v) &&
			       json_object_is_type(v, json_type_string)
		       ? json_object_get_string(v)
		       : NULL;
}

static char *path_in_dir(const char *dir, const char *file)
{
	size_t n = strlen(dir) + strlen(file) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, file);
	return p;
}

/* A .npy file listed must be a plain name in the folder. */
static bool plain_file(const char *f)
{
	return *f && !strchr(f, '/') && strcmp(f, ".") && strcmp(f, "..");
}

static int read_index(Side *s, const char *path)
{
	json_object *doc = json_object_from_file(path), *list;
	const char *fmt = doc ? jstring(doc, "format") : NULL;
	if (!fmt || strcmp(fmt, TENSORS_FORMAT) ||
	    !json_object_object_get_ex(doc, "tensors", &list) ||
	    !json_object_is_type(list, json_type_array)) {
		json_object_put(doc);
		return error("compare: '%s' is not a tensor index (expected "
			     "the JSON object with \"format\": \"%s\" that "
			     "gearc run --dump-tensors writes)",
			     path, TENSORS_FORMAT);
	}
	s->n = (int)json_object_array_length(list);
	s->e = xcalloc((size_t)s->n + 1, sizeof(Entry));
	for (int i = 0; i < s->n; i++) {
		json_object *o = json_object_array_get_idx(list, (size_t)i);
		const char *name = jstring(o, "name"), *file = jstring(o, "file");
		if (!name || (file && !plain_file(file))) {
			json_object_put(doc);
			return error("compare: '%s': tensor %d has no name or "
				     "a file outside the folder", path, i);
		}
		s->e[i] = (Entry){ xstrdup(name), dup_or_null(file),
				   dup_or_null(jstring(o, "kind")),
				   dup_or_null(jstring(o, "node")),
				   dup_or_null(jstring(o, "op")) };
	}
	json_object_put(doc);
	return 0;
}

static int by_file(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_npy(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return n > 4 && !strcmp(d->d_name + n - 4, ".npy");
}

/* A folder without an index: its .npy files, by name. */
static int read_files(Side *s)
{
	struct dirent **list;
	int n = scandir(s->dir, &list, is_npy, by_file);
	if (n < 0)
		return error("compare: cannot read the folder '%s': %s", s->dir,
			     strerror(errno));
	s->n = n;
	s->e = xcalloc((size_t)n + 1, sizeof(Entry));
	for (int i = 0; i < n; i++) {
		char *name = npy_name(list[i]->d_name);
		if (!name) { /* not escaped as gearc escapes: the stem */
			name = xstrdup(list[i]->d_name);
			name[strlen(name) - 4] = 0;
		}
		s->e[i] = (Entry){ .name = name,
				   .file = xstrdup(list[i]->d_name) };
		free(list[i]);
	}
	free(list);
	return 0;
}

static const Side *sort_side; /* for by_entry_name (qsort has no ctx) */

static int by_entry_name(const void *a, const void *b)
{
	return strcmp(sort_side->e[*(const int *)a].name,
		      sort_side->e[*(const int *)b].name);
}

static int open_side(Side *s, const char *dir)
{
	struct stat st;
	s->dir = dir;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return error("compare: '%s' is not a folder of tensors (a "
			     "directory of .npy files, as gearc run "
			     "--dump-tensors writes)", dir);
	char *index = path_in_dir(dir, TENSORS_INDEX);
	s->indexed = access(index, F_OK) == 0;
	int rc = s->indexed ? read_index(s, index) : read_files(s);
	free(index);
	if (rc < 0)
		return -1;
	int files = 0;
	for (int i = 0; i < s->n; i++)
		files += s->e[i].file != NULL;
	if (!files)
		return error("compare: '%s' holds no .npy file", dir);
	s->by_name = xmalloc(((size_t)s->n + 1) * sizeof(int));
	for (int i = 0; i < s->n; i++)
		s->by_name[i] = i;
	sort_side = s;
	qsort(s->by_name, (size_t)s->n, sizeof(int), by_entry_name);
	s->matched = xcalloc((size_t)s->n + 1, sizeof(bool));
	return 0;
}

static void close_side(Side *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->e[i].name);
		free(s->e[i].file);
		free(s->e[i].kind);
		free(s->e[i].node);
		free(s->e[i].op);
	}
	free(s->e);
	free(s->by_name);
	free(s->matched);
}

/* The entry of s called name (the first one with a file), or -1. */
static int find(const Side *s, const char *name)
{
	int lo = 0, hi = s->n, found = -1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(s->e[s->by_name[mid]].name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int k = lo; k < s->n && !strcmp(s->e[s->by_name[k]].name, name);
	     k++)
		if (found < 0 || (!s->e[found].file && s->e[s->by_name[k]].file))
			found = s->by_name[k];
	return found;
}

/* ---- one pair ------------------------------------------------------------ */

static void diff_numbers(const Tensor *a, const Tensor *b, double rtol,
			 double atol, Diff *d)
{
	for (int64_t i = 0; i < d->n; i++) {
		double x = tensor_get_f64(a, i), y = tensor_get_f64(b, i);
		if (!isfinite(x) || !isfinite(y)) {
			bool same = (isnan(x) && isnan(y)) || x == y;
			d->nonfinite += !same;
			d->past += !same;
			continue;
		}
		double e = fabs(x - y);
		double r = y != 0 ? e / fabs(y) : e != 0 ? INFINITY : 0;
		d->max_abs = e > d->max_abs ? e : d->max_abs;
		d->max_rel = r > d->max_rel ? r : d->max_rel;
		d->past += !(e <= atol + rtol * fabs(y));
	}
}

static void diff_strings(const Tensor *a, const Tensor *b, Diff *d)
{
	const Bytes *x = a->data, *y = b->data;
	for (int64_t i = 0; i < d->n; i++)
		d->past += x[i].len != y[i].len ||
			   (x[i].len && memcmp(x[i].data, y[i].data, x[i].len));
}

/* Compares the files of e (in A) and f (in B): -1 with an error if one
 * cannot be read or the two cannot be compared at all. */
static int diff_pair(const Side *A, const Entry *e, const Side *B,
		     const Entry *f, double rtol, double atol, Diff *d,
		     char *what, size_t wn)
{
	Arena ar = { 0 };
	char *pa = path_in_dir(A->dir, e->file), *pb = path_in_dir(B->dir, f->file);
	const Tensor *a = npy_read(&ar, pa), *b = a ? npy_read(&ar, pb) : NULL;
	int rc = 0;
	*d = (Diff){ .n = a ? shape_numel(&a->shape) : 0 };
	if (!a || !b) {
		rc = error_prefix("compare");
	} else if ((a->dtype == DT_STRING) != (b->dtype == DT_STRING)) {
		rc = error("compare: '%s' is %s in '%s' and %s in '%s': not "
			   "comparable", e->name, dtype_name(a->dtype), A->dir,
			   dtype_name(b->dtype), B->dir);
	} else {
		char sa[128], sb[128];
		d->same_shape = shape_equal(&a->shape, &b->shape);
		shape_str(&a->shape, sa, sizeof(sa));
		shape_str(&b->shape, sb, sizeof(sb));
		if (a->dtype == b->dtype)
			snprintf(what, wn, "%s %s", dtype_name(a->dtype), sa);
		else
			snprintf(what, wn, "%s/%s %s", dtype_name(a->dtype),
				 dtype_name(b->dtype), sa);
		if (!d->same_shape)
			snprintf(what, wn, "shape %s in A, %s in B", sa, sb);
		else if (a->dtype == DT_STRING)
			diff_strings(a, b, d);
		else
			diff_numbers(a, b, rtol, atol, d);
	}
	free(pa);
	free(pb);
	arena_release(&ar);
	return rc;
}

/* ---- the report ------------------------------------------------------------ */

typedef struct Report {
	double rtol, atol;
	bool quiet;
	int width; /* of the name column */
	int compared, past, only_a, only_b;
	const Entry *first;  /* the first tensor past the tolerance */
	const Side *first_in;
} Report;

static void print_line(const Report *r, const char *tag, const char *name,
		       const char *rest)
{
	if (!r->quiet)
		printf("  %-6s %-*s %s\n", tag, r->width, name, rest);
}

/* Where entry e came from, for the last line: " (node 'X', OP)". */
static void origin(const Entry *e, char *buf, size_t n)
{
	if (e->node)
		snprintf(buf, n, " (node '%s', %s)", e->node,
			 e->op ? e->op : "?");
	else
		*buf = 0;
}

static int compare_pair(Report *r, const Side *A, const Entry *e,
			const Side *B, const Entry *f)
{
	Diff d;
	char what[300], rest[600];
	if (diff_pair(A, e, B, f, r->rtol, r->atol, &d, what, sizeof(what)) <
	    0)
		return -1;
	r->compared++;
	bool bad = !d.same_shape || d.past;
	if (!d.same_shape)
		snprintf(rest, sizeof(rest), "%s", what);
	else
		snprintf(rest, sizeof(rest), "%-24s max abs %-9.3g max rel %.3g",
			 what, d.max_abs, d.max_rel);
	if (d.same_shape && d.past)
		snprintf(rest + strlen(rest), sizeof(rest) - strlen(rest),
			 "; %lld of %lld elements past, %lld NaN/Inf "
			 "mismatches", (long long)d.past, (long long)d.n,
			 (long long)d.nonfinite);
	print_line(r, bad ? "FAIL" : "ok", e->name, rest);
	if (bad && !r->past++) {
		r->first = e->node || !f->node ? e : f;
		r->first_in = e->node || !f->node ? A : B;
	}
	return 0;
}

/* Tensors only in s (matched false), as one line. */
static void print_only(const Report *r, const Side *s, const char *which)
{
	int n = 0;
	for (int i = 0; i < s->n; i++)
		n += s->e[i].file && !s->matched[i];
	if (!n || r->quiet)
		return;
	printf("  only in %s (%d, not compared):", which, n);
	for (int i = 0, shown = 0; i < s->n && shown < 20; i++)
		if (s->e[i].file && !s->matched[i])
			printf("%s %s", shown++ ? "," : "", s->e[i].name);
	printf("%s\n", n > 20 ? ", ..." : "");
}

/* Walks the order side (the first with an index) and compares each of
 * its tensors with the other's of that name. */
static int walk(Report *r, Side *A, Side *B)
{
	bool b_leads = !A->indexed && B->indexed;
	Side *lead = b_leads ? B : A, *other = b_leads ? A : B;
	for (int i = 0; i < lead->n; i++) {
		const Entry *e = &lead->e[i];
		int j = find(other, e->name);
		if (j < 0)
			continue;
		const Entry *f = &other->e[j];
		if (!e->file || !f->file) { /* fused away on one side */
			const Entry *gone = e->file ? f : e;
			char rest[400];
			if (!e->file && !f->file)
				continue;
			snprintf(rest, sizeof(rest), "in %s: %s into node '%s'"
				 " (%s), not compared",
				 gone == e ? (b_leads ? "B" : "A")
					   : (b_leads ? "A" : "B"),
				 gone->kind && !strcmp(gone->kind, "fused")
					 ? "fused away" : "not written",
				 gone->node ? gone->node : "?",
				 gone->op ? gone->op : "?");
			print_line(r, "fused", e->name, rest);
			lead->matched[i] = other->matched[j] = true;
			continue;
		}
		if (lead->matched[i] || other->matched[j])
			continue; /* a name listed twice: the first */
		lead->matched[i] = other->matched[j] = true;
		int rc = b_leads ? compare_pair(r, other, f, lead, e)
				 : compare_pair(r, lead, e, other, f);
		if (rc < 0)
			return -1;
	}
	for (int i = 0; i < A->n; i++)
		r->only_a += A->e[i].file && !A->matched[i];
	for (int i = 0; i < B->n; i++)
		r->only_b += B->e[i].file && !B->matched[i];
	print_only(r, A, "A");
	print_only(r, B, "B");
	return 0;
}

static int name_width(const Side *A, const Side *B)
{
	size_t w = 8;
	for (int i = 0; i < A->n; i++)
		w = strlen(A->e[i].name) > w ? strlen(A->e[i].name) : w;
	for (int i = 0; i < B->n; i++)
		w = strlen(B->e[i].name) > w ? strlen(B->e[i].name) : w;
	return (int)(w < 40 ? w : 40);
}

static int compare_dirs(const char *a, const char *b, Report *r)
{
	Side A = { 0 }, B = { 0 };
	int status = EXIT_FAIL;
	if (open_side(&A, a) < 0 || open_side(&B, b) < 0)
		goto done;
	r->width = name_width(&A, &B);
	if (!r->quiet)
		printf("compare: A '%s' (%s), B '%s' (%s); a tensor is within "
		       "tolerance where |A-B| <= %g + %g |B|\n",
		       a, A.indexed ? TENSORS_INDEX : ".npy files", b,
		       B.indexed ? TENSORS_INDEX : ".npy files", r->atol,
		       r->rtol);
	if (walk(r, &A, &B) < 0)
		goto done;
	if (!r->compared) {
		error("compare: '%s' and '%s' have no tensor of the same name",
		      a, b);
		goto done;
	}
	if (r->first) {
		char from[300];
		origin(r->first, from, sizeof(from));
		printf("first past tolerance: '%s'%s\n", r->first->name, from);
	}
	if (!r->quiet)
		printf("compare: %d tensors compared, %d within tolerance, %d "
		       "past it; %d only in A, %d only in B\n",
		       r->compared, r->compared - r->past, r->past, r->only_a,
		       r->only_b);
	status = r->past ? EXIT_FAIL : EXIT_OK;
done:
	close_side(&A);
	close_side(&B);
	return status;
}

/* --rtol / --atol: a finite number >= 0. */
static int parse_tol(const char *flag, const char *s, double *v)
{
	char *end;
	if (!s)
		return 0;
	errno = 0;
	*v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(*v) || *v < 0)
		return error("--%s '%s': expected a number >= 0 (e.g. 1e-4)",
			     flag, s);
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	const char *help = NULL, *rtol = NULL, *atol = NULL, *quiet = NULL;
	const char *pos[2];
	const ArgSpec spec[] = {
		{ "rtol", 0, true, &rtol },
		{ "atol", 0, true, &atol },
		{ "quiet", 'q', false, &quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	int npos;
	int done = cmd_args(argc, argv, spec, "compare", pos, 2, &npos, &help);
	if (done >= 0)
		return done;
	Report r = { .rtol = DEFAULT_RTOL, .atol = DEFAULT_ATOL,
		     .quiet = quiet != NULL };
	if (npos != 2) {
		error("compare needs two folders of tensors (gearc compare "
		      "DIR_A DIR_B [--rtol=R] [--atol=A])");
		return fail(EXIT_USAGE);
	}
	if (parse_tol("rtol", rtol, &r.rtol) < 0 ||
	    parse_tol("atol", atol, &r.atol) < 0)
		return fail(EXIT_USAGE);
	int status = compare_dirs(pos[0], pos[1], &r);
	return status == EXIT_FAIL && !r.past ? fail(status) : status;
}
