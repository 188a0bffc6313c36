/*
 * runtime/dnnl.c - nodes run by oneDNN primitives (runtime/dnnl.h).
 *
 * A DnnlKernel holds one primitive made for one node at its gear's
 * shapes, its argument list and the memory it owns: a scaled bias where
 * Gemm's beta needs one, and the primitive's scratchpad (user mode:
 * running allocates nothing).  The file's weights, reordered once into
 * the layout oneDNN chose (format_tag any), belong to the model
 * (DnnlShared): a second session, or a gear whose primitive wants the
 * same layout of the same weights, binds the first one's copy.
 * A run points the memories at the tensors' current buffers and
 * executes.  Tensors are row-major (nchw, nc, abc...) unless
 * runtime/layout.c makes a rank-4 one channels-last (NHWC, the layout
 * oneDNN's convolutions choose here).  A convolution is made in two
 * steps (rt.h KernelRow): its match creates the primitive's descriptor
 * with the layouts it prefers (format_tag any) and records which of its
 * tensors may be NHWC; once layout.c has decided its tensors' layouts,
 * its build creates the primitive, reorders the weights, and adds
 * reorder steps where a tensor's layout is not the primitive's, into
 * temporaries of the session's scratch arena (grown then, reset after
 * the node).  A pooling's primitive is made by its build, in its
 * tensors' layout.
 * The fused ops' activations become eltwise post-ops, FusedConv's Z a
 * sum post-op (Z is copied, or reordered, into Y first).  oneDNN's
 * OpenMP threads are set to the session's thread count before each
 * primitive runs.
 */
#include <dnnl.h>
#include <dnnl_debug.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/act.h"
#include "direct.h"
#include "dnnl.h"

enum { MAX_ARGS = 12, MAX_OWN = 8 };
enum { BIND_FIXED, BIND_IN, BIND_OUT, BIND_TMP };

/* One primitive and its arguments; a kernel runs its steps in order
 * (a reorder into a blocked layout, the operation, a reorder back). */
typedef struct Step {
	dnnl_primitive_t prim;
	int nargs;
	dnnl_exec_arg_t args[MAX_ARGS];
	int bind[MAX_ARGS], idx[MAX_ARGS];
} Step;

enum { MAX_STEPS = 4 };

enum { CONV_X, CONV_Y, CONV_Z };

/* A (de)convolution's tensors X, Y and Z (FusedConv's sum, in Y's
 * layout): each one's row-major descriptor, the primitive's, whether the
 * primitive's is NHWC, and whether layout.c made the tensor NHWC; from
 * match to build, the primitive's descriptor and its weights' and
 * bias's. */
typedef struct ConvIo {
	dnnl_primitive_desc_t pd; /* NULL once built */
	dnnl_memory_desc_t wu, bias; /* the weights' row-major layout */
	const void *w;
	const Value *b;
	char impl[32]; /* oneDNN's name of its implementation */
	dnnl_memory_desc_t user[3], inner[3];
	/* what an NHWC tensor holds: the primitive's layout in the user's
	 * dtype (a bfloat16 primitive reads float32 tensors converted) */
	dnnl_memory_desc_t held[3];
	bool nhwc_ok[3], nhwc[3];
	bool with_z, z_shares_y; /* Z and Y one buffer */
	bool one_pixel[3];	 /* [N,C,1,1]: the same bytes either way */
} ConvIo;

/* A primitive of one X and one Y sharing their layout (a pooling, a
 * resampling): its description, the primitive made by its build. */
typedef struct XySpec {
	const Node *n;
	bool resample;
	dnnl_alg_kind_t alg;
	int rank;
	int64_t x[MAX_RANK], y[MAX_RANK];
	dnnl_dims_t strides, ker, dil, pl, pr; /* a pooling's */
	bool nhwc;
} XySpec;

typedef struct DnnlKernel {
	Step step[MAX_STEPS];
	int nsteps; /* step[nsteps - 1] gets add_arg's arguments */
	dnnl_stream_t stream;
	void *own[MAX_OWN];
	int nown;
	int threads;
	int sum_in; /* input copied into output 0 before running, or -1 */
	Arena *scratch; /* the session's: the blocked temporaries of a run */
	gearrt_model *model; /* whose reordered weights it binds, or NULL */
	const void *weights; /* the reordered weights bound (dnnl_fast_info) */
	size_t tmp_bytes[3]; /* blocked X and Y, Z's copy (BIND_TMP 0-2) */
	int64_t split; /* the steps run on each of split images in turn */
	ConvIo *conv;	     /* a (de)convolution, else NULL */
	XySpec *xy;	     /* a pooling or resampling, else NULL */
	ActRun *tail;	     /* what the post-ops leave (make_attr), or NULL */
	int post_acts;	     /* activations made post-ops (make_attr) */
	int tail_sum;	     /* FusedConv's Z added before tail act k, or -1 */
	bool z_copied;	     /* ... from its copy, BIND_TMP 2 */
	char impl[40];	     /* oneDNN's implementation (the variant) */
	int mm_rank;	     /* a matmul's problem rank, or 0 */
} DnnlKernel;

/* k's variant: the implementation oneDNN chose for pd. */
static void name_impl(DnnlKernel *k, const_dnnl_primitive_desc_t pd)
{
	const char *impl = "";
	dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
	snprintf(k->impl, sizeof(k->impl), "%s", impl ? impl : "");
}

static dnnl_engine_t engine;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

static void engine_init(void)
{
	rt_pool_adopt_dnnl(); /* oneDNN's parallel regions on gearrt's pool */
	if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
		engine = NULL;
}

/* oneDNN runs where the CPU (within the cap) has SSE4.1, its lowest
 * level: it cannot be capped below it, and oneDNN 2.6's RNN kernel
 * emits SSE4.1 on a CPU without it (SIGILL); the rows after oneDNN's,
 * gearc's own kernels, take such a CPU's nodes. */
static bool usable(void)
{
#if defined(__x86_64__)
	return cpu_has(CPU_SSE41);
#else
	return true;
#endif
}

int dnnl_cap(CpuLevel level)
{
#if defined(__x86_64__)
	if (level < CPU_LEVEL_SSE41)
		return 0; /* its rows are left (usable) */
	dnnl_cpu_isa_t want = level == CPU_LEVEL_SSE41 ? dnnl_cpu_isa_sse41
			      : level == CPU_LEVEL_AVX ? dnnl_cpu_isa_avx
			      : level == CPU_LEVEL_AVX2
				      ? dnnl_cpu_isa_avx2_vnni
				      : dnnl_cpu_isa_all;
	if (dnnl_set_max_cpu_isa(want) == dnnl_success)
		return 0;
	/* fixed already: by a first primitive, or an earlier cap */
	dnnl_cpu_isa_t now = dnnl_get_effective_cpu_isa();
	if (want == dnnl_cpu_isa_all || !(now & ~want))
		return 0;
	return error("max_isa %s: oneDNN runs at %s in this process already "
		     "(its level is fixed by its first primitive); cap before "
		     "the first session runs", cpu_level_name(level),
		     dnnl_cpu_isa2str(now));
#else
	(void)level;
	return 0;
#endif
}

static void step_free(Step *st)
{
	for (int i = 0; i < st->nargs; i++)
		dnnl_memory_destroy(st->args[i].memory);
	if (st->prim)
		dnnl_primitive_destroy(st->prim);
	memset(st, 0, sizeof(*st));
}

static void kernel_free(void *state)
{
	DnnlKernel *k = state;
	if (!k)
		return;
	for (int j = 0; j < k->nsteps; j++)
		step_free(&k->step[j]);
	if (k->stream)
		dnnl_stream_destroy(k->stream);
	for (int i = 0; i < k->nown; i++)
		free(k->own[i]);
	if (k->conv && k->conv->pd)
		dnnl_primitive_desc_destroy(k->conv->pd);
	free(k->conv);
	free(k->xy);
	free(k->tail);
	free(k);
}

/* Image img of tensor t, seen as k->split images of equal size. */
static void *image(const DnnlKernel *k, const Tensor *t, int64_t img)
{
	return (uint8_t *)t->data + (size_t)img * (t->nbytes / (size_t)k->split);
}

/* k's steps on image img of its tensors. */
static int run_steps(DnnlKernel *k, const Tensor *const *in,
		     Tensor *const *out, void *const *tmp, int64_t img)
{
	for (int j = 0; j < k->nsteps; j++) {
		Step *st = &k->step[j];
		for (int i = 0; i < st->nargs; i++) {
			if (st->bind[i] == BIND_FIXED)
				continue;
			void *d = st->bind[i] == BIND_IN
					  ? image(k, in[st->idx[i]], img)
				  : st->bind[i] == BIND_OUT
					  ? image(k, out[st->idx[i]], img)
					  : tmp[st->idx[i]];
			if (dnnl_memory_set_data_handle(st->args[i].memory,
							d) != dnnl_success)
				return error("oneDNN refused a buffer");
		}
		dnnl_status_t rc = dnnl_primitive_execute(
			st->prim, k->stream, st->nargs, st->args);
		if (rc != dnnl_success)
			return error("oneDNN: %s", dnnl_status2str(rc));
	}
	return 0;
}

/* The window of output o (its index over the spatial axes, row-major) of
 * image n, channel c of max pooling xs over x, by pool.c's rule (maxNum:
 * NaN passed over unless every value is NaN). */
static float window_max_num(const XySpec *xs, const float *x, int64_t n,
			    int64_t c, int64_t o)
{
	int nsp = xs->rank - 2;
	int64_t first[3], step[3], len[3], at[3] = { 0, 0, 0 }, in = 1;
	for (int a = nsp - 1; a >= 0; a--) {
		int64_t oa = o % xs->y[2 + a];
		o /= xs->y[2 + a];
		first[a] = oa * xs->strides[a] - xs->pl[a];
		step[a] = xs->dil[a] + 1;
		len[a] = xs->ker[a];
		in *= xs->x[2 + a];
	}
	int64_t C = xs->x[1];
	float m = 0; /* a window wholly in the padding: 0, as pool.c's */
	bool any = false;
	for (;;) {
		int64_t off = 0;
		bool inside = true;
		for (int a = 0; a < nsp; a++) {
			int64_t i = first[a] + at[a] * step[a];
			inside = inside && i >= 0 && i < xs->x[2 + a];
			off = off * xs->x[2 + a] + i;
		}
		if (inside) {
			float v = xs->nhwc ? x[(n * in + off) * C + c]
					   : x[(n * C + c) * in + off];
			m = !any || v > m || m != m ? v : m;
			any = true;
		}
		int a = nsp - 1;
		while (a >= 0 && ++at[a] == len[a])
			at[a--] = 0;
		if (a < 0)
			return m;
	}
}

/* oneDNN's max pooling starts each window from -FLT_MAX, so a window of
 * -inf or of NaN alone gives -FLT_MAX: each output of -FLT_MAX is its
 * window's max by pool.c's rule instead (the same where -FLT_MAX is in
 * the window). */
static void mend_max(const XySpec *xs, const float *x, float *y)
{
	int64_t C = xs->y[1], out = 1;
	for (int a = 2; a < xs->rank; a++)
		out *= xs->y[a];
	int64_t total = xs->y[0] * C * out;
	for (int64_t i = 0; i < total; i++) {
		if (y[i] != -FLT_MAX)
			continue;
		int64_t n, c, o;
		if (xs->nhwc)
			c = i % C, o = i / C % out, n = i / C / out;
		else
			o = i % out, c = i / out % C, n = i / out / C;
		y[i] = window_max_num(xs, x, n, c, o);
	}
}

/* The scratch a run of k takes: its temporaries, each 64-byte aligned. */
static size_t tmp_total(const DnnlKernel *k)
{
	size_t n = k->tmp_bytes[0] + k->tmp_bytes[1] + k->tmp_bytes[2];
	return n ? n + 3 * 64 : 0;
}

static int kernel_run(void *state, const Tensor *const *in,
		      Tensor *const *out)
{
	DnnlKernel *k = state;
	if (k->sum_in >= 0 && in[k->sum_in]->data != out[0]->data)
		memcpy(tensor_mut(out[0]), in[k->sum_in]->data,
		       out[0]->nbytes);
	void *tmp[3] = { NULL, NULL, NULL };
	size_t all = tmp_total(k);
	if (all) {
		uintptr_t at = (uintptr_t)arena_alloc_raw(k->scratch, all);
		for (int i = 0; i < 3; i++) {
			at = (at + 63) & ~(uintptr_t)63;
			tmp[i] = (void *)at;
			at += k->tmp_bytes[i];
		}
	}
	rt_pool_threads(k->threads);
	int err = 0;
	for (int64_t img = 0; img < k->split && !err; img++)
		err = run_steps(k, in, out, tmp, img);
	dnnl_status_t rc = err ? dnnl_success : dnnl_stream_wait(k->stream);
	if (!err && rc == dnnl_success && k->xy &&
	    k->xy->alg == dnnl_pooling_max)
		mend_max(k->xy, in[0]->data, tensor_mut(out[0]));
	if (!err && rc == dnnl_success && k->tail) {
		const float *z = k->tail_sum < 0 ? NULL
				 : k->z_copied	  ? tmp[2]
						  : in[3]->data;
		direct_act_chain(k->tail, k->tail_sum, z, tensor_mut(out[0]),
				 out[0]->nbytes / sizeof(float), k->threads);
	}
	if (k->scratch)
		arena_reset(k->scratch);
	return err ? -1
	       : rc == dnnl_success ? 0
				    : error("oneDNN: %s", dnnl_status2str(rc));
}

static DnnlKernel *kernel_new(RunCtx *s, const Prepared *p,
			      double work)
{
	int threads = rt_threads_for(s, work);
	rt_pool_threads(threads); /* before oneDNN first asks */
	pthread_once(&engine_once, engine_init);
	if (!engine)
		return NULL;
	DnnlKernel *k = xmalloc(sizeof(*k));
	memset(k, 0, sizeof(*k));
	k->threads = threads;
	k->sum_in = -1;
	k->tail_sum = -1;
	k->split = 1;
	k->scratch = &s->scratch;
	k->model = p && rt_model_graph(s->model, p->g) ? s->model : NULL;
	return k;
}

static void *own(DnnlKernel *k, size_t bytes)
{
	if (k->nown == MAX_OWN)
		return NULL;
	void *p = aligned_alloc(64, (bytes + 64) / 64 * 64);
	if (p)
		k->own[k->nown++] = p;
	return p;
}

static int add_arg(DnnlKernel *k, int arg, const dnnl_memory_desc_t *md,
		   int bind, int idx, const void *data)
{
	dnnl_memory_t m;
	Step *st = &k->step[k->nsteps - 1];
	if (k->nsteps < 1 || st->nargs == MAX_ARGS ||
	    dnnl_memory_create(&m, md, engine, (void *)data) != dnnl_success)
		return -1;
	st->args[st->nargs] = (dnnl_exec_arg_t){ arg, m };
	st->bind[st->nargs] = bind;
	st->idx[st->nargs] = idx;
	st->nargs++;
	return 0;
}

/* A new step running pd's primitive; false if oneDNN refuses. */
static bool step_new(DnnlKernel *k, const_dnnl_primitive_desc_t pd)
{
	if (k->nsteps == MAX_STEPS ||
	    dnnl_primitive_create(&k->step[k->nsteps].prim, pd) !=
		    dnnl_success)
		return false;
	k->nsteps++;
	return true;
}

/* A step reordering from (bound bf, index fi, data fd) to (bt, ti, td). */
static bool reorder_step(DnnlKernel *k, const dnnl_memory_desc_t *from,
			 int bf, int fi, void *fd, const dnnl_memory_desc_t *to,
			 int bt, int ti, void *td)
{
	dnnl_primitive_desc_t pd;
	if (dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine,
					       NULL) != dnnl_success)
		return false;
	bool ok = step_new(k, pd) &&
		  add_arg(k, DNNL_ARG_FROM, from, bf, fi, fd) == 0 &&
		  add_arg(k, DNNL_ARG_TO, to, bt, ti, td) == 0;
	dnnl_primitive_desc_destroy(pd);
	return ok;
}

/* A row-major fp32 descriptor; strides st (NULL: dense row-major). */
static bool md_make(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
		    const int64_t *st)
{
	dnnl_dims_t d, s;
	int64_t step = 1;
	for (int i = rank - 1; i >= 0; i--) {
		d[i] = dims[i];
		s[i] = st ? st[i] : step;
		step *= dims[i] > 0 ? dims[i] : 1;
	}
	return dnnl_memory_desc_init_by_strides(md, rank, d, dnnl_f32, s) ==
	       dnnl_success;
}

static bool md_any(dnnl_memory_desc_t *md, int rank, const int64_t *dims)
{
	dnnl_dims_t d;
	for (int i = 0; i < rank; i++)
		d[i] = dims[i];
	return dnnl_memory_desc_init_by_tag(md, rank, d, dnnl_f32,
					    dnnl_format_tag_any) ==
	       dnnl_success;
}

/* Constant data (layout from) reordered, times scale, into buf (layout
 * to); false if oneDNN refuses. */
static bool reorder_into(DnnlKernel *k, const dnnl_memory_desc_t *from,
			 const void *data, const dnnl_memory_desc_t *to,
			 float scale, void *buf)
{
	dnnl_primitive_attr_t a = NULL;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_t r = NULL;
	dnnl_memory_t src = NULL, dst = NULL;
	bool ok = dnnl_primitive_attr_create(&a) == dnnl_success &&
		  (scale == 1.0f ||
		   dnnl_primitive_attr_set_output_scales(a, 1, 0, &scale) ==
			   dnnl_success) &&
		  dnnl_reorder_primitive_desc_create(&pd, from, engine, to,
						     engine, a) ==
			  dnnl_success &&
		  dnnl_primitive_create(&r, pd) == dnnl_success &&
		  dnnl_memory_create(&src, from, engine, (void *)data) ==
			  dnnl_success &&
		  dnnl_memory_create(&dst, to, engine, buf) == dnnl_success;
	if (ok) {
		dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, src },
					    { DNNL_ARG_TO, dst } };
		rt_pool_threads(k->threads);
		ok = dnnl_primitive_execute(r, k->stream, 2, args) ==
			     dnnl_success &&
		     dnnl_stream_wait(k->stream) == dnnl_success;
	}
	dnnl_memory_destroy(src);
	dnnl_memory_destroy(dst);
	if (r)
		dnnl_primitive_destroy(r);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (a)
		dnnl_primitive_attr_destroy(a);
	return ok;
}

/* Constant data reordered as reorder_into does, into memory k owns; NULL
 * if oneDNN refuses. */
static void *reorder_const(DnnlKernel *k, const dnnl_memory_desc_t *from,
			   const void *data, const dnnl_memory_desc_t *to,
			   float scale)
{
	void *buf = own(k, dnnl_memory_desc_get_size(to));
	return buf && reorder_into(k, from, data, to, scale, buf) ? buf : NULL;
}

/* ---- weights shared by a model's sessions and gears -------------------- */

/* One weight tensor of the file (data, layout from) reordered, times
 * scale, into layout to, at buf; the model keeps it until it closes. */
typedef struct SharedW {
	struct SharedW *next;
	const void *data;
	float scale;
	dnnl_memory_desc_t from, to;
	void *buf;
} SharedW;

enum { SHARED_BUCKETS = 256 };

/* The reordered weights of a model, hashed by their source's address,
 * in pool: chunks of SHARED_CHUNK bytes of huge pages (rec's 10 MB of
 * weights faulted in 4 KB pages one by one took 3.8-4.4 ms of its 19 ms
 * prepare; the reorders themselves 1.4). */
enum { SHARED_CHUNK = 8u << 20 };
typedef struct DnnlShared {
	SharedW *bucket[SHARED_BUCKETS];
	Arena pool;
} DnnlShared;

static SharedW **shared_bucket(DnnlShared *sh, const void *data)
{
	uintptr_t a = (uintptr_t)data >> 6; /* weights are 64-byte aligned */
	return &sh->bucket[(a ^ a >> 8) % SHARED_BUCKETS];
}

static SharedW *shared_find(DnnlShared *sh, const dnnl_memory_desc_t *from,
			    const void *data, const dnnl_memory_desc_t *to,
			    float scale)
{
	for (SharedW *e = *shared_bucket(sh, data); e; e = e->next)
		if (e->data == data && e->scale == scale &&
		    dnnl_memory_desc_equal(&e->from, from) &&
		    dnnl_memory_desc_equal(&e->to, to))
			return e;
	return NULL;
}

/* Weights of one of the model's graphs reordered as reorder_into does,
 * in memory the model owns: made by the first kernel that wants that
 * layout of them, bound by the rest (under the model's lock, so two
 * sessions preparing at once make it once).  A specialisation's go to
 * memory k owns. */
static void *shared_const(DnnlKernel *k, const dnnl_memory_desc_t *from,
			  const void *data, const dnnl_memory_desc_t *to,
			  float scale)
{
	gearrt_model *md = k->model;
	if (!md)
		return reorder_const(k, from, data, to, scale);
	pthread_mutex_lock(&md->lock);
	if (!md->dnnl) {
		md->dnnl = xmalloc(sizeof(*md->dnnl));
		memset(md->dnnl, 0, sizeof(*md->dnnl));
		md->dnnl->pool.chunk = SHARED_CHUNK;
	}
	SharedW *e = shared_find(md->dnnl, from, data, to, scale);
	size_t bytes = dnnl_memory_desc_get_size(to);
	void *buf = NULL;
	if (!e) { /* 64-byte aligned, as oneDNN's own buffers */
		uintptr_t at = (uintptr_t)arena_alloc_raw(&md->dnnl->pool,
							  bytes + 48);
		buf = (void *)((at + 63) & ~(uintptr_t)63);
	}
	if (buf && reorder_into(k, from, data, to, scale, buf)) {
		SharedW **b = shared_bucket(md->dnnl, data);
		e = xmalloc(sizeof(*e));
		*e = (SharedW){ .next = *b, .data = data, .scale = scale,
				.from = *from, .to = *to, .buf = buf };
		*b = e;
	}
	pthread_mutex_unlock(&md->lock);
	return e ? e->buf : NULL;
}

void dnnl_model_free(gearrt_model *md)
{
	if (!md->dnnl)
		return;
	for (int i = 0; i < SHARED_BUCKETS; i++)
		for (SharedW *e = md->dnnl->bucket[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	arena_release(&md->dnnl->pool);
	free(md->dnnl);
	md->dnnl = NULL;
}

/* The primitive of pd, its scratchpad, the weights (user layout wu,
 * data w) reordered into pd's choice and bound as DNNL_ARG_WEIGHTS. */
static bool finish(DnnlKernel *k, dnnl_primitive_desc_t pd,
		   const dnnl_memory_desc_t *wu, const void *w, float scale)
{
	const dnnl_memory_desc_t *ww =
		dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	const dnnl_memory_desc_t *sp =
		dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	size_t spn = sp ? dnnl_memory_desc_get_size(sp) : 0;
	void *wbuf = NULL, *spbuf = NULL;
	if (!step_new(k, pd))
		return false;
	if (w && (!(wbuf = shared_const(k, wu, w, ww, scale)) ||
		  add_arg(k, DNNL_ARG_WEIGHTS, ww, BIND_FIXED, 0, wbuf) < 0))
		return false;
	k->weights = wbuf;
	if (spn && (!(spbuf = own(k, spn)) ||
		    add_arg(k, DNNL_ARG_SCRATCHPAD, sp, BIND_FIXED, 0,
			    spbuf) < 0))
		return false;
	return true;
}

/* oneDNN's algorithm of each activation, and how its alpha and beta
 * reach it (compiler/act.h). */
static const struct {
	dnnl_alg_kind_t alg;
	ActDnnl dp;
} act_dnnl[ACT_COUNT] = {
#define X(nm, op, an, ad, bn, bd, f64, f32, rel, abs, alg, dp, since, wr) \
	[ACT_##nm] = { dnnl_##alg, dp },
	GEARC_ACTS(X)
#undef X
};

/* Appends activation kind (alpha al, beta be) to ops as eltwise
 * post-ops; false if oneDNN refuses. */
static bool append_act(dnnl_post_ops_t ops, int kind, float al, float be)
{
	ActDnnl dp = act_dnnl[kind].dp;
	float a = dp == DP_NONE ? 0 : dp == DP_ONE ? 1 : al;
	float b = dp == DP_BOTH || dp == DP_CLIP01 ? be : 0;
	if (dnnl_post_ops_append_eltwise(ops, 1.0f, act_dnnl[kind].alg, a,
					 b) != dnnl_success)
		return false;
	if (dp == DP_CLIP01)
		return dnnl_post_ops_append_eltwise(ops, 1.0f,
						    dnnl_eltwise_clip_v2, 0.0f,
						    1.0f) == dnnl_success;
	if (dp == DP_SCALE)
		return dnnl_post_ops_append_eltwise(ops, 1.0f,
						    dnnl_eltwise_linear, be,
						    0.0f) == dnnl_success;
	return true;
}

/* Whether oneDNN's post-op form of activation kind (alpha a, beta b,
 * append_act) gives act.h's answer where its approximations do not
 * speak for it: NaN stays NaN (act.h's one rule for every activation on
 * every path), +-Inf and +-0 give the fp32 form's result within its
 * accuracy, a zero with the fp32 form's sign.  oneDNN's JIT kernels
 * compute Relu, Clip and HardSigmoid with max and min, which turn NaN
 * into a bound and -0 into +0; its reference kernels do not.  So this is
 * asked of this CPU's kernels: a binary Add of -0 (x + -0 is x) with the
 * activation as its post-op, on those values, once per (kind, a, b). */
static const float special[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f,
				 FLT_MAX, -FLT_MAX, 1.0f, -1.0f };
enum { NSPECIAL = sizeof(special) / sizeof(special[0]) };

static bool post_op_exact(int kind, float a, float b);

static bool special_agrees(int kind, float x, float got, float a, float b)
{
	float want = act_f32(kind, x, a, b);
	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got);
	if (want == 0 || isinf(want))
		return memcmp(&want, &got, sizeof(float)) == 0;
	return fabs((double)got - want) <=
	       act_info[kind].rel * fabs((double)want) + act_info[kind].abs;
}

static bool post_op_measure(int kind, float a, float b)
{
	float x[NSPECIAL], y[NSPECIAL], mz = -0.0f;
	memcpy(x, special, sizeof(x));
	dnnl_dims_t d = { NSPECIAL }, d1 = { 1 };
	dnnl_memory_desc_t mx, m1;
	dnnl_binary_desc_t bd;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t ops = NULL;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_t prim = NULL;
	dnnl_memory_t mem[3] = { NULL, NULL, NULL };
	dnnl_stream_t st = NULL;
	bool ok = dnnl_memory_desc_init_by_tag(&mx, 1, d, dnnl_f32,
					       dnnl_a) == dnnl_success &&
		  dnnl_memory_desc_init_by_tag(&m1, 1, d1, dnnl_f32, dnnl_a) ==
			  dnnl_success &&
		  dnnl_binary_desc_init(&bd, dnnl_binary_add, &mx, &m1, &mx) ==
			  dnnl_success &&
		  dnnl_primitive_attr_create(&attr) == dnnl_success &&
		  dnnl_post_ops_create(&ops) == dnnl_success &&
		  append_act(ops, kind, a, b) &&
		  dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success &&
		  dnnl_primitive_desc_create(&pd, &bd, attr, engine, NULL) ==
			  dnnl_success &&
		  dnnl_primitive_create(&prim, pd) == dnnl_success &&
		  dnnl_memory_create(&mem[0], &mx, engine, x) == dnnl_success &&
		  dnnl_memory_create(&mem[1], &m1, engine, &mz) ==
			  dnnl_success &&
		  dnnl_memory_create(&mem[2], &mx, engine, y) == dnnl_success &&
		  dnnl_stream_create(&st, engine, dnnl_stream_default_flags) ==
			  dnnl_success;
	dnnl_exec_arg_t args[3] = { { DNNL_ARG_SRC_0, mem[0] },
				    { DNNL_ARG_SRC_1, mem[1] },
				    { DNNL_ARG_DST, mem[2] } };
	ok = ok && dnnl_primitive_execute(prim, st, 3, args) == dnnl_success &&
	     dnnl_stream_wait(st) == dnnl_success;
	for (int i = 0; ok && i < NSPECIAL; i++)
		ok = special_agrees(kind, x[i], y[i], a, b);
	for (int i = 0; i < 3; i++)
		dnnl_memory_destroy(mem[i]);
	dnnl_stream_destroy(st);
	dnnl_primitive_destroy(prim);
	dnnl_primitive_desc_destroy(pd);
	dnnl_post_ops_destroy(ops);
	dnnl_primitive_attr_destroy(attr);
	return ok;
}

enum { EXACT_KEEP = 64 };
typedef struct ExactSeen {
	int kind;
	float a, b;
	bool exact;
} ExactSeen;
static ExactSeen exact_seen[EXACT_KEEP];
static int nexact;
static pthread_mutex_t exact_lock = PTHREAD_MUTEX_INITIALIZER;

bool dnnl_act_exact(int kind, float a, float b)
{
	pthread_once(&engine_once, engine_init);
	return engine && post_op_exact(kind, a, b);
}

static bool post_op_exact(int kind, float a, float b)
{
	pthread_mutex_lock(&exact_lock);
	for (int i = 0; i < nexact; i++)
		if (exact_seen[i].kind == kind &&
		    !memcmp(&exact_seen[i].a, &a, sizeof(a)) &&
		    !memcmp(&exact_seen[i].b, &b, sizeof(b))) {
			bool e = exact_seen[i].exact;
			pthread_mutex_unlock(&exact_lock);
			return e;
		}
	bool e = post_op_measure(kind, a, b);
	if (nexact < EXACT_KEEP)
		exact_seen[nexact++] = (ExactSeen){ kind, a, b, e };
	pthread_mutex_unlock(&exact_lock);
	return e;
}

/* Whether pd applies its eltwise post-ops with the JIT injector that
 * post_op_exact asks about: oneDNN's JIT and brgemm convolutions and
 * matmuls.  Its GEMM-based convolution (gemm:jit) applies them in a pass
 * of its own, which turned a Sigmoid's NaN into 0 (a grouped 1-D Conv);
 * there the activations run as the tail. */
static bool injector_post_ops(const_dnnl_primitive_desc_t pd)
{
	const char *impl = "";
	dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
	return !strstr(impl, "gemm") && strncmp(impl, "ref", 3);
}

/* Attributes: user scratchpad, the node's activations as post-ops, a
 * sum (with_sum) after the first z_after of them, up to the first
 * activation whose post-op is not exact (post_op_exact), or the first
 * of all unless eltwise: that one and what follows it (activations, the
 * sum) are k's tail, which kernel_run applies to Y after the primitive.
 * NULL if the activations are not a well-formed list of act.h's. */
static dnnl_primitive_attr_t make_attr(const Node *n, bool with_sum,
				       bool eltwise, DnnlKernel *k)
{
	ActRun *acts = act_run_of(n);
	int32_t zk = with_sum ? fused_z_after(n) : -1, na = acts ? acts->n : 0;
	free(k->tail);
	k->tail = NULL;
	k->tail_sum = -1;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t ops = NULL;
	bool ok = acts && dnnl_primitive_attr_create(&attr) == dnnl_success &&
		  dnnl_post_ops_create(&ops) == dnnl_success &&
		  dnnl_primitive_attr_set_scratchpad_mode(
			  attr, dnnl_scratchpad_mode_user) == dnnl_success;
	int32_t i = 0;
	for (; ok && i <= na; i++) {
		if (i == zk)
			ok = dnnl_post_ops_append_sum(ops, 1.0f) ==
			     dnnl_success;
		if (!ok || i == na || !eltwise)
			break;
		int kind = acts->act[i].kind;
		float al = acts->act[i].a, be = acts->act[i].b;
		if (act_dnnl[kind].alg == dnnl_alg_kind_undef ||
		    !post_op_exact(kind, al, be))
			break;
		ok = append_act(ops, kind, al, be);
	}
	ok = ok && dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
	dnnl_post_ops_destroy(ops);
	k->post_acts = i < na ? i : na;
	if (ok && i < na) { /* acts [i, na) and a sum not yet added */
		k->tail_sum = zk > i ? zk - i : -1;
		memmove(acts->act, acts->act + i,
			(size_t)(na - i) * sizeof(acts->act[0]));
		acts->n = na - i;
		k->tail = acts;
		acts = NULL;
	}
	free(acts);
	if (!ok) {
		dnnl_primitive_attr_destroy(attr);
		return NULL;
	}
	return attr;
}

/* Whether some output row of forward convolution cg along axis a has
 * no tap of its window on the input (all of them in the padding, or
 * stepped over it by the dilation: a 1-wide input, dilation 2, pad 3). */
static bool padding_only_row(const ConvGeom *cg, int a)
{
	for (int64_t o = 0; o < cg->out[a]; o++) {
		bool hit = false;
		for (int64_t k = 0; k < cg->kernel[a] && !hit; k++) {
			int64_t i = o * cg->stride[a] - cg->pad[a] +
				    k * cg->dilation[a];
			hit = i >= 0 && i < cg->in[a];
		}
		if (!hit)
			return true;
	}
	return false;
}

static bool is_f32(const Value *v)
{
	return v->dtype == DT_FLOAT && v->tkind == TK_TENSOR &&
	       shape_is_static(&v->shape);
}

/* Inputs 0..nin-1 (where present) and output 0 are static fp32, inputs
 * 0 and required present; no other output is wanted. */
static bool all_f32(const Prepared *p, const Node *n, int nin, int nreq)
{
	for (int i = 0; i < nin; i++) {
		const Value *v = rt_in_val(p, n, i);
		if ((!v && i < nreq) || (v && !is_f32(v)))
			return false;
	}
	for (int32_t k = 1; k < n->noutputs; k++)
		if (n->outputs[k] >= 0)
			return false;
	return n->noutputs >= 1 && n->outputs[0] >= 0 &&
	       is_f32(&p->g->vals[n->outputs[0]]);
}

static const void *weight_data(const Value *v)
{
	return v && v->kind == VAL_WEIGHT && v->konst ? v->konst->data : NULL;
}

/* Binds input i as argument arg, a constant (fixed) or not. */
static int bind_input(DnnlKernel *k, int arg, const dnnl_memory_desc_t *md,
		      const Value *v, int i)
{
	const void *w = weight_data(v);
	return add_arg(k, arg, md, w ? BIND_FIXED : BIND_IN, i, w);
}

/* Ends a match: the kernel into *fk (1), or 0 and nothing kept. */
static int done(DnnlKernel *k, dnnl_primitive_desc_t pd,
		dnnl_primitive_attr_t attr, bool ok, FastKernel *fk)
{
	if (pd && ok)
		name_impl(k, pd);
	if (k->conv && ok)
		snprintf(k->impl, sizeof(k->impl), "%s", k->conv->impl);
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (!ok) {
		kernel_free(k);
		return 0;
	}
	fk->run = kernel_run;
	fk->free = kernel_free;
	fk->state = k;
	fk->threads = k->threads;
	fk->variant = k->impl;
	return 1;
}

/* ---- Conv, ConvTranspose, FusedConv ------------------------------------ */

/* Weight descriptors of a (de)convolution: dims (G,) O, I, k... over the
 * ONNX weight [O, I/G, k...] (Conv) or [I, O/G, k...] (ConvTranspose). */
static int conv_weights(const ConvGeom *cg, bool transpose, int64_t *dims,
			int64_t *st)
{
	int64_t g = cg->group, o = cg->cout / g, i = cg->cin / g, ks = 1;
	int r = 0, nsp = cg->nsp;
	for (int a = nsp - 1; a >= 0; a--) {
		st[3 + a] = ks;
		dims[3 + a] = cg->kernel[a];
		ks *= cg->kernel[a];
	}
	dims[0] = g, dims[1] = o, dims[2] = i;
	st[0] = o * i * ks;
	st[1] = transpose ? ks : i * ks;
	st[2] = transpose ? o * ks : ks;
	if (g == 1) { /* no group axis */
		memmove(dims, dims + 1, (size_t)(nsp + 2) * sizeof(*dims));
		memmove(st, st + 1, (size_t)(nsp + 2) * sizeof(*st));
		r = nsp + 2;
	} else {
		r = nsp + 3;
	}
	return r;
}

/* md, the same dims in NHWC (acdb) order. */
static bool md_nhwc(dnnl_memory_desc_t *md, const dnnl_memory_desc_t *like)
{
	return like->ndims == 4 &&
	       dnnl_memory_desc_init_by_tag(md, 4, like->dims,
					    like->data_type,
					    dnnl_acdb) == dnnl_success;
}

/* md holds NHWC's bytes: it is NHWC, or the channels blocked by 16 (8)
 * when there are 16 (8) of them (nChw16c of one block: n, h, w, then c). */
static bool is_nhwc(const dnnl_memory_desc_t *md)
{
	dnnl_memory_desc_t n;
	if (md_nhwc(&n, md) && dnnl_memory_desc_equal(&n, md))
		return true;
	dnnl_format_tag_t one_block = md->ndims != 4 ? dnnl_format_tag_undef
				      : md->dims[1] == 16 ? dnnl_aBcd16b
				      : md->dims[1] == 8  ? dnnl_aBcd8b
							  : dnnl_format_tag_undef;
	return one_block != dnnl_format_tag_undef &&
	       dnnl_memory_desc_init_by_tag(&n, 4, md->dims, md->data_type,
					    one_block) == dnnl_success &&
	       dnnl_memory_desc_equal(&n, md);
}

/* The layout tensor io of c holds: NHWC (the primitive's) or row-major. */
static const dnnl_memory_desc_t *conv_held(const ConvIo *c, int io)
{
	return c->nhwc[io] ? &c->held[io] : &c->user[io];
}

static bool conv_reorders(const ConvIo *c, int io)
{
	return !dnnl_memory_desc_equal(conv_held(c, io), &c->inner[io]);
}

/* Z into Y's buffer (the primitive's Y: the output tensor, or the
 * temporary if Y is reordered out): copied if already in its layout. */
static bool conv_z_step(DnnlKernel *k, const ConvIo *c, bool ry)
{
	const dnnl_memory_desc_t *z = conv_held(c, CONV_Z);
	if (!ry && dnnl_memory_desc_equal(z, &c->inner[CONV_Y])) {
		k->sum_in = 3;
		return true;
	}
	return reorder_step(k, z, BIND_IN, 3, NULL, &c->inner[CONV_Y],
			    ry ? BIND_TMP : BIND_OUT, ry ? 1 : 0, NULL);
}

/* The build of a (de)convolution: its steps, now that its tensors'
 * layouts are known: Z into Y's buffer, X reordered in where its layout
 * is not the primitive's, the operation (weights reordered once, bias,
 * scratchpad), Y reordered out. */
int dnnl_conv_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	DnnlKernel *k = t->fast.state;
	ConvIo *c = k->conv;
	const Node *n = t->n;
	rt_pool_threads(k->threads); /* for the reorders made here */
	c->nhwc[CONV_X] = rt_nhwc(p, n->inputs[0]);
	c->nhwc[CONV_Y] = rt_nhwc(p, n->outputs[0]);
	c->nhwc[CONV_Z] = c->with_z && rt_nhwc(p, n->inputs[3]);
	for (int io = 0; io < 3; io++)
		c->nhwc[io] |= c->nhwc_ok[io] && c->one_pixel[io];
	bool rx = conv_reorders(c, CONV_X), ry = conv_reorders(c, CONV_Y);
	/* Z added by the tail (make_attr) from where it is, or from a copy
	 * in Y's layout if it is not in it or Y's buffer is its own */
	bool zt = c->with_z && k->tail_sum >= 0;
	k->z_copied = zt && (c->z_shares_y ||
			     !dnnl_memory_desc_equal(conv_held(c, CONV_Z),
						     conv_held(c, CONV_Y)));
	k->tmp_bytes[0] = rx ? dnnl_memory_desc_get_size(&c->inner[0]) : 0;
	k->tmp_bytes[1] = ry ? dnnl_memory_desc_get_size(&c->inner[1]) : 0;
	k->tmp_bytes[2] = k->z_copied ? dnnl_memory_desc_get_size(
						conv_held(c, CONV_Y))
				      : 0;
	if (tmp_total(k)) { /* the scratch arena grows now, not while running */
		arena_alloc(k->scratch, tmp_total(k));
		arena_reset(k->scratch);
	}
	bool ok = (!c->with_z || zt || conv_z_step(k, c, ry)) &&
		  (!k->z_copied ||
		   reorder_step(k, conv_held(c, CONV_Z), BIND_IN, 3, NULL,
				conv_held(c, CONV_Y), BIND_TMP, 2, NULL)) &&
		  (!rx || reorder_step(k, conv_held(c, CONV_X), BIND_IN, 0,
				       NULL, &c->inner[0], BIND_TMP, 0, NULL));
	if (!ok)
		return error("oneDNN refused a reorder");
	ok = finish(k, c->pd, &c->wu, c->w, 1.0f) &&
	     (!c->b || bind_input(k, DNNL_ARG_BIAS, &c->bias, c->b, 2) == 0);
	dnnl_primitive_desc_destroy(c->pd);
	c->pd = NULL;
	if (!ok)
		return error("oneDNN refused the %s primitive", c->impl);
	ok = add_arg(k, DNNL_ARG_SRC, &c->inner[0], rx ? BIND_TMP : BIND_IN,
		     0, NULL) == 0 &&
	     add_arg(k, DNNL_ARG_DST, &c->inner[1], ry ? BIND_TMP : BIND_OUT,
		     ry ? 1 : 0, NULL) == 0 &&
	     (!ry || reorder_step(k, &c->inner[1], BIND_TMP, 1, NULL,
				  conv_held(c, CONV_Y), BIND_OUT, 0, NULL));
	return ok ? 0 : error("oneDNN refused a reorder");
}

static int conv_io(int slot, const ConvIo *c)
{
	return slot == 0			? CONV_X
	       : slot == -1			? CONV_Y
	       : slot == 3 && c->with_z ? CONV_Z
					: -1;
}

/* Records in t which of c's tensors may be NHWC: those the primitive
 * takes in NHWC, each its own group but Z sharing Y's buffer, which
 * shares Y's. */
static void conv_slots(Task *t, const ConvIo *c)
{
	rt_task_slots(t);
	for (int slot = -1; slot < t->n->ninputs; slot++) {
		int io = conv_io(slot, c);
		if (io < 0 || !c->nhwc_ok[io])
			continue;
		rt_slot(t, slot)->prefers = true;
		rt_slot(t, slot)->group =
			1 + (io == CONV_Z && c->z_shares_y ? CONV_Y : io);
	}
}

static const char *impl_of(const_dnnl_primitive_desc_t pd)
{
	const char *impl = "";
	dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
	return impl;
}

/* The product of md's spatial dims (after N and C). */
static int64_t spatial_size(const dnnl_memory_desc_t *md)
{
	int64_t n = 1;
	for (int a = 2; a < md->ndims; a++)
		n *= md->dims[a];
	return n;
}

/* The tensors of a (de)convolution whose descriptor *pd (taken into
 * k) chose its layouts; the primitive waits for dnnl_conv_build. */
static void conv_prepare(DnnlKernel *k, dnnl_primitive_desc_t *pd,
			 const dnnl_memory_desc_t *src,
			 const dnnl_memory_desc_t *dst, bool with_z,
			 const dnnl_memory_desc_t *wu, const void *w,
			 const Value *b, const dnnl_memory_desc_t *bias)
{
	ConvIo *c = k->conv = xmalloc(sizeof(*c));
	memset(c, 0, sizeof(*c));
	c->pd = *pd;
	*pd = NULL;
	c->wu = *wu, c->w = w;
	c->bias = *bias, c->b = b;
	snprintf(c->impl, sizeof(c->impl), "%s", impl_of(c->pd));
	c->user[CONV_X] = *src;
	c->user[CONV_Y] = c->user[CONV_Z] = *dst;
	c->inner[CONV_X] =
		*dnnl_primitive_desc_query_md(c->pd, dnnl_query_src_md, 0);
	c->inner[CONV_Y] = c->inner[CONV_Z] =
		*dnnl_primitive_desc_query_md(c->pd, dnnl_query_dst_md, 0);
	for (int io = 0; io < 3; io++) {
		c->nhwc_ok[io] = is_nhwc(&c->inner[io]);
		c->held[io] = c->inner[io];
		c->held[io].data_type = c->user[io].data_type;
	}
	c->with_z = with_z;
	c->one_pixel[CONV_X] = spatial_size(src) == 1;
	c->one_pixel[CONV_Y] = c->one_pixel[CONV_Z] = spatial_size(dst) == 1;
}

/* Whether a convolution runs oneDNN's direct JIT kernel (jit:, jit_dw:
 * of the same ISA) rather than its brgemm one (brgconv, brdgmm_dw): a
 * depthwise one; one with a window above 1x1 and at most 4 input and 16
 * output channels a group (a stem), or at most 2^14 output pixels over
 * all its images where each has one output row (a text recognizer's
 * sequence) or there is one image at least 4 times as wide as high.  Those run as fast or faster there and
 * build 2-10x faster; square images of several rows in a batch run
 * brgconv faster and it builds fast there.
 * Measured (one thread, build / run): rec's stride-2 stems at 48x1280,
 * 3->16 channels, brgconv 2.85 / 0.142 ms, jit:avx512_core 0.22 / 0.131
 * (a square image of 1024: 1.38 / 1.54 against 0.17 / 1.45); with 64
 * output channels brgconv runs twice as fast (ISNet's 3->64 stem at
 * 1024x1024: 1.85 / 4.9 against 0.17 / 10.1 ms; at 320x320 0.70 / 0.51
 * against 0.18 / 0.89), with 32 1.2 times;
 * 16->32 at 24x640, 1.75 / 0.304 against 0.26 / 0.300; depthwise 5x5 of
 * 88 channels, brdgmm_dw 0.33 / 0.037, jit_dw 0.11 / 0.024 (and 0.60
 * against 0.45 ms at 16 images); rec's SVTR neck at 8 images of 1x80,
 * 1x3 windows 480->60 and 960->60, 1.69 / 0.65 and 2.19 / 1.22 against
 * 0.33 / 0.58 and 0.32 / 1.12.  Elsewhere brgemm: 16->16 3x3 at
 * 8x56x56 ran 1.10 ms as brgconv, 1.40 as jit; 64->64 3x3 at 8x28x28
 * 0.19 / 2.34 against 0.12 / 2.45, 128->128 at 8x14x14 0.19 / 2.27
 * against 0.08 / 2.53; cls's 1x1 8->8 0.011 ms as brgconv_1x1, 0.018 as
 * jit_1x1.  A single square image too (fp16_cnn's 3x3 ones at 112x112
 * to 28x28, 16 to 128 channels: jit 0.77, 0.40, 0.66, 0.65 ms against
 * 0.71, 0.35, 0.62, 0.62; det's at 20x20 to 80x80 as fast either way,
 * built as fast); one image jit where it is at least 4 times as wide
 * as high (a text line's feature map). */
static bool direct_jit(const ConvGeom *cg, int64_t images)
{
	int64_t win = 1, pixels = 1;
	for (int a = 0; a < cg->nsp; a++)
		win *= cg->kernel[a], pixels *= cg->out[a];
	return (cg->group == cg->cin && cg->group > 1) ||
	       (win > 1 && ((cg->cin / cg->group <= 4 &&
			     cg->cout / cg->group <= 16) ||
			    ((cg->out[0] == 1 ||
			      (images == 1 && cg->nsp == 2 &&
			       cg->out[1] >= 4 * cg->out[0])) &&
			     images * pixels <= 1 << 14)));
}

/* The implementation of a convolution in NHWC (desc d): oneDNN's first
 * choice, or (direct) its direct JIT kernel of the same ISA where oneDNN
 * lists one after its brgemm kernel.  NULL if the choice is a reference
 * or gemm kernel (the caller lets oneDNN pick layouts then). */
static dnnl_primitive_desc_t conv_pd(const void *d, dnnl_primitive_attr_t attr,
				     bool direct)
{
	dnnl_primitive_desc_iterator_t it;
	if (dnnl_primitive_desc_iterator_create(&it, d, attr, engine, NULL) !=
	    dnnl_success)
		return NULL;
	dnnl_primitive_desc_t pd = dnnl_primitive_desc_iterator_fetch(it);
	const char *first = pd ? impl_of(pd) : "ref";
	bool brg = !strncmp(first, "brg", 3) || !strncmp(first, "brdgmm", 6);
	const char *isa = strchr(first, ':');
	while (brg && direct && isa &&
	       dnnl_primitive_desc_iterator_next(it) == dnnl_success) {
		dnnl_primitive_desc_t next = dnnl_primitive_desc_iterator_fetch(it);
		const char *impl = next ? impl_of(next) : "";
		const char *colon = strchr(impl, ':');
		if (!strncmp(impl, "jit", 3) && colon && !strcmp(colon, isa)) {
			dnnl_primitive_desc_destroy(pd);
			pd = next;
			break;
		}
		if (next)
			dnnl_primitive_desc_destroy(next);
	}
	dnnl_primitive_desc_iterator_destroy(it);
	if (pd && (!strncmp(impl_of(pd), "ref", 3) ||
		   strstr(impl_of(pd), "gemm"))) {
		dnnl_primitive_desc_destroy(pd);
		pd = NULL;
	}
	return pd;
}

/* A convolution of the model's input (row-major, the caller's) to 16 or
 * 8 channels: oneDNN's direct kernels read X as it is and write them
 * blocked by 16 (AVX-512) or 8 (AVX2), which for that many channels are
 * NHWC's bytes, so X needs no reorder (rec's stem at 48x1280: 0.164 ->
 * 0.139 ms; det's, to 8 channels, at 1280x736: 3.04 -> 2.10 ms). */
static bool reads_input_as_is(const ConvGeom *cg)
{
	return cg->nsp == 2 && cg->group == 1 &&
	       (cg->cout == 16 || cg->cout == 8);
}

/* Images a convolution runs on one at a time: its batch if X is a graph
 * input of at least SPLIT_MIN bytes (its reorder into the primitive's
 * layout then needs one image's temporary, not the batch's: 0.6 of 4.8
 * MB for bench_cnn's batch of 8, peak RSS 29.1 -> 25.0 MB; cls's batch
 * of 16, 1.8 MB, runs as fast), else 1 (the whole batch at once). */
#define SPLIT_MIN (1 << 20)

static int64_t image_split(const Prepared *p, const Node *n,
			   const ConvGeom *cg)
{
	const Value *x = rt_in_val(p, n, 0), *y = &p->g->vals[n->outputs[0]];
	/* each image of Y 64-byte aligned as Y is (rt_aligned) */
	bool aligned = shape_bytes(&y->shape, y->dtype) / cg->n % 64 == 0;
	return cg->n > 1 && x->kind == VAL_INPUT && !reads_input_as_is(cg) &&
			       aligned &&
			       shape_bytes(&x->shape, x->dtype) >= SPLIT_MIN
		       ? cg->n
		       : 1;
}

/* A (de)convolution as oneDNN takes it: its geometry and descriptors
 * (row-major src and dst, "any" layouts), for conv_make_pd. */
typedef struct ConvDesc {
	const ConvGeom *cg;
	dnnl_data_type_t dt; /* of src and weights: f32, or bf16 */
	bool transpose, bias, graph_input;
	int64_t split;
	dnnl_dims_t strides, dil, pl, pr;
	dnnl_memory_desc_t src, dst, sany, dany, wany, bmd;
} ConvDesc;

/* The primitive descriptor of c with attr: a direct JIT kernel reading a
 * row-major graph input as it is (reads_input_as_is), else one of NHWC
 * src and dst (2-D), else oneDNN's own choice of layouts; NULL if oneDNN
 * takes none. */
static dnnl_primitive_desc_t conv_make_pd(const ConvDesc *c,
					  dnnl_primitive_attr_t attr)
{
	const ConvGeom *cg = c->cg;
	const dnnl_memory_desc_t *bias = c->bias ? &c->bmd : NULL;
	dnnl_primitive_desc_t pd = NULL;
	if (c->transpose) {
		dnnl_deconvolution_desc_t d;
		return dnnl_dilated_deconvolution_forward_desc_init(
			       &d, dnnl_forward_inference,
			       dnnl_deconvolution_direct, &c->sany, &c->wany,
			       bias, &c->dany, c->strides, c->dil, c->pl,
			       c->pr) == dnnl_success &&
			       dnnl_primitive_desc_create(&pd, &d, attr, engine,
							  NULL) == dnnl_success
		       ? pd
		       : NULL;
	}
	dnnl_convolution_desc_t d;
	dnnl_memory_desc_t sn, dn; /* NHWC: the direct JIT kernels' */
	if (c->dt == dnnl_f32 && reads_input_as_is(cg) && c->graph_input &&
	    dnnl_memory_desc_init_by_tag(&dn, 4, c->dst.dims, dnnl_f32,
					 cg->cout == 16 ? dnnl_aBcd16b
							: dnnl_aBcd8b) ==
		    dnnl_success &&
	    dnnl_dilated_convolution_forward_desc_init(
		    &d, dnnl_forward_inference, dnnl_convolution_direct,
		    &c->src, &c->wany, bias, &dn, c->strides, c->dil, c->pl,
		    c->pr) == dnnl_success)
		pd = conv_pd(&d, attr, true);
	if (!pd && cg->nsp == 2 && md_nhwc(&sn, &c->src) &&
	    (sn.data_type = c->dt, md_nhwc(&dn, &c->dst)) &&
	    dnnl_dilated_convolution_forward_desc_init(
		    &d, dnnl_forward_inference, dnnl_convolution_direct, &sn,
		    &c->wany, bias, &dn, c->strides, c->dil, c->pl,
		    c->pr) == dnnl_success)
		pd = conv_pd(&d, attr, direct_jit(cg, cg->n / c->split));
	if (!pd && dnnl_dilated_convolution_forward_desc_init(
			   &d, dnnl_forward_inference,
			   dnnl_convolution_direct, &c->sany, &c->wany, bias,
			   &c->dany, c->strides, c->dil, c->pl,
			   c->pr) == dnnl_success &&
	    dnnl_primitive_desc_create(&pd, &d, attr, engine, NULL) !=
		    dnnl_success)
		pd = NULL;
	return pd;
}

/* The least reduction length (input channels times the kernel's height;
 * a MatMul's K) a node computes in bfloat16.  Below it the conversion
 * and the rounding cost more than the faster multiply-adds give: PP-OCRv4
 * det's early 1x1 convolutions of 16-48 channels at 160x160-320x320 made
 * its probability map's relative L2 against float32 0.020 in bfloat16,
 * 0.007 with them in float32. */
#define BF16_MIN_K 64

/* A (de)convolution on oneDNN: its src and weights in float32, or
 * bfloat16 (float32 accumulation and Y) if bf16. */
static int conv_match(RunCtx *s, Prepared *p, Task *t, FastKernel *fk,
		      bool bf16)
{
	if (!usable())
		return 0;
	const Node *n = t->n;
	bool transpose = n->op == OP_ConvTranspose;
	bool fused = !transpose && n->op != OP_Conv;
	const Value *w = rt_in_val(p, n, 1), *b = rt_in_val(p, n, 2);
	const Value *z = fused ? rt_in_val(p, n, 3) : NULL;
	const Value *y = &p->g->vals[n->outputs[0]];
	if (!all_f32(p, n, fused ? 4 : 3, 2) || !weight_data(w) ||
	    (z && !shape_equal(&z->shape, &y->shape)))
		return 0;
	OpCtx c = { .model = s->model->m, .g = p->g, .n = (Node *)n,
		    .opset = model_opset(s->model->m),
		    .fold_limit = INT64_MAX };
	ConvGeom cg;
	if (nn_conv_geom(&c, 0, 1, transpose, &cg) < 0) {
		clear_error();
		return 0;
	}
	if (cg.nsp < 1 || cg.nsp > 3 || cg.group < 1 || cg.cin % cg.group ||
	    cg.cout % cg.group)
		return 0;
	/* bfloat16 gains where a multiply-add reads many channels
	 * (BF16_MIN_K); a depthwise or few-channel convolution is
	 * memory-bound, and its conversion costs more than bfloat16 saves
	 * (det's 14 depthwise 3x3 in bfloat16: 11.8 ms a run against 1.8 in
	 * float32) */
	if (bf16 && cg.cin / cg.group * (cg.nsp ? cg.kernel[0] : 1) <
			    BF16_MIN_K)
		return 0;
	int64_t sd[MAX_RANK], dd[MAX_RANK], wd[MAX_RANK], ws[MAX_RANK];
	bool pad_covers = false;
	/* (Z, which the tail may copy whole, keeps the batch together) */
	int64_t split = z ? 1 : image_split(p, n, &cg);
	ConvDesc cd = { .cg = &cg, .transpose = transpose, .split = split,
			.dt = bf16 ? dnnl_bf16 : dnnl_f32,
			.bias = b != NULL,
			.graph_input = rt_in_val(p, n, 0)->kind == VAL_INPUT };
	dnnl_dim_t *pl = cd.pl, *pr = cd.pr;
	sd[0] = dd[0] = cg.n / split;
	sd[1] = cg.cin, dd[1] = cg.cout;
	for (int a = 0; a < cg.nsp; a++) {
		int64_t ext = (cg.kernel[a] - 1) * cg.dilation[a] + 1;
		sd[2 + a] = cg.in[a];
		dd[2 + a] = cg.out[a];
		cd.strides[a] = cg.stride[a];
		cd.dil[a] = cg.dilation[a] - 1;
		pl[a] = cg.pad[a];
		pr[a] = transpose ? (cg.in[a] - 1) * cg.stride[a] + ext -
					    cg.out[a] - cg.pad[a]
				  : (cg.out[a] - 1) * cg.stride[a] + ext -
					    cg.in[a] - cg.pad[a];
		/* (a pad of the window's extent leaves a row no tap on
		 * the input: padding_only_row finds those too) */
		pad_covers |= transpose ? pl[a] >= ext || pr[a] >= ext
					: padding_only_row(&cg, a);
		/* pr < 0: the last input rows no window reaches (a
		 * stride-2 1x1 convolution of an even size), which oneDNN
		 * takes as negative right padding */
		if (pl[a] < 0 ||
		    pr[a] < (transpose ? 0 : -(cg.stride[a] - 1)))
			return 0;
	}
	int wr = conv_weights(&cg, transpose, wd, ws);
	DnnlKernel *k =
		kernel_new(s, p, rt_conv_flops(&cg, transpose) / (double)split);
	if (!k)
		return 0;
	k->split = split;
	int64_t cout = cg.cout;
	dnnl_memory_desc_t wuser;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_attr_t attr = NULL;
	bool ok = md_make(&cd.src, cg.nsp + 2, sd, NULL) &&
		  md_make(&cd.dst, cg.nsp + 2, dd, NULL) &&
		  md_any(&cd.sany, cg.nsp + 2, sd) &&
		  md_any(&cd.dany, cg.nsp + 2, dd) &&
		  md_any(&cd.wany, wr, wd) && md_make(&wuser, wr, wd, ws) &&
		  md_make(&cd.bmd, 1, &cout, NULL);
	cd.sany.data_type = cd.wany.data_type = cd.dt;
	/* A sum post-op where an output row reads only padding (a pad at
	 * least the window's extent, or a dilated window whose taps step
	 * over the whole input): oneDNN 2.6's brgconv faults with an
	 * eltwise post-op too (SIGSEGV) and adds Z wrongly without one
	 * (-7.02 for -3.69 on such a row): the next row of the registry
	 * takes such a FusedConv. */
	ok = ok && !(z && pad_covers);
	/* Activations as post-ops, but as the tail (make_attr) where the
	 * implementation's post-ops are not the injector's
	 * (injector_post_ops). */
	for (int pass = 0; ok; pass++) {
		attr = make_attr(n, z != NULL, !pass, k);
		pd = attr ? conv_make_pd(&cd, attr) : NULL;
		if (!pd || pass || !k->post_acts || injector_post_ops(pd))
			break;
		dnnl_primitive_desc_destroy(pd);
		dnnl_primitive_attr_destroy(attr);
	}
	ok = ok && pd;
	/* bfloat16 on oneDNN's reference kernel: float32's rows do better */
	ok = ok && (!bf16 || strncmp(impl_of(pd), "ref", 3));
	/* a sum after activations that oneDNN has only its reference
	 * kernel for: the reference kernel row instead */
	ok = ok && (!fused_z_after(n) || strncmp(impl_of(pd), "ref", 3)) &&
	     dnnl_stream_create(&k->stream, engine,
				dnnl_stream_default_flags) == dnnl_success;
	if (ok) {
		conv_prepare(k, &pd, &cd.src, &cd.dst, z != NULL, &wuser,
			     weight_data(w), b, &cd.bmd);
		k->conv->z_shares_y = z && p->vt[n->inputs[3]].data ==
						   p->vt[n->outputs[0]].data &&
				      p->vt[n->outputs[0]].data;
		conv_slots(t, k->conv);
	}
	return done(k, pd, attr, ok, fk);
}

int dnnl_fast_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	return conv_match(s, p, t, fk, false);
}

int dnnl_fast_conv_bf16(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	return t->n->reduced && rt_bf16(s->model) ? conv_match(s, p, t, fk, true)
						  : 0;
}

/* ---- MatMul, Gemm, FusedMatMul, FusedGemm ------------------------------ */

typedef struct MmDesc {
	int rank;
	int64_t a[MAX_RANK], as[MAX_RANK]; /* src dims and strides */
	int64_t b[MAX_RANK], bs[MAX_RANK]; /* weights dims and strides */
	int64_t y[MAX_RANK];
	int64_t c[MAX_RANK]; /* bias dims */
	float alpha, beta;
} MmDesc;

static void row_major(int rank, const int64_t *dims, int64_t *st)
{
	int64_t step = 1;
	for (int i = rank - 1; i >= 0; i--) {
		st[i] = step;
		step *= dims[i] > 0 ? dims[i] : 1;
	}
}

/* Gemm: A, B of rank 2 (transposed by strides), C to (rows, cols). */
static bool gemm_desc(const Node *n, const Value *a, const Value *b,
		      const Value *c, const Value *y, MmDesc *d)
{
	if (a->shape.rank != 2 || b->shape.rank != 2 || y->shape.rank != 2)
		return false;
	bool ta = attr_int(n, "transA", 0), tb = attr_int(n, "transB", 0);
	int64_t m = y->shape.dims[0], nn = y->shape.dims[1];
	int64_t k = ta ? a->shape.dims[0] : a->shape.dims[1];
	d->rank = 2;
	d->a[0] = m, d->a[1] = k;
	d->as[0] = ta ? 1 : k, d->as[1] = ta ? m : 1;
	d->b[0] = k, d->b[1] = nn;
	d->bs[0] = tb ? 1 : nn, d->bs[1] = tb ? k : 1;
	d->y[0] = m, d->y[1] = nn;
	d->alpha = attr_float(n, "alpha", 1.0f);
	d->beta = attr_float(n, "beta", 1.0f);
	if (!c)
		return true;
	if (c->shape.rank > 2)
		return false;
	d->c[0] = c->shape.rank == 2 ? c->shape.dims[0] : 1;
	d->c[1] = c->shape.rank >= 1 ? c->shape.dims[c->shape.rank - 1] : 1;
	return true;
}

/* B's dims (of b_rank) before its last two are all 1: one matrix for
 * every batch of A. */
static bool one_b(const Value *b)
{
	for (int i = 0; i < b->shape.rank - 2; i++)
		if (b->shape.dims[i] != 1)
			return false;
	return true;
}

/* MatMul: both ranks >= 2, batch dims padded with 1s to Y's rank; the
 * bias (FusedMatMul) over the last axis.  Where B is one matrix, A's
 * batch dims join its rows (A and Y are row-major): one [prod M, K] x
 * [K, N] product, not a batch of them; a batch of one-row products
 * (torch's sequence-first [S, 1, E] x [E, 3E] of nn.MultiheadAttention)
 * ran 8x slower in oneDNN than the same rows as one matrix. */
static bool matmul_desc(const Value *a, const Value *b, const Value *c,
			const Value *y, MmDesc *d)
{
	int r = y->shape.rank;
	if (a->shape.rank < 2 || b->shape.rank < 2 || r > MAX_RANK ||
	    a->shape.rank > r || b->shape.rank > r)
		return false;
	if (r > 2 && one_b(b)) {
		int64_t rows = shape_numel(&a->shape) /
			       a->shape.dims[a->shape.rank - 1];
		int64_t k = a->shape.dims[a->shape.rank - 1];
		int64_t n = b->shape.dims[b->shape.rank - 1];
		Value a2 = *a, b2 = *b, y2 = *y;
		a2.shape = shape_of(2, (int64_t[]){ rows, k });
		b2.shape = shape_of(2, (int64_t[]){ k, n });
		y2.shape = shape_of(2, (int64_t[]){ rows, n });
		if (rows > 0 && k > 0)
			return matmul_desc(&a2, &b2, c, &y2, d);
	}
	d->rank = r;
	for (int i = 0; i < r; i++) {
		int ia = i - (r - a->shape.rank), ib = i - (r - b->shape.rank);
		d->a[i] = ia >= 0 ? a->shape.dims[ia] : 1;
		d->b[i] = ib >= 0 ? b->shape.dims[ib] : 1;
		d->y[i] = y->shape.dims[i];
		d->c[i] = 1;
	}
	row_major(r, d->a, d->as);
	row_major(r, d->b, d->bs);
	d->alpha = d->beta = 1.0f;
	if (!c)
		return true;
	int64_t cn = shape_numel(&c->shape);
	if (c->shape.rank < 1 || cn != d->y[r - 1] ||
	    c->shape.dims[c->shape.rank - 1] != cn)
		return false;
	d->c[r - 1] = cn;
	return true;
}

/* beta * C into memory k owns (C constant), or C itself if beta is 1. */
static const void *gemm_bias(DnnlKernel *k, const Value *c, float beta,
			     bool *fixed)
{
	const void *cd = weight_data(c);
	*fixed = cd != NULL;
	if (beta == 1.0f)
		return cd;
	if (!cd)
		return NULL;
	size_t cnt = c->konst->nbytes / sizeof(float);
	float *o = own(k, c->konst->nbytes);
	for (size_t i = 0; o && i < cnt; i++)
		o[i] = beta * ((const float *)cd)[i];
	return o;
}

/* Node n's product as d (Gemm, FusedGemm, MatMul, FusedMatMul): false
 * if its operands are not float32 or its shapes no product oneDNN
 * takes; *c its C or Bias, NULL where a Gemm's beta is 0 (not read). */
static bool mm_of(const Prepared *p, const Node *n, MmDesc *d,
		  const Value **c)
{
	bool gemm = n->op == OP_Gemm || n->op == OP_FusedGemm;
	bool fused = n->op != OP_MatMul && n->op != OP_Gemm;
	const Value *a = rt_in_val(p, n, 0), *b = rt_in_val(p, n, 1);
	const Value *y = &p->g->vals[n->outputs[0]];
	*c = rt_in_val(p, n, 2);
	memset(d, 0, sizeof(*d));
	if (!all_f32(p, n, gemm || fused ? 3 : 2, 2) ||
	    !(gemm ? gemm_desc(n, a, b, *c, y, d)
		   : matmul_desc(a, b, *c, y, d)))
		return false;
	if (gemm && d->beta == 0.0f)
		*c = NULL;
	return true;
}

/* The primitive of desc with n's activations as post-ops, or as the
 * tail where the implementation's post-ops are not the injector's (as
 * dnnl_fast_conv's); *attr its attributes, NULL if none were made. */
static dnnl_primitive_desc_t pd_with_acts(const Node *n, const void *desc,
					  DnnlKernel *k,
					  dnnl_primitive_attr_t *attr)
{
	dnnl_primitive_desc_t pd = NULL;
	for (int pass = 0;; pass++) {
		*attr = make_attr(n, false, !pass, k);
		if (!*attr || dnnl_primitive_desc_create(&pd, desc, *attr,
							 engine, NULL) !=
				      dnnl_success)
			pd = NULL;
		if (!pd || pass || !k->post_acts || injector_post_ops(pd))
			return pd;
		dnnl_primitive_desc_destroy(pd);
		dnnl_primitive_attr_destroy(*attr);
	}
}

/* A MatMul or Gemm on oneDNN: A and B in float32, or (bf16: B a
 * weight) both bfloat16, A converted into a temporary first. */
static int matmul_match(RunCtx *s, Prepared *p, Task *t, FastKernel *fk,
			bool bf16)
{
	if (!usable())
		return 0;
	const Node *n = t->n;
	const Value *c, *y = &p->g->vals[n->outputs[0]];
	MmDesc d;
	if (!mm_of(p, n, &d, &c))
		return 0;
	const void *w = weight_data(rt_in_val(p, n, 1));
	if ((d.alpha != 1.0f && !w) || shape_numel(&y->shape) == 0 ||
	    (bf16 && (!w || d.a[d.rank - 1] < BF16_MIN_K)))
		return 0;
	DnnlKernel *k = kernel_new(s, p, 2.0 * (double)shape_numel(&y->shape) *
					      (double)d.a[d.rank - 1]);
	if (!k)
		return 0;
	k->mm_rank = d.rank;
	bool cfixed = false;
	const void *cdata = c ? gemm_bias(k, c, d.beta, &cfixed) : NULL;
	if (c && d.beta != 1.0f && !cdata)
		return done(k, NULL, NULL, false, fk);
	dnnl_memory_desc_t src, a16, wu, wany, dst, bias;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_matmul_desc_t md;
	bool ok = md_make(&src, d.rank, d.a, d.as) &&
		  md_make(&a16, d.rank, d.a, NULL) &&
		  md_make(&wu, d.rank, d.b, d.bs) &&
		  (w ? md_any(&wany, d.rank, d.b) : (wany = wu, true)) &&
		  md_make(&dst, d.rank, d.y, NULL) &&
		  md_make(&bias, d.rank, d.c, NULL);
	a16.data_type = dnnl_bf16;
	if (bf16)
		wany.data_type = dnnl_bf16;
	ok = ok && dnnl_matmul_desc_init(&md, bf16 ? &a16 : &src, &wany,
					 c ? &bias : NULL,
					 &dst) == dnnl_success;
	pd = ok ? pd_with_acts(n, &md, k, &attr) : NULL;
	/* bfloat16: A converted first, into BIND_TMP 0 */
	k->tmp_bytes[0] = bf16 ? dnnl_memory_desc_get_size(&a16) : 0;
	if (ok && pd && bf16) {
		arena_alloc(k->scratch, tmp_total(k));
		arena_reset(k->scratch);
	}
	ok = ok && pd && (!bf16 || strncmp(impl_of(pd), "ref", 3)) &&
		  dnnl_stream_create(&k->stream, engine,
				     dnnl_stream_default_flags) ==
			  dnnl_success &&
		  (!bf16 || reorder_step(k, &src, BIND_IN, 0, NULL, &a16,
					 BIND_TMP, 0, NULL)) &&
		  finish(k, pd, &wu, w, d.alpha) &&
		  add_arg(k, DNNL_ARG_SRC,
			  bf16 ? &a16 : &src, bf16 ? BIND_TMP : BIND_IN, 0,
			  NULL) == 0 &&
		  (w || add_arg(k, DNNL_ARG_WEIGHTS, &wu, BIND_IN, 1, NULL) ==
				0) &&
		  (!c || add_arg(k, DNNL_ARG_BIAS, &bias,
				 cfixed ? BIND_FIXED : BIND_IN, 2, cdata) ==
				 0) &&
		  add_arg(k, DNNL_ARG_DST, &dst, BIND_OUT, 0, NULL) == 0;
	return done(k, pd, attr, ok, fk);
}

int dnnl_fast_matmul(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	return matmul_match(s, p, t, fk, false);
}

/* A MatMul or Gemm of rows by constant weights on AVX2 as oneDNN's 1x1
 * convolution: A [M, K] row-major is X [1, K, 1, M] channels-last, Y
 * [M, N] is Y [1, N, 1, M] likewise, W [N, K, 1, 1] by W's strides,
 * reordered once.  There oneDNN's jit_1x1:avx2 ran a transformer's
 * products 1.2-1.5x faster than runtime/gemv.c's tiles (128 x 768 by
 * 768 x 3072: 6.7 ms against 10.0, one thread, AMD EPYC), which in turn
 * beat its matmul (sgemm).  Only rows of a whole matrix (M >=
 * MMCONV_MIN_M), C a row of N (a convolution's bias: not one value
 * broadcast), and the jit_1x1 kernel; else the rows below take it. */
enum { MMCONV_MIN_M = 16 };
int64_t rt_mmconv_min_m = MMCONV_MIN_M;

int dnnl_fast_matmul_conv(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	if (!usable() || !RT_X86 || cpu_isa() != CPU_LEVEL_AVX2)
		return 0;
	const Node *n = t->n;
	const Value *c;
	MmDesc d;
	if (!mm_of(p, n, &d, &c))
		return 0;
	const void *w = weight_data(rt_in_val(p, n, 1));
	int64_t m = d.a[0], kk = d.a[1], nn = d.b[1];
	if (d.rank != 2 || !w || m < rt_mmconv_min_m || kk < 1 || nn < 1 ||
	    d.as[1] != 1 || d.as[0] != kk ||
	    (c && (d.c[0] != 1 || d.c[1] != nn)))
		return 0;
	DnnlKernel *k = kernel_new(s, p, 2.0 * (double)(m * nn * kk));
	if (!k)
		return 0;
	bool cfixed = false;
	const void *cdata = c ? gemm_bias(k, c, d.beta, &cfixed) : NULL;
	if (c && d.beta != 1.0f && !cdata)
		return done(k, NULL, NULL, false, fk);
	int64_t sd[4] = { 1, kk, 1, m }, ss[4] = { m * kk, 1, m * kk, kk };
	int64_t dd[4] = { 1, nn, 1, m }, ds[4] = { m * nn, 1, m * nn, nn };
	int64_t wd[4] = { nn, kk, 1, 1 }, ws[4] = { d.bs[1], d.bs[0], 1, 1 };
	dnnl_dims_t one = { 1, 1 }, zero = { 0, 0 };
	dnnl_memory_desc_t src, dst, wu, wany, bias;
	dnnl_convolution_desc_t cd;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_attr_t attr = NULL;
	bool ok = md_make(&src, 4, sd, ss) && md_make(&dst, 4, dd, ds) &&
		  md_make(&wu, 4, wd, ws) && md_any(&wany, 4, wd) &&
		  md_make(&bias, 1, &nn, NULL) &&
		  dnnl_dilated_convolution_forward_desc_init(
			  &cd, dnnl_forward_inference, dnnl_convolution_direct,
			  &src, &wany, c ? &bias : NULL, &dst, one, zero, zero,
			  zero) == dnnl_success;
	pd = ok ? pd_with_acts(n, &cd, k, &attr) : NULL;
	ok = ok && pd && !strncmp(impl_of(pd), "jit_1x1", 7) &&
	     dnnl_stream_create(&k->stream, engine,
				dnnl_stream_default_flags) == dnnl_success &&
	     finish(k, pd, &wu, w, d.alpha) &&
	     add_arg(k, DNNL_ARG_SRC, &src, BIND_IN, 0, NULL) == 0 &&
	     (!c || add_arg(k, DNNL_ARG_BIAS, &bias,
			    cfixed ? BIND_FIXED : BIND_IN, 2, cdata) == 0) &&
	     add_arg(k, DNNL_ARG_DST, &dst, BIND_OUT, 0, NULL) == 0;
	return done(k, pd, attr, ok, fk);
}

int dnnl_fast_matmul_bf16(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	return t->n->reduced && rt_bf16(s->model)
		       ? matmul_match(s, p, t, fk, true)
		       : 0;
}

/* ---- MaxPool, AveragePool, GlobalAveragePool ---------------------------- */

static int64_t ints_at(const Node *n, const char *name, int i, int64_t dflt)
{
	const int64_t *v;
	int32_t cnt = attr_ints(n, name, &v);
	return i < cnt ? v[i] : dflt;
}

/* The primitive descriptor of xs's operation in its tensors' layout. */
static bool xy_pd(const XySpec *xs, dnnl_primitive_attr_t attr,
		  dnnl_primitive_desc_t *pd)
{
	dnnl_memory_desc_t src, dst, t;
	dnnl_pooling_v2_desc_t pool;
	dnnl_resampling_desc_t rs;
	bool ok = md_make(&src, xs->rank, xs->x, NULL) &&
		  md_make(&dst, xs->rank, xs->y, NULL);
	if (ok && xs->nhwc)
		ok = md_nhwc(&t, &src) && (src = t, md_nhwc(&t, &dst)) &&
		     (dst = t, true);
	if (ok && xs->resample)
		ok = dnnl_resampling_forward_desc_init(
			     &rs, dnnl_forward_inference, xs->alg, NULL, &src,
			     &dst) == dnnl_success;
	else if (ok)
		ok = dnnl_pooling_v2_forward_desc_init(
			     &pool, dnnl_forward_inference, xs->alg, &src,
			     &dst, xs->strides, xs->ker, xs->dil, xs->pl,
			     xs->pr) == dnnl_success;
	return ok &&
	       dnnl_primitive_desc_create(pd, xs->resample ? (void *)&rs
							     : (void *)&pool,
					  attr, engine, NULL) == dnnl_success;
}

/* The build of a pooling or resampling: its primitive, in its tensors'
 * layout. */
int dnnl_xy_build(RunCtx *s, Prepared *p, Task *t)
{
	(void)s;
	DnnlKernel *k = t->fast.state;
	k->xy->nhwc = rt_nhwc(p, t->n->outputs[0]);
	rt_pool_threads(k->threads);
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_attr_t attr = make_attr(k->xy->n, false, true, k);
	bool ok = attr && xy_pd(k->xy, attr, &pd) &&
		  (name_impl(k, pd), finish(k, pd, NULL, NULL, 1.0f)) &&
		  add_arg(k, DNNL_ARG_SRC,
			  dnnl_primitive_desc_query_md(pd, dnnl_query_src_md,
						       0),
			  BIND_IN, 0, NULL) == 0 &&
		  add_arg(k, DNNL_ARG_DST,
			  dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md,
						       0),
			  BIND_OUT, 0, NULL) == 0;
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ok ? 0 : error("oneDNN refused the %s",
			      k->xy->resample ? "resampling" : "pooling");
}

/* A kernel for xs (its x, y, rank, alg set here from task t's X and Y),
 * if oneDNN takes it: the primitive waits for dnnl_xy_build.  X and Y
 * share a layout; rank 4 may be NHWC. */
static int xy_kernel(RunCtx *s, Task *t, const Value *x,
		     const Value *y, XySpec *xs, double work, FastKernel *fk)
{
	const Node *n = t->n;
	DnnlKernel *k = kernel_new(s, NULL, work); /* no weights */
	if (!k) {
		free(xs);
		return 0;
	}
	k->xy = xs;
	xs->n = n;
	xs->rank = x->shape.rank;
	memcpy(xs->x, x->shape.dims, sizeof(xs->x));
	memcpy(xs->y, y->shape.dims, sizeof(xs->y));
	dnnl_primitive_desc_t pd = NULL; /* whether oneDNN takes it */
	dnnl_primitive_attr_t attr = make_attr(n, false, true, k);
	bool ok = attr && xy_pd(xs, attr, &pd) &&
		  dnnl_stream_create(&k->stream, engine,
				     dnnl_stream_default_flags) ==
			  dnnl_success;
	if (ok && xs->rank == 4) {
		/* NHWC too only if oneDNN takes it so (its build makes the
		 * primitive in the layout decided: a refusal there would be
		 * an error, not the next row; oneDNN 2.6 refused a
		 * resampling on a CPU without SSE4.1) */
		dnnl_primitive_desc_t nhwc = NULL;
		xs->nhwc = true;
		bool either = xy_pd(xs, attr, &nhwc);
		xs->nhwc = false;
		if (nhwc)
			dnnl_primitive_desc_destroy(nhwc);
		rt_task_slots(t);
		if (either)
			rt_slot(t, 0)->group = rt_slot(t, -1)->group = 1;
	}
	return done(k, pd, attr, ok, fk);
}

int dnnl_fast_pool(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	if (!usable())
		return 0;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	bool global = n->op == OP_GlobalAveragePool;
	bool incl = attr_int(n, "count_include_pad", 0) != 0;
	const char *ap = attr_str(n, "auto_pad", "NOTSET");
	bool notset = !strcmp(ap, "NOTSET"), same = !strncmp(ap, "SAME_", 5);
	if (!all_f32(p, n, 1, 1) || x->shape.rank < 3 || x->shape.rank > 5 ||
	    y->shape.rank != x->shape.rank || shape_numel(&y->shape) == 0)
		return 0;
	int nsp = x->shape.rank - 2;
	const int64_t *ks;
	if (!global && (attr_ints(n, "kernel_shape", &ks) != nsp ||
			(!notset && !same && strcmp(ap, "VALID"))))
		return 0;
	dnnl_dims_t strides, ker, dil, pl, pr;
	for (int a = 0; a < nsp; a++) {
		int64_t in = x->shape.dims[2 + a], out = y->shape.dims[2 + a];
		int64_t k = global ? in : ints_at(n, "kernel_shape", a, 1);
		int64_t st = global ? 1 : ints_at(n, "strides", a, 1);
		int64_t dl = global ? 1 : ints_at(n, "dilations", a, 1);
		int64_t ext = (k - 1) * dl + 1;
		int64_t total = (out - 1) * st + ext - in;
		int64_t pb = notset ? ints_at(n, "pads", a, 0) : 0;
		int64_t pe = notset ? ints_at(n, "pads", nsp + a, 0) : 0;
		if (global)
			pb = 0;
		else if (same && total > 0)
			pb = !strcmp(ap, "SAME_UPPER") ? total / 2
						       : total - total / 2;
		strides[a] = st, ker[a] = k, dil[a] = dl - 1;
		pl[a] = pb, pr[a] = total - pb;
		if (pl[a] < 0 || pr[a] < 0 ||
		    (incl && n->op == OP_AveragePool &&
		     (!notset || pr[a] > pe)))
			return 0;
	}
	double work = (double)shape_numel(&y->shape);
	for (int a = 0; a < nsp; a++)
		work *= (double)ker[a];
	XySpec *xs = xmalloc(sizeof(*xs));
	memset(xs, 0, sizeof(*xs));
	xs->alg = n->op == OP_MaxPool ? dnnl_pooling_max
		  : incl	      ? dnnl_pooling_avg_include_padding
				      : dnnl_pooling_avg_exclude_padding;
	memcpy(xs->strides, strides, sizeof(strides));
	memcpy(xs->ker, ker, sizeof(ker));
	memcpy(xs->dil, dil, sizeof(dil));
	memcpy(xs->pl, pl, sizeof(pl));
	memcpy(xs->pr, pr, sizeof(pr));
	return xy_kernel(s, t, x, y, xs, work, fk);
}

/* ---- Resize ---------------------------------------------------------- */

/* Resize's scale of axis a, from its constant scales (or, given sizes,
 * Y over X); 0 if not known. */
static double resize_scale(const Prepared *p, const Node *n, const Value *x,
			   const Value *y, int a)
{
	const Value *sc = rt_in_val(p, n, 2);
	if (!sc || !shape_numel(&sc->shape))
		return (double)y->shape.dims[a] / (double)x->shape.dims[a];
	const float *f = weight_data(sc);
	return f && is_f32(sc) && shape_numel(&sc->shape) == x->shape.rank
		       ? f[a]
		       : 0;
}

/* Linear Resize of the spatial axes whose coordinates oneDNN's
 * resampling computes as ONNX does: half_pixel (or pytorch_half_pixel
 * with no spatial output length of 1) and each axis's scale exactly Y
 * over X (sizes given, or scales that are those ratios); N and C
 * unscaled. */
bool dnnl_resize_linear(const RunCtx *s, const Prepared *p,
			const Node *n)
{
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	const char *ct = attr_str(n, "coordinate_transformation_mode",
				  "half_pixel");
	bool pytorch = !strcmp(ct, "pytorch_half_pixel");
	if (model_opset(s->model->m) < 11 || !all_f32(p, n, 1, 1) ||
	    x->shape.rank < 3 || x->shape.rank > 5 ||
	    y->shape.rank != x->shape.rank || !shape_numel(&y->shape) ||
	    strcmp(attr_str(n, "mode", "nearest"), "linear") ||
	    (strcmp(ct, "half_pixel") && !pytorch) ||
	    node_attr(n, "axes") || attr_int(n, "antialias", 0) ||
	    node_attr(n, "keep_aspect_ratio_policy"))
		return false;
	for (int a = 0; a < x->shape.rank; a++) {
		int64_t in = x->shape.dims[a], out = y->shape.dims[a];
		if ((a < 2 && in != out) || (a >= 2 && pytorch && out == 1) ||
		    resize_scale(p, n, x, y, a) != (double)out / (double)in)
			return false;
	}
	return true;
}

int dnnl_fast_resize(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	if (!usable())
		return 0;
	const Node *n = t->n;
	const Value *x = rt_in_val(p, n, 0);
	const Value *y = &p->g->vals[n->outputs[0]];
	if (!dnnl_resize_linear(s, p, n))
		return 0;
	XySpec *xs = xmalloc(sizeof(*xs));
	memset(xs, 0, sizeof(*xs));
	xs->resample = true;
	xs->alg = dnnl_resampling_linear;
	return xy_kernel(s, t, x, y, xs,
			 4.0 * (double)shape_numel(&y->shape), fk);
}

/* ---- LSTM, GRU, RNN ------------------------------------------------------ */

/* ONNX's gate of each oneDNN gate: LSTM's i, f, c, o from ONNX's i, o, f,
 * c; GRU's u(z), r, c(h) and RNN's one gate in ONNX's order. */
static const int lstm_gates[4] = { 0, 2, 3, 1 };
static const int same_gates[3] = { 0, 1, 2 };

/* The activations attribute, if any, names the defaults: oneDNN's cells
 * have those alone. */
static bool default_acts(const Node *n)
{
	static const char *const lstm[] = { "Sigmoid", "Tanh", "Tanh" };
	static const char *const gru[] = { "Sigmoid", "Tanh" };
	static const char *const rnn[] = { "Tanh" };
	const char *const *want = n->op == OP_LSTM ? lstm
				  : n->op == OP_GRU ? gru : rnn;
	int32_t per = n->op == OP_LSTM ? 3 : n->op == OP_GRU ? 2 : 1;
	const Attr *a = node_attr(n, "activations");
	if (!a)
		return true;
	if (a->type != ATTR_STRINGS || a->n != per)
		return false;
	for (int32_t i = 0; i < per; i++)
		if (strlen(want[i]) != a->strings[i].len ||
		    strncasecmp(want[i], (const char *)a->strings[i].data,
				a->strings[i].len))
			return false;
	return true;
}

/* sequence_lens absent, or constant and every sequence whole. */
static bool whole_sequences(const Value *sl, int64_t T)
{
	if (!sl)
		return true;
	const Tensor *t = sl->kind == VAL_WEIGHT ? sl->konst : NULL;
	if (!t || t->dtype != DT_INT32)
		return false;
	for (int64_t i = 0; i < shape_numel(&t->shape); i++)
		if (((const int32_t *)t->data)[i] != T)
			return false;
	return true;
}

/* What oneDNN's cells compute: forward, reverse or bidirectional (*D
 * directions), the default activations, no clip, coupled gates,
 * peepholes or sequence_lens, layout 0, fp32, constant weights. */
static bool rnn_fits(const Prepared *p, const Node *n, int64_t *T, int64_t *B,
		     int64_t *I, int64_t *H, int64_t *D)
{
	const char *dir = attr_str(n, "direction", "forward");
	*D = strcmp(dir, "bidirectional") ? 1 : 2;
	int nin = n->op == OP_LSTM ? 8 : 6;
	for (int i = 0; i < nin; i++) {
		const Value *v = rt_in_val(p, n, i);
		if (i != 4 && v && !is_f32(v))
			return false;
	}
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0 && !is_f32(&p->g->vals[n->outputs[k]]))
			return false;
	const Value *x = rt_in_val(p, n, 0), *r = rt_in_val(p, n, 2);
	if (!x || !r || !weight_data(rt_in_val(p, n, 1)) || !weight_data(r) ||
	    (rt_in_val(p, n, 3) && !weight_data(rt_in_val(p, n, 3))) ||
	    (n->op == OP_LSTM && rt_in_val(p, n, 7)) || x->shape.rank != 3 ||
	    r->shape.rank != 3 || r->shape.dims[0] != *D ||
	    node_attr(n, "clip") ||
	    attr_int(n, "input_forget", 0) || attr_int(n, "layout", 0) ||
	    !default_acts(n))
		return false;
	*T = x->shape.dims[0], *B = x->shape.dims[1], *I = x->shape.dims[2];
	*H = r->shape.dims[2];
	return *T > 0 && *B > 0 && *I > 0 && *H > 0 &&
	       whole_sequences(rt_in_val(p, n, 4), *T);
}

/* ONNX's W or R ([D, G*H, K]) as oneDNN's ldigo [1, D, K, G, H] in its
 * gate order; malloc'd. */
static float *rnn_weights(const float *w, int64_t D, int64_t G, int64_t H,
			  int64_t K, const int *gate)
{
	float *o = malloc((size_t)(D * G * H * K) * sizeof(float) + 1);
	for (int64_t d = 0; o && d < D; d++) {
		const float *wd = w + d * G * H * K;
		float *od = o + d * G * H * K;
		for (int64_t g = 0; g < G; g++)
			for (int64_t h = 0; h < H; h++)
				for (int64_t k = 0; k < K; k++)
					od[(k * G + g) * H + h] =
						wd[(gate[g] * H + h) * K + k];
	}
	return o;
}

/* ONNX's B ([D, 2*G*H]: Wb then Rb per direction; NULL: zeros) as
 * oneDNN's ldgo bias [1, D, Gb, H]: Wb + Rb per gate, except that
 * linear-before-reset GRU keeps the h gate's Rb apart as a fourth gate.
 * malloc'd. */
static float *rnn_bias(const float *b, int64_t D, int64_t G, int64_t H,
		       const int *gate, bool lbr)
{
	int64_t Gb = G + lbr;
	float *o = calloc((size_t)(D * Gb * H) + 1, sizeof(float));
	for (int64_t d = 0; o && b && d < D; d++) {
		const float *bd = b + d * 2 * G * H;
		float *od = o + d * Gb * H;
		for (int64_t g = 0; g < G; g++)
			for (int64_t h = 0; h < H; h++) {
				float wb = bd[gate[g] * H + h];
				float rb = bd[(G + gate[g]) * H + h];
				bool apart = lbr && g == 2;
				od[g * H + h] = apart ? wb : wb + rb;
				if (apart)
					od[3 * H + h] = rb;
			}
	}
	return o;
}

/* The operation descriptor of n's cell over the given descriptors. */
static bool rnn_desc(const Node *n, bool lbr, dnnl_rnn_desc_t *d,
		     dnnl_rnn_direction_t dir, const dnnl_memory_desc_t *md)
{
	const dnnl_memory_desc_t *x = &md[0], *h = &md[1], *c = &md[2];
	const dnnl_memory_desc_t *wl = &md[3], *wi = &md[4], *b = &md[5];
	const dnnl_memory_desc_t *y = &md[6], *yh = &md[7], *yc = &md[8];
	dnnl_prop_kind_t pk = dnnl_forward_inference;
	dnnl_status_t rc =
		n->op == OP_LSTM
			? dnnl_lstm_forward_desc_init(d, pk, dir, x, h, c, wl,
						      wi, b, y, yh, yc, 0)
		: n->op == OP_RNN
			? dnnl_vanilla_rnn_forward_desc_init(
				  d, pk, dnnl_eltwise_tanh, dir, x, h, wl, wi,
				  b, y, yh, 0, 0.0f, 0.0f)
		: lbr ? dnnl_lbr_gru_forward_desc_init(d, pk, dir, x, h, wl,
						       wi, b, y, yh, 0)
		      : dnnl_gru_forward_desc_init(d, pk, dir, x, h, wl, wi,
						   b, y, yh, 0);
	return rc == dnnl_success;
}

/* The memory pd wants for execute argument arg. */
static const dnnl_memory_desc_t *arg_want(const_dnnl_primitive_desc_t pd,
					  int arg)
{
	return dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
}

/* Constant user data (layout from, malloc'd: freed here) reordered into
 * what pd wants for arg and bound to it. */
static bool rnn_const(DnnlKernel *k, const_dnnl_primitive_desc_t pd, int arg,
		      const dnnl_memory_desc_t *from, float *data)
{
	const dnnl_memory_desc_t *to = arg_want(pd, arg);
	void *buf = data && to ? reorder_const(k, from, data, to, 1.0f) : NULL;
	free(data);
	return buf && add_arg(k, arg, to, BIND_FIXED, 0, buf) == 0;
}

/* Input i of n bound as arg if present. */
static bool rnn_in(DnnlKernel *k, const Prepared *p, const Node *n, int i,
		   int arg, const dnnl_memory_desc_t *md)
{
	const Value *v = rt_in_val(p, n, i);
	return !v || bind_input(k, arg, md, v, i) == 0;
}

/* Output i of n bound as arg if wanted. */
static bool rnn_out(DnnlKernel *k, const Node *n, int i, int arg,
		    const dnnl_memory_desc_t *md)
{
	return i >= n->noutputs || n->outputs[i] < 0 ||
	       add_arg(k, arg, md, BIND_OUT, i, NULL) == 0;
}

/* Y of a bidirectional cell: oneDNN writes the directions side by side,
 * [T, B, 2, H] (bidirectional_concat), into temporary 1; a reorder step
 * puts them in ONNX's [T, 2, B, H]. */
static bool rnn_concat_out(DnnlKernel *k, int64_t T, int64_t B, int64_t H)
{
	const int64_t d[4] = { T, B, 2, H };
	const int64_t onnx[4] = { 2 * B * H, H, B * H, 1 };
	dnnl_memory_desc_t from, to;
	k->tmp_bytes[1] = (size_t)(T * B * 2 * H) * sizeof(float);
	return md_make(&from, 4, d, NULL) && md_make(&to, 4, d, onnx) &&
	       reorder_step(k, &from, BIND_TMP, 1, NULL, &to, BIND_OUT, 0,
			    NULL);
}

int dnnl_fast_rnn(RunCtx *s, Prepared *p, Task *t, FastKernel *fk)
{
	if (!usable())
		return 0;
	const Node *n = t->n;
	int64_t T, B, I, H, D;
	if (!rnn_fits(p, n, &T, &B, &I, &H, &D))
		return 0;
	bool lstm = n->op == OP_LSTM;
	bool lbr = n->op == OP_GRU && attr_int(n, "linear_before_reset", 0);
	int64_t G = lstm ? 4 : n->op == OP_GRU ? 3 : 1;
	const int *gate = lstm ? lstm_gates : same_gates;
	bool has_c = lstm && rt_in_val(p, n, 6);
	bool want[3];
	for (int i = 0; i < 3; i++)
		want[i] = i < n->noutputs && n->outputs[i] >= 0 &&
			  (i < 2 || lstm);
	dnnl_rnn_direction_t dir =
		D == 2 ? dnnl_bidirectional_concat
		: !strcmp(attr_str(n, "direction", "forward"), "reverse")
			? dnnl_unidirectional_right2left
			: dnnl_unidirectional_left2right;
	const int64_t xd[3] = { T, B, I }, sd[4] = { 1, D, B, H };
	const int64_t wld[5] = { 1, D, I, G, H }, wid[5] = { 1, D, H, G, H };
	const int64_t bd[4] = { 1, D, G + lbr, H }, yd[3] = { T, B, D * H };
	/* x, h0, c0, W, R, B, y, y_h, y_c; zero: absent */
	dnnl_memory_desc_t md[9], wl_any, wi_any;
	memset(md, 0, sizeof(md));
	bool ok = md_make(&md[0], 3, xd, NULL) &&
		  (!rt_in_val(p, n, 5) || md_make(&md[1], 4, sd, NULL)) &&
		  (!has_c || md_make(&md[2], 4, sd, NULL)) &&
		  md_make(&md[3], 5, wld, NULL) &&
		  md_make(&md[4], 5, wid, NULL) &&
		  md_make(&md[5], 4, bd, NULL) && md_make(&md[6], 3, yd, NULL) &&
		  (!want[1] || md_make(&md[7], 4, sd, NULL)) &&
		  (!want[2] || md_make(&md[8], 4, sd, NULL)) &&
		  md_any(&wl_any, 5, wld) && md_any(&wi_any, 5, wid);
	if (!ok)
		return 0;
	dnnl_memory_desc_t user_w = md[3], user_r = md[4];
	md[3] = wl_any, md[4] = wi_any;
	dnnl_rnn_desc_t d;
	if (!rnn_desc(n, lbr, &d, dir, md))
		return 0;
	/* the work of one time step: the steps run one after another */
	DnnlKernel *k = kernel_new(s, p, 2.0 * (double)(B * G * H) *
					      (double)(I + H));
	if (!k)
		return 0;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_attr_t attr = make_attr(n, false, true, k);
	const Value *bv = rt_in_val(p, n, 3);
	const dnnl_memory_desc_t *sp = NULL;
	ok = attr &&
	     dnnl_primitive_desc_create(&pd, &d, attr, engine, NULL) ==
		     dnnl_success &&
	     dnnl_stream_create(&k->stream, engine,
				dnnl_stream_default_flags) == dnnl_success &&
	     step_new(k, pd) &&
	     rnn_const(k, pd, DNNL_ARG_WEIGHTS_LAYER, &user_w,
		       rnn_weights(weight_data(rt_in_val(p, n, 1)), D, G, H,
				   I, gate)) &&
	     rnn_const(k, pd, DNNL_ARG_WEIGHTS_ITER, &user_r,
		       rnn_weights(weight_data(rt_in_val(p, n, 2)), D, G, H,
				   H, gate)) &&
	     rnn_const(k, pd, DNNL_ARG_BIAS, &md[5],
		       rnn_bias(bv ? weight_data(bv) : NULL, D, G, H, gate,
				lbr)) &&
	     rnn_in(k, p, n, 0, DNNL_ARG_SRC_LAYER, &md[0]) &&
	     rnn_in(k, p, n, 5, DNNL_ARG_SRC_ITER, &md[1]) &&
	     (!has_c || rnn_in(k, p, n, 6, DNNL_ARG_SRC_ITER_C, &md[2])) &&
	     (D == 2 ? add_arg(k, DNNL_ARG_DST_LAYER, &md[6], BIND_TMP, 1,
			       NULL) == 0
		     : rnn_out(k, n, 0, DNNL_ARG_DST_LAYER, &md[6])) &&
	     (!want[1] || rnn_out(k, n, 1, DNNL_ARG_DST_ITER, &md[7])) &&
	     (!want[2] || rnn_out(k, n, 2, DNNL_ARG_DST_ITER_C, &md[8]));
	if (ok && (sp = arg_want(pd, DNNL_ARG_SCRATCHPAD)) &&
	    dnnl_memory_desc_get_size(sp)) {
		void *buf = own(k, dnnl_memory_desc_get_size(sp));
		ok = buf && add_arg(k, DNNL_ARG_SCRATCHPAD, sp, BIND_FIXED, 0,
				    buf) == 0;
	}
	if (ok && D == 2) /* Y is planned: fast.c's fast_allowed */
		ok = rnn_concat_out(k, T, B, H);
	return done(k, pd, attr, ok, fk);
}

bool dnnl_fast_info(const FastKernel *fk, DnnlInfo *info)
{
	const DnnlKernel *k = fk->run == kernel_run ? fk->state : NULL;
	memset(info, 0, sizeof(*info));
	if (!k)
		return false;
	info->images = k->split;
	info->impl = k->conv ? k->conv->impl : "";
	info->weights = k->weights;
	info->x_in = k->conv && conv_reorders(k->conv, CONV_X);
	info->y_out = k->conv && conv_reorders(k->conv, CONV_Y);
	info->tail = k->tail ? k->tail->n : 0;
	info->mm_rank = k->mm_rank;
	return true;
}
