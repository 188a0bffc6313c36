/*
 * runtime/session.c - sessions and runs (gearrt.h).
 *
 * A session may be run from several threads at once.  What a run writes
 * lives in a run context (rt.h RunCtx): each gearrt_run takes one from
 * the session's pool (made on first need, at most max of them; beyond
 * that a run waits for one to come back) and gives it back when done,
 * so runs on one session need no lock but the pool's.  A context keeps
 * the gears it prepared, so N contexts cost N arenas and each gear's
 * kernels N times; the model's weights (oneDNN's reorders, derived
 * forms) are shared by all.  Outputs a run leaves in session memory are
 * copied into buffers of the calling thread's (Slot), valid until that
 * thread's next run on the session, so the context is free for another
 * thread at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/cpu.h"
#include "rt.h"

/* A thread's outputs left in session memory: per output, its bytes (a
 * string output: its pointers and characters).  One per thread and
 * session it ran, on two lists: the session's (next) and the thread's
 * (tnext, in its Thread), so that it goes when either does: a server
 * starting a thread per request keeps no slot of a thread gone. */
typedef struct Thread Thread;
typedef struct Slot {
	gearrt_session *session;
	Thread *owner;	  /* NULL if the thread key could not be had */
	pthread_t thread; /* then found by this */
	Grow *bytes, *chars;
	bool *given; /* the caller gave output i a buffer, this run */
	int last_gear; /* this thread's last successful run's */
	/* a padded run's (pad_batch): its inputs' bytes, and its inputs'
	 * and outputs' tensors */
	Grow *pad;
	gearrt_tensor *in, *out;
	struct Slot *next, *tnext;
} Slot;

/* A thread's slots, its value of thread_key. */
struct Thread {
	Slot *slots;
};

struct gearrt_session {
	gearrt_model *model;
	gearrt_options opt;
	pthread_mutex_t lock;
	pthread_cond_t back; /* a context came back to idle */
	RunCtx **all;	     /* made[0..made) */
	RunCtx **idle;	     /* a stack of idle[0..nidle) */
	int made, nidle, max;
	RunCtx *last;	     /* the last run's context (rt_session_ctx) */
	Slot *slots;
	gearrt_stats st;     /* summed over the contexts' runs */
	uint64_t serial;     /* this session's number, never reused */
};

/* The slot lists, every session's and every thread's, under slots_lock
 * (held for a list walk: a thread's first run of a session takes it,
 * later runs find their slot in the thread's last_slot). */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t session_serials;
/* The calling thread's slot of the session numbered serial (0: none):
 * what a thread running one session again finds without slots_lock,
 * which every session's runs on every thread share.  A session's number
 * is never reused, so a destroyed session's entry matches none; a
 * thread's slots go only with it or with their session. */
static _Thread_local struct {
	uint64_t serial;
	Slot *slot;
} last_slot;
static pthread_key_t thread_key;
static pthread_once_t thread_once = PTHREAD_ONCE_INIT;
static bool thread_key_made;

static void slot_free(Slot *t)
{
	const gearrt_model *md = t->session->model;
	for (size_t i = 0; i < md->nout; i++) {
		free(t->bytes[i].p);
		free(t->chars[i].p);
	}
	for (size_t i = 0; i < md->nin; i++)
		free(t->pad[i].p);
	free(t->bytes);
	free(t->chars);
	free(t->given);
	free(t->pad);
	free(t->in);
	free(t->out);
	free(t);
}

/* Slot t off list *l, linked by field next or tnext. */
static void unlink_slot(Slot **l, Slot *t, bool thread_list)
{
	while (*l && *l != t)
		l = thread_list ? &(*l)->tnext : &(*l)->next;
	if (*l)
		*l = thread_list ? t->tnext : t->next;
}

/* thread_key's destructor: an exiting thread's slots go. */
static void thread_gone(void *p)
{
	Thread *th = p;
	last_slot.serial = 0, last_slot.slot = NULL;
	pthread_mutex_lock(&slots_lock);
	for (Slot *t = th->slots, *next; t; t = next) {
		next = t->tnext;
		unlink_slot(&t->session->slots, t, false);
		slot_free(t);
	}
	pthread_mutex_unlock(&slots_lock);
	free(th);
}

static void thread_key_make(void)
{
	thread_key_made = !pthread_key_create(&thread_key, thread_gone);
}

/* Unloaded (dlclose), the library leaves no destructor behind in the
 * threads that ran it. */
__attribute__((destructor)) static void thread_key_drop(void)
{
	if (thread_key_made)
		pthread_key_delete(thread_key);
	thread_key_made = false;
}

/* The calling thread's slot of s; a new one if make.  Without the
 * thread key (every key of the process taken), the slot is found by
 * the thread's id and goes only with the session. */
static Slot *my_slot(gearrt_session *s, bool make)
{
	if (last_slot.serial == s->serial)
		return last_slot.slot;
	pthread_once(&thread_once, thread_key_make);
	pthread_mutex_lock(&slots_lock);
	Thread *th = thread_key_made ? pthread_getspecific(thread_key) : NULL;
	Slot *t = th ? th->slots : s->slots;
	while (t && !(th ? t->session == s
			 : !t->owner && pthread_equal(t->thread, pthread_self())))
		t = th ? t->tnext : t->next;
	if (!t && make) {
		if (!th && thread_key_made) {
			th = xcalloc(1, sizeof(*th));
			if (pthread_setspecific(thread_key, th)) {
				free(th);
				th = NULL;
			}
		}
		t = xcalloc(1, sizeof(*t));
		t->session = s;
		t->owner = th;
		t->thread = pthread_self();
		t->last_gear = -1;
		t->bytes = xcalloc(s->model->nout + 1, sizeof(Grow));
		t->chars = xcalloc(s->model->nout + 1, sizeof(Grow));
		t->given = xcalloc(s->model->nout + 1, sizeof(bool));
		t->pad = xcalloc(s->model->nin + 1, sizeof(Grow));
		t->in = xcalloc(s->model->nin + 1, sizeof(gearrt_tensor));
		t->out = xcalloc(s->model->nout + 1, sizeof(gearrt_tensor));
		t->next = s->slots;
		s->slots = t;
		if (th) {
			t->tnext = th->slots;
			th->slots = t;
		}
	}
	pthread_mutex_unlock(&slots_lock);
	if (t)
		last_slot.serial = s->serial, last_slot.slot = t;
	return t;
}

/* A destroyed session's slots go, off their threads' lists too; the
 * calling thread's Thread with them if it holds no other. */
static void slots_drop(gearrt_session *s)
{
	pthread_mutex_lock(&slots_lock);
	for (Slot *t = s->slots, *next; t; t = next) {
		next = t->next;
		if (t->owner)
			unlink_slot(&t->owner->slots, t, true);
		slot_free(t);
	}
	s->slots = NULL;
	Thread *me = thread_key_made ? pthread_getspecific(thread_key) : NULL;
	if (me && !me->slots) {
		pthread_setspecific(thread_key, NULL);
		free(me);
	}
	pthread_mutex_unlock(&slots_lock);
}

/* A run context of model md for options o; NULL with an error if its
 * arena cannot be had. */
static RunCtx *ctx_new(gearrt_model *md, const gearrt_options *o)
{
	RunCtx *s = xmalloc(sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->model = md;
	s->threads = o->threads ? o->threads : cpu_usable_cores();
	s->last_gear = -1;
	s->no_gears = o->no_gears;
	s->no_fast = o->no_fast;
	s->profile = o->profile;
	s->on_node = o->on_node;
	s->on_node_user = o->on_node_user;
	s->cache = rt_cache_new(o->shape_cache ? o->shape_cache
					       : GEARRT_SHAPE_CACHE_DEFAULT);
	size_t bytes = (size_t)md->arena_bytes;
	s->arena = big_alloc(bytes, NULL);
	s->io_in = xcalloc(md->nin + 1, sizeof(*s->io_in));
	s->io_out = xcalloc(md->nout + 1, sizeof(*s->io_out));
	s->strings = rt_strings_new(md);
	size_t n = md->ngears ? md->ngears : 1;
	s->prep = xcalloc(n, sizeof(Prepared *));
	if (!s->arena) {
		rt_ctx_free(s);
		error("cannot allocate the %zu-byte arena", bytes);
		return NULL;
	}
	return s;
}

void rt_ctx_free(RunCtx *s)
{
	if (!s)
		return;
	size_t n = s->model->ngears ? s->model->ngears : 1;
	for (size_t i = 0; i < n; i++)
		rt_prepared_free(s->prep[i]);
	free(s->prep);
	rt_cache_free(s->cache);
	free(s->arena);
	free(s->io_in);
	free(s->io_out);
	rt_strings_free(s->model, s->strings);
	arena_release(&s->scratch);
	arena_release(&s->pool);
	free(s->work);
	free(s);
}

gearrt_status gearrt_session_create(gearrt_model *md,
				    const gearrt_options *options,
				    gearrt_session **session)
{
	clear_error();
	if (!md || !session) {
		error("gearrt_session_create: model and session must not be "
		      "NULL");
		return GEARRT_E_ARG;
	}
	gearrt_options o = options ? *options : (gearrt_options){ 0 };
	if (o.threads < 0 || o.threads > GEARRT_THREADS_MAX)
		return error("gearrt_session_create: threads %d is out of "
			     "range (0..%d)", o.threads, GEARRT_THREADS_MAX),
		       GEARRT_E_ARG;
	if (o.shape_cache > GEARRT_SHAPE_CACHE_MAX)
		return error("gearrt_session_create: shape_cache %d is out of "
			     "range (at most %d; negative: none)",
			     o.shape_cache, GEARRT_SHAPE_CACHE_MAX),
		       GEARRT_E_ARG;
	if (o.profile < 0 || o.profile > GEARRT_PROFILE_NODES)
		return error("gearrt_session_create: profile %d is out of "
			     "range (0..%d)", o.profile, GEARRT_PROFILE_NODES),
		       GEARRT_E_ARG;
	if (o.concurrency < 0 || o.concurrency > GEARRT_CONCURRENCY_MAX)
		return error("gearrt_session_create: concurrency %d is out of "
			     "range (0..%d)", o.concurrency,
			     GEARRT_CONCURRENCY_MAX), GEARRT_E_ARG;
	if (o.max_isa && rt_isa_cap(o.max_isa) < 0)
		return error_prefix("gearrt_session_create"), GEARRT_E_ARG;
	RunCtx *first = ctx_new(md, &o); /* the arena's size checked now */
	if (!first)
		return GEARRT_E_ARG;
	gearrt_session *s = xcalloc(1, sizeof(*s));
	s->model = md;
	s->opt = o;
	s->serial = atomic_fetch_add(&session_serials, 1) + 1;
	s->max = o.concurrency ? o.concurrency : GEARRT_CONCURRENCY_DEFAULT;
	s->all = xcalloc((size_t)s->max, sizeof(RunCtx *));
	s->idle = xcalloc((size_t)s->max, sizeof(RunCtx *));
	s->all[s->made++] = s->idle[s->nidle++] = s->last = first;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->back, NULL);
	*session = s;
	return GEARRT_OK;
}

void gearrt_session_destroy(gearrt_session *s)
{
	if (!s)
		return;
	if (s->opt.profile)
		fprintf(stderr, "gearrt profile: opened '%s' in %.3f ms\n",
			s->model->path ? s->model->path : "",
			s->model->open_ms);
	for (int i = 0; i < s->made; i++)
		rt_ctx_free(s->all[i]);
	slots_drop(s);
	free(s->all);
	free(s->idle);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->back);
	free(s);
}

RunCtx *rt_session_ctx(const gearrt_session *s) { return s->last; }

int rt_session_slots(const gearrt_session *s)
{
	int n = 0;
	pthread_mutex_lock(&slots_lock);
	for (const Slot *t = s->slots; t; t = t->next)
		n++;
	pthread_mutex_unlock(&slots_lock);
	return n;
}

gearrt_status gearrt_session_profile(
	const gearrt_session *s,
	void (*fn)(void *user, const gearrt_node_time *t), void *user)
{
	clear_error();
	if (!s || !fn)
		return error("gearrt_session_profile: session and fn must not "
			     "be NULL"), GEARRT_E_ARG;
	if (!s->opt.profile)
		return error("gearrt_session_profile: the session was created "
			     "without options.profile"), GEARRT_E_ARG;
	size_t n = s->model->ngears ? s->model->ngears : 1;
	for (int c = 0; c < s->made; c++)
		for (size_t i = 0; i < n; i++)
			if (s->all[c]->prep[i])
				rt_profile_each(s->all[c]->prep[i], fn, user);
	return GEARRT_OK;
}

bool rt_work_reserve(RunCtx *s, size_t bytes)
{
	if (bytes <= s->work_bytes)
		return true;
	void *w = big_alloc(bytes, NULL);
	if (!w)
		return false;
	memset(w, 0, bytes); /* lanes a kernel computes and never stores */
	free(s->work);
	s->work = w;
	s->work_bytes = bytes;
	return true;
}

/* A context for a run, and the calling thread's slot: an idle context,
 * else a new one while fewer than max are made, else the first to come
 * back.  NULL with an error if a new one's arena cannot be had. */
static RunCtx *take(gearrt_session *s, Slot **slot)
{
	*slot = my_slot(s, true);
	pthread_mutex_lock(&s->lock);
	while (!s->nidle && s->made == s->max)
		pthread_cond_wait(&s->back, &s->lock);
	RunCtx *c = NULL;
	if (s->nidle)
		c = s->idle[--s->nidle];
	else if ((c = ctx_new(s->model, &s->opt)))
		s->all[s->made++] = c;
	pthread_mutex_unlock(&s->lock);
	return c;
}

/* Where x is in s's idle stack, or -1 (in use); under s->lock. */
static int idle_at(const gearrt_session *s, const RunCtx *x)
{
	for (int k = 0; k < s->nidle; k++)
		if (s->idle[k] == x)
			return k;
	return -1;
}

/* Context c back to idle after a run (status st), its counters' change
 * since before added to the session's. */
static void give(gearrt_session *s, RunCtx *c, Slot *t,
		 const gearrt_stats *before, int32_t cached, gearrt_status st)
{
	pthread_mutex_lock(&s->lock);
	const gearrt_stats *a = &c->st;
	s->st.gear_runs += a->gear_runs - before->gear_runs;
	s->st.dynamic_runs += a->dynamic_runs - before->dynamic_runs;
	s->st.rebuilds += a->rebuilds - before->rebuilds;
	s->st.cache_hits += a->cache_hits - before->cache_hits;
	s->st.evictions += a->evictions - before->evictions;
	s->st.prepare_ms += a->prepare_ms - before->prepare_ms;
	s->st.cached += rt_cache_count(c->cache) - cached;
	if (st == GEARRT_OK) {
		s->st.last_path = a->last_path;
		s->st.last_rebuilt = a->last_rebuilt;
		s->st.last_rebuild_ms = a->last_rebuild_ms;
		t->last_gear = c->last_gear;
	}
	s->last = c;
	s->idle[s->nidle++] = c;
	pthread_cond_signal(&s->back);
	pthread_mutex_unlock(&s->lock);
}

/* Outputs the run left in session memory (those the caller gave no
 * buffer for: t->given) into t's buffers, and every string output's
 * characters, so that they outlive the context's next run on another
 * thread. */
static void keep_outputs(Slot *t, gearrt_tensor *out, size_t nout)
{
	for (size_t i = 0; i < nout; i++) {
		gearrt_tensor *o = &out[i];
		if (o->dtype == GEARRT_STRING) {
			size_t n = o->size / sizeof(char *), chars = 0;
			const char **p = o->data;
			for (size_t k = 0; k < n; k++)
				chars += strlen(p[k]) + 1;
			char *to = rt_grow(&t->chars[i], chars + 1);
			if (!t->given[i])
				p = memcpy(rt_grow(&t->bytes[i], o->size + 1),
					   p, o->size);
			for (size_t k = 0; k < n; k++) {
				size_t len = strlen(p[k]) + 1;
				p[k] = memcpy(to, p[k], len);
				to += len;
			}
			o->data = (void *)p;
		} else if (!t->given[i] && o->data) {
			o->data = memcpy(rt_grow(&t->bytes[i], o->size + 1),
					 o->data, o->size);
		}
	}
}

int gearrt_last_gear(const gearrt_session *s)
{
	if (!s)
		return -1;
	const Slot *t = my_slot((gearrt_session *)s, false);
	return t ? t->last_gear : -1;
}

gearrt_status gearrt_session_stats(const gearrt_session *s, gearrt_stats *st)
{
	clear_error();
	if (!s || !st) {
		error("gearrt_session_stats: session and stats must not be "
		      "NULL");
		return GEARRT_E_ARG;
	}
	gearrt_session *m = (gearrt_session *)s; /* its lock */
	pthread_mutex_lock(&m->lock);
	*st = s->st;
	pthread_mutex_unlock(&m->lock);
	st->runs = st->gear_runs + st->dynamic_runs;
	return GEARRT_OK;
}

static const char *dims_str(const int64_t *d, int32_t rank, char *buf,
			    size_t n)
{
	Shape sh = { .rank = rank };
	for (int32_t k = 0; k < rank && k < MAX_RANK; k++)
		sh.dims[k] = d[k];
	return shape_str(&sh, buf, n);
}

/* Input i's dtype, rank, static dims, size and name against the model. */
static gearrt_status check_input(const gearrt_model *md, size_t i,
				 const gearrt_tensor *t)
{
	const gearrt_tensor *want = &md->in_info[i];
	char a[160], b[160];
	if (t->name && strcmp(t->name, want->name))
		return error("input %zu is '%s', not '%s'", i, want->name,
			     t->name), GEARRT_E_INPUT;
	if (t->dtype != want->dtype)
		return error("input '%s': dtype %s, expected %s", want->name,
			     gearrt_dtype_name(t->dtype)
				     ? gearrt_dtype_name(t->dtype)
				     : "(not a dtype)",
			     dtype_name(want->dtype)), GEARRT_E_INPUT;
	if (t->rank != want->rank || t->rank < 0 || t->rank > MAX_RANK)
		return error("input '%s': rank %d, expected %d", want->name,
			     t->rank, want->rank), GEARRT_E_INPUT;
	for (int32_t k = 0; k < t->rank; k++)
		if (t->dims[k] < 0 ||
		    (want->dims[k] >= 0 && t->dims[k] != want->dims[k]))
			return error("input '%s': shape %s, expected %s",
				     want->name,
				     dims_str(t->dims, t->rank, a, sizeof(a)),
				     dims_str(want->dims, want->rank, b,
					      sizeof(b))), GEARRT_E_INPUT;
	Shape sh = { .rank = t->rank };
	memcpy(sh.dims, t->dims, (size_t)t->rank * sizeof(int64_t));
	int64_t n = shape_numel(&sh), bytes = -1;
	if (n < 0 || !mul_nonneg_i64(n, (int64_t)gearrt_dtype_size(t->dtype),
				     &bytes))
		return error("input '%s': shape %s holds more than 2^63 bytes",
			     want->name,
			     dims_str(t->dims, t->rank, a, sizeof(a))),
		       GEARRT_E_INPUT;
	if ((size_t)bytes > t->size || (bytes && !t->data))
		return error("input '%s': shape %s needs %lld bytes, %zu given",
			     want->name, dims_str(t->dims, t->rank, a, sizeof(a)),
			     (long long)bytes, t->data ? t->size : 0),
		       GEARRT_E_INPUT;
	for (int64_t k = 0; t->dtype == GEARRT_STRING && k < n; k++)
		if (!((const char *const *)t->data)[k])
			return error("input '%s': string element %lld is NULL",
				     want->name, (long long)k),
			       GEARRT_E_INPUT;
	return GEARRT_OK;
}

/* Whether the inputs' dims at the gear axes (the -1 dims of the model's
 * inputs, inputs in order) are gear g's row of the gear table (exact),
 * or each at most the row's; *size gets the row's product. */
static bool gear_holds(const gearrt_model *md, size_t g,
		       const gearrt_tensor *in, bool exact, double *size)
{
	const Gearom__Gear *x = md->f.model->gears[g];
	size_t at = 0;
	*size = 1;
	for (size_t i = 0; i < md->nin; i++)
		for (int32_t k = 0; k < in[i].rank; k++) {
			if (md->in_info[i].dims[k] >= 0)
				continue;
			if (at >= x->n_dims ||
			    (exact ? x->dims[at] != in[i].dims[k]
				   : x->dims[at] < in[i].dims[k]))
				return false;
			*size *= (double)x->dims[at++];
		}
	return at == x->n_dims;
}

static bool gear_fits(const gearrt_model *md, size_t g, const gearrt_tensor *in)
{
	double size;
	return gear_holds(md, g, in, true, &size);
}

/* The inputs' ranks, dtypes and static dims are the model's. */
static bool inputs_match(const gearrt_model *md, const gearrt_tensor *in,
			 size_t nin)
{
	if (!in || nin != md->nin)
		return false;
	for (size_t i = 0; i < nin; i++) {
		if (in[i].rank != md->in_info[i].rank ||
		    in[i].rank > GEARRT_MAX_RANK)
			return false;
		for (int32_t k = 0; k < in[i].rank; k++)
			if (in[i].dims[k] < 0 ||
			    (md->in_info[i].dims[k] >= 0 &&
			     in[i].dims[k] != md->in_info[i].dims[k]))
				return false;
	}
	return true;
}

int gearrt_find_gear(const gearrt_model *md, const gearrt_tensor *in,
		     size_t nin)
{
	if (!md || !inputs_match(md, in, nin))
		return -1;
	if (!md->ngears)
		return 0;
	for (size_t g = 0; g < md->ngears; g++)
		if (gear_fits(md, g, in))
			return (int)g;
	return -1;
}

int gearrt_pick_gear(const gearrt_model *md, const gearrt_tensor *in,
		     size_t nin)
{
	if (!md || !inputs_match(md, in, nin))
		return -1;
	if (!md->ngears)
		return 0;
	int best = -1;
	double best_size = 0, size;
	for (size_t g = 0; g < md->ngears; g++)
		if (gear_holds(md, g, in, false, &size) &&
		    (best < 0 || size < best_size))
			best = (int)g, best_size = size;
	return best;
}

static gearrt_status no_gear(const gearrt_model *md, const gearrt_tensor *in)
{
	char got[512] = "", gears[1024] = "";
	size_t at = 0;
	for (size_t i = 0; i < md->nin; i++)
		for (int32_t k = 0; k < in[i].rank; k++)
			if (md->in_info[i].dims[k] < 0 && at < sizeof(got) - 24)
				at += (size_t)snprintf(got + at, sizeof(got) - at,
						       "%s%lld", at ? "," : "",
						       (long long)in[i].dims[k]);
	at = 0;
	for (size_t g = 0; g < md->ngears && at < sizeof(gears) - 40; g++) {
		const Gearom__Gear *x = md->f.model->gears[g];
		at += (size_t)snprintf(gears + at, sizeof(gears) - at, "%s",
				       g ? "; " : "");
		for (size_t k = 0; k < x->n_dims && at < sizeof(gears) - 24; k++)
			at += (size_t)snprintf(gears + at, sizeof(gears) - at,
					       "%s%lld", k ? "," : "",
					       (long long)x->dims[k]);
	}
	error("the inputs' gear dims (%s) match no gear; the model's gears "
	      "are: %s", got, gears);
	return GEARRT_E_NO_GEAR;
}

/* The gear (or graph) the inputs select: its index into run_graph, or
 * *dynamic when the dynamic graph runs (no gear fits, or no_gears). */
static gearrt_status select_graph(const RunCtx *s,
				  const gearrt_tensor *in, size_t *which,
				  bool *dynamic)
{
	const gearrt_model *md = s->model;
	*dynamic = false;
	if (s->no_gears) {
		*dynamic = md->dynamic != NULL;
		return *dynamic ? GEARRT_OK
				: (error("no_gears: the model has no dynamic "
					 "graph (compile it with --hybrid)"),
				   GEARRT_E_NO_GEAR);
	}
	if (!md->ngears) {
		*which = 0;
		return GEARRT_OK;
	}
	for (size_t g = 0; g < md->ngears; g++)
		if (gear_fits(md, g, in)) {
			*which = g;
			return GEARRT_OK;
		}
	*dynamic = md->dynamic != NULL;
	return *dynamic ? GEARRT_OK : no_gear(md, in);
}

/* Graph g's input (out: output) called name, not taken before (seen[k]
 * marks it taken): its index, or -1 with an error. */
static int32_t map_one(const Graph *g, bool out, const char *name,
		       bool *seen)
{
	int32_t k = out ? rt_graph_output(g, name) : rt_graph_input(g, name);
	if (k < 0 || seen[k])
		return error("graph '%s': the model's %s '%s' is %s", g->name,
			     out ? "output" : "input", name,
			     k < 0 ? "not one of the graph's" : "listed twice"),
		       -1;
	seen[k] = true;
	return k;
}

int rt_map_io(const gearrt_model *md, Prepared *p)
{
	const Graph *g = p->g;
	if ((size_t)g->ninputs != md->nin || (size_t)g->noutputs != md->nout)
		return error("graph '%s' has %d inputs and %d outputs, the "
			     "model %zu and %zu", g->name, g->ninputs,
			     g->noutputs, md->nin, md->nout);
	p->in_at = xmalloc((md->nin + 1) * sizeof(int32_t));
	p->out_at = xmalloc((md->nout + 1) * sizeof(int32_t));
	bool *seen = xcalloc(md->nin + md->nout + 1, sizeof(bool));
	int rc = 0;
	for (size_t i = 0; i < md->nin && !rc; i++)
		rc = (p->in_at[i] = map_one(g, false, md->in_info[i].name,
					    seen)) < 0;
	for (size_t i = 0; i < md->nout && !rc; i++)
		rc = (p->out_at[i] = map_one(g, true, md->out_info[i].name,
					     seen + md->nin)) < 0;
	free(seen);
	return rc ? -1 : 0;
}

gearrt_status rt_run_prepared(RunCtx *s, Prepared *p,
			      const gearrt_tensor *inputs,
			      gearrt_tensor *outputs, size_t nout)
{
	const gearrt_model *md = s->model;
	memset(s->io_out, 0, md->nout * sizeof(*s->io_out));
	for (size_t i = 0; i < md->nin; i++)
		s->io_in[p->in_at[i]] = &inputs[i];
	for (size_t i = 0; i < nout; i++) {
		outputs[i].name = md->out_info[i].name;
		s->io_out[p->out_at[i]] = &outputs[i];
	}
	return rt_exec(s, p, s->io_in, s->io_out);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One run of s's prepared run_graph[which] on zeros (no string
 * inputs), its outputs in session memory, its status not kept: what a
 * first run pays beyond preparing (the arena's and the outputs' pages
 * touched for the first time, oneDNN's first executions) paid now. */
static void warm(RunCtx *s, size_t which)
{
	const gearrt_model *md = s->model;
	const Gearom__Gear *row = md->ngears ? md->f.model->gears[which] : NULL;
	gearrt_tensor *in = xcalloc(md->nin + 1, sizeof(*in));
	gearrt_tensor *out = xcalloc(md->nout + 1, sizeof(*out));
	size_t at = 0, most = 0;
	bool ok = true;
	for (size_t i = 0; i < md->nin && ok; i++) {
		in[i] = md->in_info[i];
		size_t n = gearrt_dtype_size(in[i].dtype);
		ok = in[i].dtype != GEARRT_STRING && in[i].rank >= 0;
		for (int32_t k = 0; ok && k < in[i].rank; k++) {
			if (in[i].dims[k] < 0)
				in[i].dims[k] = row && at < row->n_dims
							? row->dims[at++]
							: 0;
			ok = !__builtin_mul_overflow(n, (size_t)in[i].dims[k],
						     &n);
		}
		in[i].size = n;
		most = n > most ? n : most;
	}
	void *zeros = ok ? calloc(1, most + 1) : NULL;
	for (size_t i = 0; zeros && i < md->nin; i++)
		in[i].data = zeros;
	Prepared *p = s->prep[which];
	struct Profile *pr = p->prof; /* not a run the profile counts */
	gearrt_node_fn on_node = s->on_node; /* nor one the caller made */
	p->prof = NULL;
	s->on_node = NULL;
	if (zeros)
		rt_run_prepared(s, p, in, out, md->nout);
	p->prof = pr;
	s->on_node = on_node;
	clear_error();
	free(zeros);
	free(in);
	free(out);
}

/* run_graph[which] of s prepared (once: st.prepare_ms times it), its
 * gear checked first; GEARRT_E_FILE if it cannot be. */
static gearrt_status prepare(RunCtx *s, size_t which)
{
	if (s->prep[which])
		return GEARRT_OK;
	gearrt_status st = rt_check_gear(s->model, which, &s->st.prepare_ms);
	if (st)
		return st;
	double t0 = now_ms();
	s->prep[which] = rt_prepare(s, s->model->run_graph[which]);
	s->st.prepare_ms += now_ms() - t0;
	return s->prep[which] ? GEARRT_OK : GEARRT_E_FILE;
}

/* Runs run_graph[which] (checked: rt_check_gear) as compiled, prepared
 * on its first run, which st.prepare_ms times: a status as rt_exec's,
 * GEARRT_E_FILE if it cannot be prepared. */
static gearrt_status run_compiled(RunCtx *s, size_t which,
				  const gearrt_tensor *inputs,
				  gearrt_tensor *outputs, size_t nout)
{
	gearrt_status st = prepare(s, which);
	return st ? st
		  : rt_run_prepared(s, s->prep[which], inputs, outputs, nout);
}

/* gearrt_run once its arguments are checked (and strings converted). */
static gearrt_status run_checked(RunCtx *s,
				 const gearrt_tensor *inputs,
				 gearrt_tensor *outputs, size_t nout)
{
	const gearrt_model *md = s->model;
	size_t which = 0;
	bool dynamic;
	gearrt_status st = select_graph(s, inputs, &which, &dynamic);
	if (st)
		return st;
	if (dynamic) {
		st = rt_run_dynamic(s, inputs, outputs, nout);
		if (!st)
			s->last_gear = -1;
		return st;
	}
	bool ran = false;
	if ((st = rt_check_gear(s->model, which, &s->st.prepare_ms)))
		return st; /* it sets by_value[which] */
	if (md->by_value[which])
		st = rt_run_by_value(s, which, inputs, outputs, nout, &ran);
	if (!ran && !st) {
		s->st.last_rebuilt = 0;
		st = run_compiled(s, which, inputs, outputs, nout);
	}
	if (st == GEARRT_E_FILE)
		return st;
	if (st) {
		if (md->ngears)
			error_prefix("gear %zu", which);
		return st;
	}
	s->last_gear = md->ngears ? (int)which : -1;
	s->st.gear_runs++;
	s->st.last_path = md->ngears ? GEARRT_PATH_GEAR : GEARRT_PATH_STATIC;
	return GEARRT_OK;
}

gearrt_status gearrt_session_prepare(gearrt_session *s, const size_t *gears,
				     size_t n)
{
	clear_error();
	if (!s || (n && !gears))
		return error("gearrt_session_prepare: session and gears must "
			     "not be NULL"), GEARRT_E_ARG;
	size_t count = s->model->ngears ? s->model->ngears : 1;
	for (size_t i = 0; i < n; i++)
		if (gears[i] >= count)
			return error("gearrt_session_prepare: gear %zu is out "
				     "of range (the model has %zu)", gears[i],
				     count), GEARRT_E_ARG;
	/* the contexts the options asked for (each arena's bytes had now),
	 * then every context made so far, each when it is idle */
	gearrt_status st = GEARRT_OK;
	pthread_mutex_lock(&s->lock);
	while (s->made < s->opt.concurrency) {
		RunCtx *x = ctx_new(s->model, &s->opt);
		if (!x) {
			st = GEARRT_E_RUN;
			break;
		}
		s->all[s->made++] = s->idle[s->nidle++] = x;
	}
	pthread_mutex_unlock(&s->lock);
	for (int c = 0; !st; c++) {
		pthread_mutex_lock(&s->lock);
		RunCtx *x = c < s->made ? s->all[c] : NULL;
		int k = -1;
		while (x && (k = idle_at(s, x)) < 0)
			pthread_cond_wait(&s->back, &s->lock);
		if (x) /* out of the pool while it is prepared */
			s->idle[k] = s->idle[--s->nidle];
		pthread_mutex_unlock(&s->lock);
		if (!x)
			break;
		double ms = x->st.prepare_ms;
		for (size_t i = 0; i < (n ? n : count) && !st; i++) {
			bool fresh = !x->prep[n ? gears[i] : i];
			st = prepare(x, n ? gears[i] : i);
			if (!st && fresh)
				warm(x, n ? gears[i] : i);
		}
		pthread_mutex_lock(&s->lock);
		s->st.prepare_ms += x->st.prepare_ms - ms;
		s->idle[s->nidle++] = x;
		pthread_cond_signal(&s->back);
		pthread_mutex_unlock(&s->lock);
	}
	return st;
}

/* gearrt_run on context s, its arguments checked. */
static gearrt_status ctx_run(RunCtx *s, const gearrt_tensor *inputs,
			     gearrt_tensor *outputs, size_t nout)
{
	if (!s->strings)
		return run_checked(s, inputs, outputs, nout);
	rt_strings_before(s, outputs, nout);
	gearrt_status st = run_checked(s, rt_strings_in(s, inputs), outputs,
				       nout);
	gearrt_status after = rt_strings_after(s, outputs, nout, !st);
	return st ? st : after;
}

/* ---- pad_batch ---------------------------------------------------------- */

/* Input i's batch axis, as the compiler found it (BatchRows); -1 for
 * none. */
static int batch_axis(const gearrt_model *md, size_t i)
{
	const Gearom__BatchRows *br = md->f.model->batch_rows;
	return br && i < br->n_input_axis ? br->input_axis[i] : -1;
}

/* The gear a padded run takes for inputs whose batch is n: the one of
 * the least batch of at least n whose other gear dims are the inputs';
 * -1 if none.  *batch gets its batch. */
static int pad_gear(const gearrt_model *md, const gearrt_tensor *in,
		    int64_t n, int64_t *batch)
{
	int best = -1;
	for (size_t g = 0; g < md->ngears; g++) {
		const Gearom__Gear *x = md->f.model->gears[g];
		size_t at = 0;
		int64_t b = -1;
		bool ok = true;
		for (size_t i = 0; i < md->nin && ok; i++)
			for (int32_t k = 0; k < in[i].rank && ok; k++) {
				if (md->in_info[i].dims[k] >= 0)
					continue;
				int64_t v = at < x->n_dims ? x->dims[at++] : -1;
				if (k == batch_axis(md, i))
					ok = v >= n && (b < 0 || v == b),
					b = v;
				else
					ok = v == in[i].dims[k];
			}
		if (ok && at == x->n_dims && (best < 0 || b < *batch))
			best = (int)g, *batch = b;
	}
	return best;
}

/* src's outer blocks of n rows of inner bytes into dst's of b rows, the
 * rows past n zero. */
static void pad_rows(uint8_t *dst, const uint8_t *src, size_t outer,
		     int64_t n, int64_t b, size_t inner)
{
	size_t have = (size_t)n * inner, want = (size_t)b * inner;
	for (size_t i = 0; i < outer; i++) {
		memcpy(dst + i * want, src + i * have, have);
		memset(dst + i * want + have, 0, want - have);
	}
}

/* Output o of a padded run (its batch at axis, padded to its dims'
 * n_pad, really n) into the caller's buffer (given, size bytes) or t's
 * buffer k: the first n of every run of n_pad along the axis. */
static gearrt_status unpad(Slot *t, size_t k, gearrt_tensor *o, int axis,
			   int64_t n, const gearrt_tensor *given)
{
	int64_t pad = o->dims[axis];
	size_t inner = gearrt_dtype_size(o->dtype), outer = 1;
	for (int32_t d = axis + 1; d < o->rank; d++)
		inner *= (size_t)o->dims[d];
	for (int32_t d = 0; d < axis; d++)
		outer *= (size_t)o->dims[d];
	size_t run = (size_t)n * inner, need = outer * run;
	if (given->data && given->size < need)
		return error("output '%s' needs %zu bytes, its buffer has %zu",
			     o->name, need, given->size), GEARRT_E_OUTPUT;
	uint8_t *dst = given->data ? given->data
				   : rt_grow(&t->bytes[k], need + 1);
	const uint8_t *src = o->data;
	for (size_t i = 0; i < outer; i++)
		memmove(dst + i * run, src + i * (size_t)pad * inner, run);
	o->data = dst;
	o->size = given->data ? given->size : need;
	o->dims[axis] = n;
	return GEARRT_OK;
}

/* gearrt_run of inputs whose gear dims match no gear, the batch padded
 * with zero rows to the least gear that holds it (its other gear dims
 * equal) and the outputs sliced back: the model's batch rows must be
 * independent (passes/batchrows.c).  GEARRT_E_NO_GEAR if they are not,
 * or no gear holds the batch. */
static gearrt_status run_padded(gearrt_session *s, const gearrt_tensor *in,
				gearrt_tensor *outputs, size_t nout)
{
	const gearrt_model *md = s->model;
	const Gearom__BatchRows *br = md->f.model->batch_rows;
	if (!br)
		return error("pad_batch: the model has no batch (no input has "
			     "a gear dim at axis 0)"), GEARRT_E_NO_GEAR;
	/* br names its mixer, or holds an axis per input */
	if (br->mixer && *br->mixer)
		return error("pad_batch: the batch may not be padded (%s); "
			     "the inputs must match a gear", br->mixer),
		       GEARRT_E_NO_GEAR;
	int64_t n = -1, b = 0;
	for (size_t i = 0; i < md->nin; i++) {
		int a = batch_axis(md, i);
		if (a >= 0 && n >= 0 && in[i].dims[a] != n)
			return error("pad_batch: input '%s' has a batch of "
				     "%lld, another %lld", md->in_info[i].name,
				     (long long)in[i].dims[a], (long long)n),
			       GEARRT_E_INPUT;
		if (a >= 0)
			n = in[i].dims[a];
	}
	int g = n >= 0 ? pad_gear(md, in, n, &b) : -1;
	for (size_t k = 0; k < nout; k++)
		if (md->out_info[k].dtype == GEARRT_STRING)
			return error("pad_batch: output '%s' is of strings, "
				     "which a padded run does not slice",
				     md->out_info[k].name), GEARRT_E_ARG;
	if (g < 0)
		return no_gear(md, in);
	Slot *t;
	RunCtx *c = take(s, &t);
	if (!c)
		return GEARRT_E_RUN;
	for (size_t i = 0; i < md->nin; i++) {
		int a = batch_axis(md, i);
		t->in[i] = in[i];
		if (a < 0)
			continue;
		size_t outer = 1, inner = gearrt_dtype_size(in[i].dtype);
		for (int32_t k = 0; k < in[i].rank; k++)
			if (k < a)
				outer *= (size_t)in[i].dims[k];
			else if (k > a)
				inner *= (size_t)in[i].dims[k];
		size_t want = outer * (size_t)b * inner;
		uint8_t *p = rt_grow(&t->pad[i], want + 1);
		pad_rows(p, in[i].data, outer, n, b, inner);
		t->in[i].data = p;
		t->in[i].size = want;
		t->in[i].dims[a] = b;
	}
	memset(t->out, 0, nout * sizeof(*t->out));
	gearrt_stats before = c->st;
	int32_t cached = rt_cache_count(c->cache);
	gearrt_status st = ctx_run(c, t->in, t->out, nout);
	for (size_t k = 0; k < nout && !st; k++) {
		int axis = br->axis[k];
		gearrt_tensor given = outputs[k];
		outputs[k] = t->out[k];
		if (axis >= 0)
			st = unpad(t, k, &outputs[k], axis, n, &given);
		else if (given.data) /* no batch in it: the gear's own */
			st = given.size < outputs[k].size
				     ? (error("output '%s' needs %zu bytes, its "
					      "buffer has %zu", outputs[k].name,
					      outputs[k].size, given.size),
					GEARRT_E_OUTPUT)
				     : (memcpy(given.data, outputs[k].data,
					       outputs[k].size),
					outputs[k].data = given.data,
					outputs[k].size = given.size,
					GEARRT_OK);
		else
			outputs[k].data = memcpy(
				rt_grow(&t->bytes[k], outputs[k].size + 1),
				outputs[k].data, outputs[k].size);
	}
	give(s, c, t, &before, cached, st);
	return st;
}

gearrt_status gearrt_run(gearrt_session *s, const gearrt_tensor *inputs,
			 size_t nin, gearrt_tensor *outputs, size_t nout)
{
	clear_error();
	if (!s || (nin && !inputs) || (nout && !outputs))
		return error("gearrt_run: session, inputs and outputs must "
			     "not be NULL"), GEARRT_E_ARG;
	const gearrt_model *md = s->model;
	if (nin != md->nin || nout > md->nout)
		return error("gearrt_run: %zu inputs and %zu outputs given; the "
			     "model has %zu inputs and %zu outputs", nin, nout,
			     md->nin, md->nout), GEARRT_E_ARG;
	for (size_t i = 0; i < nin; i++) {
		gearrt_status st = check_input(md, i, &inputs[i]);
		if (st)
			return st;
	}
	if (s->opt.pad_batch && md->ngears && !md->dynamic &&
	    gearrt_find_gear(md, inputs, nin) < 0)
		return run_padded(s, inputs, outputs, nout);
	Slot *t;
	RunCtx *c = take(s, &t);
	if (!c)
		return GEARRT_E_RUN;
	for (size_t i = 0; i < nout; i++)
		t->given[i] = outputs[i].data != NULL;
	gearrt_stats before = c->st;
	int32_t cached = rt_cache_count(c->cache);
	rt_pool_active(true);
	gearrt_status st = ctx_run(c, inputs, outputs, nout);
	rt_pool_active(false);
	if (!st)
		keep_outputs(t, outputs, nout);
	give(s, c, t, &before, cached, st);
	return st;
}

/* The process's cap (gearrt_options.max_isa), 0 until a session sets
 * one; isa_lock serialises setting it. */
static pthread_mutex_t isa_lock = PTHREAD_MUTEX_INITIALIZER;
static int isa_cap;

static const char *const isa_names[] = { "", "baseline", "sse41", "avx",
					 "avx2", "avx512" };

int rt_isa_cap(int max_isa)
{
	if (max_isa < GEARRT_ISA_BASELINE || max_isa > GEARRT_ISA_AVX512)
		return error("max_isa %d is not a level (GEARRT_ISA_BASELINE "
			     "%d .. GEARRT_ISA_AVX512 %d; GEARRT_MAX_ISA takes "
			     "avx512, avx2, avx, sse41 or baseline)", max_isa,
			     GEARRT_ISA_BASELINE, GEARRT_ISA_AVX512);
	CpuLevel level = (CpuLevel)(max_isa - GEARRT_ISA_BASELINE);
	int rc = 0;
	pthread_mutex_lock(&isa_lock);
	if (isa_cap && isa_cap != max_isa)
		rc = error("max_isa %s: this process's kernels are capped at "
			   "%s already (an earlier session's max_isa); a "
			   "process takes one cap", isa_names[max_isa],
			   isa_names[isa_cap]);
	else if (!isa_cap && (rc = dnnl_cap(level)) == 0) {
		cpu_cap(level);
		isa_cap = max_isa;
	}
	pthread_mutex_unlock(&isa_lock);
	return rc;
}

void gearrt_options_from_env(gearrt_options *o)
{
	const char *isa = getenv("GEARRT_MAX_ISA");
	if (isa && *isa) {
		o->max_isa = -1;
		for (int i = 1; i <= GEARRT_ISA_AVX512; i++)
			if (!strcmp(isa, isa_names[i]))
				o->max_isa = i;
		if (!strcmp(isa, "native"))
			o->max_isa = 0;
	}
	const char *e = getenv("GEARRT_NO_FAST");
	o->no_fast = e && *e && strcmp(e, "0");
	e = getenv("GEARRT_PROFILE");
	o->profile = !e || !*e || !strcmp(e, "0") ? GEARRT_PROFILE_OFF
		     : !strcmp(e, "nodes")	 ? GEARRT_PROFILE_NODES
						 : GEARRT_PROFILE_OPS;
}
