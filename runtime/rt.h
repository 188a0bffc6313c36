/*
 * runtime/rt.h - libgearrt's insides (private; users include gearrt.h).
 *
 *   model.c    opening a .om: the checked reader, `gearc verify`'s
 *              checks on the file raised to IR once (a gear's branch
 *              checked before its first run); describing inputs,
 *              outputs, gears;
 *   exec.c     one static graph made runnable for one session (the task
 *              sink of GE's static executor) and a run of it;
 *   session.c  sessions, gear selection, argument checks, gearrt_run;
 *   hybrid.c   a hybrid file's dynamic graph specialised per input dims,
 *              and the per-session cache of those specialisations;
 *   strings.c  string tensors between the API's char * and the IR's
 *              Bytes.
 *
 * A Prepared graph is built on a session's first run of that graph and
 * kept: every value gets a Tensor whose data is resolved once (a weight in
 * the mapped file, a block of the session's arena at the plan's offset,
 * or, for the graph's inputs and outputs, the caller's buffer, refreshed
 * per run) and whose layout (row-major, or NHWC between kernels that
 * take it) runtime/layout.c decides, and every node a Task: its kernel
 * (a row of the kernel registry, runtime/fast.c: a fast path, or the op
 * table's run hook) and its input and output tensors.  A node whose
 * kernel needs shapes at run time (no run hook: If, Loop, Scan; or an
 * output the plan left out, its shape depending on data) runs by
 * evaluation (the registry's last row, passes/runspec.h runspec_node) and its
 * outputs live in the session's pool, reset per run.
 */
#ifndef GEARC_RT_H
#define GEARC_RT_H

#include <pthread.h>
#include <stdatomic.h>

#include "compiler/cpu.h"
#include "compiler/ops/opimpl.h"
#include "passes/runspec.h"
#include "runtime/gearrt.h"
#include "runtime/pool.h"
#include "serializer/om.h"
#include "serializer/raise.h"

/* A run context (below): what one run writes; a session holds a pool of
 * them (session.c). */
typedef struct RunCtx RunCtx;

struct gearrt_model {
	OmFile f;
	Model *m;
	size_t nin, nout;
	gearrt_tensor *in_info, *out_info; /* -1 at gear dims */
	size_t ngears;
	Graph **run_graph; /* per gear (or [0] for a static compile) */
	uint64_t arena_bytes;  /* the largest plan of a graph that runs */
	const Graph *dynamic;  /* a hybrid file's dynamic graph, or NULL */
	/* Value specialisation (hybrid.c): per input, whether its contents
	 * key a specialisation; per run_graph entry, whether it runs
	 * specialised to them (an evaluated node of it reads one). */
	bool *value_key;
	bool *by_value;
	/* Per gear: 0 until its branch is raised and checked (model.c's
	 * rt_check_gear, before its first run; by_value is set then), then
	 * 1, or -1 with gear_error; lock serialises the check between
	 * sessions. */
	atomic_schar *gear_checked;
	char **gear_error;
	OmRaise *lazy; /* what the gears' checks raise them with */
	char *path;
	char model_version[24]; /* the source's, decimal (gearrt_model_meta) */
	ConstWork cw;	/* work on weights done once (constwork_raised, rt_check_gear) */
	double open_ms; /* what gearrt_model_open took (the profile prints it) */
	pthread_mutex_t lock;
	/* Weights of the file reordered into oneDNN's layouts, shared by
	 * the model's sessions and gears (runtime/dnnl.c, under lock). */
	struct DnnlShared *dnnl;
	/* Weights the plain-C kernels derive from the file's (rt_derived),
	 * under lock. */
	struct Derived *derived;
};

/* Whether g is one of md's graphs (a gear's, the root), whose weights
 * live as long as md; a specialisation's may not outlive a session. */
bool rt_model_graph(const gearrt_model *md, const Graph *g);


/* How a fast kernel takes the layout of one of its tensors, as its
 * row's match records it (Task.lay) for runtime/layout.c: group 0 if the
 * slot's rank-4 tensor must stay row-major, else a number (1..7) shared
 * by the slots that must have one layout (an input and the output
 * overwriting it, say); prefers if channels-last (NHWC) spares the
 * kernel a reorder.  A slot is input k (k >= 0) or output k (-1 - k) of
 * the node. */
typedef struct SlotLayout {
	uint8_t group;
	bool prefers;
} SlotLayout;

/* A fast path for one node, chosen when its gear is prepared
 * (runtime/fast.c): run(state, in, out) computes the node's outputs into
 * out[k]->data from in[k] (whose data pointers may change between runs:
 * graph inputs and outputs are the caller's buffers); free(state) when
 * the session goes. */
struct Task;
struct Prepared;

typedef struct FastKernel {
	int (*run)(void *state, const Tensor *const *in, Tensor *const *out);
	void (*free)(void *state);
	void *state;
	int threads; /* the threads a run uses (0: one) */
	/* Which variant of the row's kernel runs (its ISA: "avx2", oneDNN's
	 * implementation: "brg:avx512_core"), or NULL: the profile names
	 * the kernel row.variant (rt_kernel_name).  Static, or in state. */
	const char *variant;
} FastKernel;

/* The kernel registry (runtime/fast.c): ordered rows, each a way to run
 * a node.  A gear is prepared in three stages: every task is matched
 * (the first row whose op and input-0 dtype match and whose match takes
 * the node at its planned shapes runs it), then runtime/layout.c decides
 * each tensor's layout from what the matches recorded, then every row's
 * build makes what depends on those layouts, once.  The reference
 * kernels (the op table's run hook) and evaluation are the last rows.
 * A row's name ("direct.conv", "dnnl.conv", "ref", "eval") is what the
 * profiler prints and tests ask about (rt_kernel_name). */
typedef enum KernelBackend {
	KB_PLAIN,     /* plain C: runtime/direct.c, chanwise.c, quant.c, ... */
	KB_DNNL,      /* oneDNN: runtime/dnnl.c */
	KB_REFERENCE, /* the op's run hook on planned buffers */
	KB_EVAL,      /* passes/infer.c eval_node, shapes known at run time */
} KernelBackend;

/* The layouts a row's kernel takes its rank-4 tensors in (layout.c):
 * LAY_ROWS alone keeps every tensor it touches row-major; LAY_NHWC, its
 * match records per slot which may be channels-last (rt_task_slots), or,
 * recording none, it is elementwise (element i from element i, in any
 * order: layout.c gives its tensors one layout). */
enum { LAY_ROWS = 1, LAY_NHWC = 2 };

/* Match: whether the row takes task t at its planned shapes; if so it
 * fills *k (what does not depend on layouts: a oneDNN primitive's
 * descriptor, not the primitive) and, taking NHWC, records its slots'
 * layouts (rt_task_slots).  1 if it takes t, 0 if not (nothing kept),
 * -1 with an error. */
typedef int (*KernelMatch)(RunCtx *s, struct Prepared *p,
			   struct Task *t, FastKernel *k);
/* Build, or NULL: once every tensor's layout is decided (rt_nhwc),
 * makes what depends on them in t->fast.state (primitives, reorders);
 * 0, or -1 with an error. */
typedef int (*KernelBuild)(RunCtx *s, struct Prepared *p,
			   struct Task *t);

typedef struct KernelRow {
	int op;		  /* OP_..., or KR_ANY_OP */
	KernelBackend backend;
	uint32_t dtypes;  /* input 0's dtypes (KR_DT(DT_...) bits), 0: any */
	uint8_t layouts;  /* LAY_ROWS, LAY_NHWC */
	KernelMatch match;
	KernelBuild build;
	const char *name;
} KernelRow;

#define KR_ANY_OP (-1)
#define KR_DT(d) (1u << (d))

typedef struct Task {
	const Node *n;
	const KernelRow *kernel; /* the row running it (rt_kernel_choose) */
	char name[48];		 /* its name and variant (rt_kernel_name) */
	FastKernel fast;	 /* a plain-C or oneDNN row's kernel */
	/* Per slot (rt_slot), the layouts its kernel takes, or NULL: every
	 * tensor row-major, or an elementwise kernel (LAY_NHWC above). */
	SlotLayout *lay;
	/* A sequence op (rt.h top): its kernel may publish outputs the plan
	 * does not hold (result[]). */
	bool seq;
	/* A view of unplanned bytes that takes its input's bytes each run
	 * (exec.c alias_view). */
	bool alias;
	/* Its kernel's allocations outlive the node (a sequence's elements,
	 * live until the run ends; a string output's bytes): it allocates
	 * from the session's pool, reset per run, not from its scratch,
	 * reset after each node. */
	bool keep;
	const Tensor **result;
	const Tensor **in; /* per node input, filled from cur[] per run */
	Tensor **out;	   /* per node output: its planned tensor, or NULL */
	uint8_t *set;
} Task;

/* Task t runs a fast path (a plain-C or oneDNN row): t->fast. */
static inline bool rt_fast(const Task *t)
{
	return t->kernel->backend == KB_PLAIN || t->kernel->backend == KB_DNNL;
}

/* Task t runs by evaluation (its output shapes known at run time). */
static inline bool rt_evaluated(const Task *t)
{
	return t->kernel->backend == KB_EVAL;
}

typedef struct Prepared {
	Graph *g;
	Tensor *vt;	     /* per value: its planned tensor */
	const Tensor **cur;  /* per value: its contents in this run */
	Task *tasks;
	int32_t ntasks;
	Tensor *own_out;     /* per graph output: session-owned buffers */
	/* per graph output: NULL, or, if it is computed channels-last (its
	 * layout, rt_layout), the buffer it is computed in, reordered into
	 * the caller's at delivery (rt_nhwc_to_rows) */
	uint8_t **stage;
	bool planned;	     /* every task runs its kernel on planned buffers */
	uint8_t *mem;	     /* the arena its plan's offsets are in */
	uint64_t mem_bytes;
	int32_t *in_at;	     /* model input i -> graph input */
	int32_t *out_at;     /* model output i -> graph output */
	struct Profile *prof; /* options.profile: per task times (exec.c) */
	int32_t running;      /* the task a run is at (exec.c rt_exec) */
} Prepared;

/* A run context: everything one run writes (its arena, scratch and
 * pool, its prepared graphs, whose kernels bind the run's buffers, its
 * shape cache), used by one run at a time.  A session (session.c) hands
 * each gearrt_run one of its pool, made on demand up to a bound; what
 * runs read only (the file, the oneDNN-reordered and derived weights)
 * is the model's, shared by every context.  The prepared graphs are per
 * context because their kernels are not read-only while running:
 * oneDNN's memory objects are pointed at each run's buffers and its
 * scratchpads written. */
struct RunCtx {
	gearrt_model *model;
	int threads;
	uint8_t *arena; /* the feature-map arena, 64-byte aligned */
	Arena scratch;	/* a kernel's temporaries, reset after each node */
	Arena pool;	/* evaluated nodes' outputs and what Task.keep
			   kernels make, reset per run */
	Prepared **prep; /* per entry of model->run_graph, or NULL */
	int last_gear;
	bool no_gears;		/* gearrt_options.no_gears */
	bool no_fast;		/* gearrt_options.no_fast: reference kernels */
	int profile;		/* gearrt_options.profile (exec.c) */
	gearrt_node_fn on_node;	/* gearrt_options.on_node (exec.c), or NULL */
	void *on_node_user;
	/* A run's tensors in the running graph's order (rt_run_prepared):
	 * room for every input and output of the model, made with the
	 * session. */
	const gearrt_tensor **io_in;
	gearrt_tensor **io_out;
	struct Strings *strings; /* string inputs and outputs (session.c),
				  * or NULL if the model has none */
	struct ShapeCache *cache; /* runtime/hybrid.c */
	gearrt_stats st;
	/* The plain-C fast kernels' temporaries during a node (runtime/
	 * wino.c's): one buffer, 64-byte aligned, as large as the largest
	 * a kernel reserved when matched (rt_work_reserve); a session runs
	 * one node at a time, so its kernels share it. */
	void *work;
	size_t work_bytes;
};

/* Every buffer a kernel writes is 64-byte aligned: oneDNN may write
 * one with aligned (non-temporal) stores, which fault on less.  The
 * session's arena and buffers come from big_alloc; a caller's output
 * buffer that is not is written by a copy (exec.c bind_io). */
static inline bool rt_aligned(const void *p)
{
	return ((uintptr_t)p & 63) == 0;
}

/* A buffer grown as runs need more (strings.c): rt_grow gives room for
 * n bytes, its old contents gone. */
typedef struct Grow {
	void *p;
	size_t cap;
} Grow;
void *rt_grow(Grow *g, size_t n);

/* Caps the process's kernels at gearrt_options.max_isa (session.c,
 * its rules in gearrt.h): gearc's (cpu_cap) and oneDNN's (dnnl_cap).
 * 0, or -1 with an error. */
int rt_isa_cap(int max_isa);
/* oneDNN's part of it (runtime/dnnl.c): dnnl_set_max_cpu_isa at level,
 * or, if oneDNN's ISA is fixed already, 0 if it is within level; -1
 * with an error naming what oneDNN runs at if it is not. */
int dnnl_cap(CpuLevel level);

/* Frees context s and everything it holds (session.c). */
void rt_ctx_free(RunCtx *s);
/* The context session s's last run used (its first before any run): for
 * tests that look at what a run prepared. */
RunCtx *rt_session_ctx(const gearrt_session *s);
/* Whether md's nodes marked reduced compute in bfloat16: its precision
 * mode allows bfloat16 or float16 (oneDNN 2.6 computes no float16 on
 * CPUs) and the CPU has AVX512_BF16 or AMX-BF16, within the ISA cap. */
bool rt_bf16(const gearrt_model *md);
/* The threads' output slots the session holds (tests). */
int rt_session_slots(const gearrt_session *s);

/* Makes s->work at least bytes long: false if memory is short. */
bool rt_work_reserve(RunCtx *s, size_t bytes);

/* Weights a plain-C kernel derives from a weight src of p's graph (wino.c's
 * transformed windows): bytes, 64-byte aligned, that make(ctx, dst) fills,
 * made once per model for (src, key) and shared by its sessions and gears
 * (under its lock); for a specialisation's graph, whose weights may go
 * before the model, made anew and owned by *own (else *own is NULL: free
 * it with the kernel).  NULL if memory is short. */
/* rt_derived's key: a kernel's letter and what else its bytes depend on
 * (below 2^56), so two kernels' forms of one weight never meet. */
#define RT_DERIVED(letter, what) ((uint64_t)(letter) << 56 | (what))
const void *rt_derived(RunCtx *s, const Prepared *p, const void *src,
		       uint64_t key, size_t bytes,
		       void (*make)(const void *ctx, void *dst),
		       const void *ctx, void **own);

/* Gear g of md raised and checked as verify checks it, once per model,
 * before any session runs it (*ms += the time, if this call made it):
 * GEARRT_OK, or GEARRT_E_FILE with the check's error (every time the
 * gear is asked for). */
gearrt_status rt_check_gear(gearrt_model *md, size_t g, double *ms);

/* The graph input / output of g called name, or -1. */
int32_t rt_graph_input(const Graph *g, const char *name);
int32_t rt_graph_output(const Graph *g, const char *name);

/* Builds s's Prepared for graph g: -1 with an error if the file's plan
 * does not fit the arena (a lying file). */
Prepared *rt_prepare(RunCtx *s, Graph *g);
/* The same with the plan's offsets in mem[0..mem_bytes) instead of the
 * session's arena (a specialised dynamic graph whose plan is larger than
 * the gears'). */
Prepared *rt_prepare_in(RunCtx *s, Graph *g, uint8_t *mem,
			uint64_t mem_bytes);
void rt_prepared_free(Prepared *p);
/* Fills p's in_at / out_at (session.c): -1 with an error unless g's
 * inputs and outputs are the model's, one to one by name. */
int rt_map_io(const gearrt_model *md, Prepared *p);
/* Runs p on the caller's tensors, inputs (checked) and outputs[0..nout)
 * in the model's order: as rt_exec. */
gearrt_status rt_run_prepared(RunCtx *s, Prepared *p,
		    const gearrt_tensor *inputs, gearrt_tensor *outputs,
		    size_t nout);
/* Calls fn for each task of p with its profile times (exec.c), if p is
 * profiled. */
void rt_profile_each(const Prepared *p,
		     void (*fn)(void *user, const gearrt_node_time *t),
		     void *user);
/* Runs p: in[i] / out[i] are the caller's tensors for g's inputs and
 * outputs in g's order (out[i].data NULL: session-owned).  With an
 * error: GEARRT_E_RUN naming the node that failed, GEARRT_E_OUTPUT
 * naming the output a caller's buffer is too small for. */
gearrt_status rt_exec(RunCtx *s, Prepared *p,
		      const gearrt_tensor *const *in, gearrt_tensor *const *out);

/* runtime/strings.c: a session's string buffers (and its bool inputs'
 * copies), NULL for a model without string inputs or outputs or bool
 * inputs. */
struct Strings *rt_strings_new(const gearrt_model *md);
void rt_strings_free(const gearrt_model *md, struct Strings *x);
/* The inputs (checked) as the graph takes them: string ones as the IR's
 * Bytes, pointing at the caller's strings; bool ones of bytes 0 and 1
 * (any byte but 0 is true). */
const gearrt_tensor *rt_strings_in(RunCtx *s,
				   const gearrt_tensor *inputs);
/* Before a run: string outputs go to session memory, the caller's
 * buffers kept.  After it: they are arrays of NUL-terminated strings
 * (in the caller's buffer if given), or, if the run failed (ok false),
 * the caller's buffers back; GEARRT_E_OUTPUT with an error if one does
 * not fit. */
void rt_strings_before(RunCtx *s, gearrt_tensor *out, size_t nout);
gearrt_status rt_strings_after(RunCtx *s, gearrt_tensor *out,
			       size_t nout, bool ok);

/* runtime/hybrid.c: the dynamic graph's shape cache of s, with room for
 * size entries (<= 0: none kept). */
struct ShapeCache *rt_cache_new(int size);
void rt_cache_free(struct ShapeCache *c);
/* Specialisations held. */
int32_t rt_cache_count(const struct ShapeCache *c);
/* Runs the dynamic graph of s's model on inputs (in model order, checked)
 * through the cache; a status with an error. */
gearrt_status rt_run_dynamic(RunCtx *s, const gearrt_tensor *inputs,
			     gearrt_tensor *outputs, size_t nout);
/* Runs run_graph[graph] specialised to the key inputs' contents (rt.h's
 * by_value) through the cache, *ran set; *ran false if the graph runs
 * as compiled instead (not by value, no cache, or this session stopped
 * specialising).  A failed run's status as rt_exec's. */
gearrt_status rt_run_by_value(RunCtx *s, size_t graph,
			      const gearrt_tensor *inputs,
			      gearrt_tensor *outputs, size_t nout, bool *ran);

/* runtime/fast.c: gives task t (its tensors resolved in p) the first
 * registry row whose match takes it: 0, or -1 with an error. */
int rt_kernel_choose(RunCtx *s, Prepared *p, Task *t);
/* Moves t, whose row keeps its tensors row-major, to the first later
 * fast row that takes it and either layout (direct.conv's node to
 * dnnl.conv): 1 if moved, 0 if none takes it (t unchanged), -1 with an
 * error.  rt_kernel_choose moves it back. */
int rt_kernel_move(RunCtx *s, Prepared *p, Task *t);
/* Runs the build of t's row, once p's layouts are decided: 0, or -1
 * with an error naming the node. */
int rt_kernel_build(RunCtx *s, Prepared *p, Task *t);
/* For a match: t->lay, every slot row-major until set. */
SlotLayout *rt_task_slots(Task *t);
/* runtime/exec.c: the registry row of a view exec.c made an alias. */
int rt_alias_build(RunCtx *s, Prepared *p, Task *t, FastKernel *k);
/* The name of the row running t ("dnnl.conv", "ref", "eval"), with the
 * variant of its kernel that runs if the row has several
 * ("chan.pwconv.avx2", "quant.conv.avxvnni", "dnnl.conv.jit:avx2"). */
const char *rt_kernel_name(const Task *t);
/* runtime/layout.c: once every task of p is matched, gives the rank-4
 * float tensors between oneDNN convolutions and the kernels that take
 * either layout the channels-last layout those convolutions compute in
 * (their Tensor's layout, TENSOR_NHWC), moving tasks to rows that take
 * it where that keeps a tensor channels-last (rt_kernel_move): 0, or -1
 * with an error. */
int rt_layout(RunCtx *s, Prepared *p);
/* Writes channels-last rank-4 tensor t row-major (NCHW) into dst. */
void rt_nhwc_to_rows(const Tensor *t, void *dst);

/* The layout record of slot slot of t (t->lay set). */
static inline SlotLayout *rt_slot(const Task *t, int slot)
{
	return &t->lay[t->n->noutputs + slot];
}

/* Whether value v's planned tensor is channels-last (its layout, which
 * rt_layout decided). */
static inline bool rt_nhwc(const Prepared *p, ValId v)
{
	return v >= 0 && p->vt[v].layout == TENSOR_NHWC;
}

/* Input i of node n in p's graph, or NULL if absent. */
static inline const Value *rt_in_val(const Prepared *p, const Node *n, int i)
{
	return i < n->ninputs && n->inputs[i] >= 0 ? &p->g->vals[n->inputs[i]]
						   : NULL;
}

/* The hot loops of the plain-C fast paths (runtime/direct.c,
 * chanwise.c, ...) are compiled for each ISA level compiler/cpu.h's
 * cpu_isa() names: AVX-512, AVX2 with FMA, and the base ISA; each call
 * runs the variant of the level the CPU has within the cap
 * (gearrt_options.max_isa): one load and a branch.  (Not target_clones:
 * the loader picks its clone before main, where no cap can reach it.)
 *
 *   RT_HOT_FN(static, void, name, (const float *x, size_t n), (x, n))
 *   {
 *           ... the body, once ...
 *   }
 *
 * defines name(), its storage class (static, or empty) and type first,
 * then its parameters and the arguments that pass them on; the body is
 * compiled once per level (always inlined into a function of that
 * target), its multiplies and adds fused where the level has FMA, and
 * without -ftrapping-math (no kernel reads the FP exception flags): with
 * it GCC leaves act.h's clamps (v < -4 ? -4 : v) as branches for AVX2,
 * which cannot mask like AVX-512, and Gelu's loop ran scalar, 8 times
 * the AVX-512 time.  RT_HOT_EXACT_FN: each multiply and add rounded on
 * its own, for a kernel whose every bit is another engine's.
 * RT_ISA_NAME() is the variant's suffix a profile names
 * (cpu_isa_name). */
#if defined(__GNUC__) && !defined(__clang__)
#define RT_OPT_FAST \
	__attribute__((optimize("O3", "fp-contract=fast", "no-trapping-math")))
#define RT_OPT_EXACT \
	__attribute__((optimize("O3", "fp-contract=off", "no-trapping-math")))
#else
#define RT_OPT_FAST
#define RT_OPT_EXACT
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#define RT_X86 1
/* The targets of cpu_isa()'s levels (what cpu.c checks for each). */
#define RT_TARGET_AVX512 \
	__attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma")))
#define RT_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define RT_HOT_FN_(storage, type, name, params, args, opt)                  \
	static inline __attribute__((always_inline)) opt type name##_body    \
		params;                                                      \
	RT_TARGET_AVX512 opt static type name##_avx512 params                \
	{                                                                    \
		return name##_body args;                                     \
	}                                                                    \
	RT_TARGET_AVX2 opt static type name##_avx2 params                    \
	{                                                                    \
		return name##_body args;                                     \
	}                                                                    \
	opt static type name##_base params                                   \
	{                                                                    \
		return name##_body args;                                     \
	}                                                                    \
	storage type name params                                             \
	{                                                                    \
		CpuLevel isa_ = cpu_isa();                                   \
		return isa_ >= CPU_LEVEL_AVX512 ? name##_avx512 args         \
		       : isa_ >= CPU_LEVEL_AVX2 ? name##_avx2 args           \
						: name##_base args;          \
	}                                                                    \
	static inline __attribute__((always_inline)) opt type name##_body    \
		params
#else
#define RT_X86 0
#define RT_HOT_FN_(storage, type, name, params, args, opt) \
	storage opt type name params
#endif
#define RT_HOT_FN(storage, type, name, params, args) \
	RT_HOT_FN_(storage, type, name, params, args, RT_OPT_FAST)
#define RT_HOT_EXACT_FN(storage, type, name, params, args) \
	RT_HOT_FN_(storage, type, name, params, args, RT_OPT_EXACT)
#define RT_ISA_NAME() cpu_isa_name(cpu_isa())

/* A function of the AVX-512 fast paths (chanwise.c's 1x1 Conv,
 * wino.c), compiled for AVX-512 alone, its multiplies and adds fused:
 * called only where the match found the CPU has it (cpu_isa()); and
 * their vector of 16 floats. */
#if defined(__GNUC__) && !defined(__clang__)
#define RT_AVX512 __attribute__((target("avx512f,fma"), \
				 optimize("O3", "fp-contract=fast")))
#else
#define RT_AVX512 __attribute__((target("avx512f,fma")))
#endif
typedef float RtV16 __attribute__((vector_size(64)));

/* y[i] = a[i] op b[i * bstep] (b[i * bstep] op a[i] if swap) for
 * i < n, op Add, Sub, Mul, Div or PRelu (a < 0 ? a b : a, b the slope),
 * each rounded in float as the reference kernels round it.  For the RT_HOT loops of the plain-C paths to inline
 * with a constant bstep (0: b one scalar; 1: a tensor of a's shape). */
static inline __attribute__((always_inline)) void
rt_arith_loop(int op, bool swap, const float *a, const float *b,
	      size_t bstep, float *y, size_t n)
{
	switch (op) {
	case OP_Add:
		for (size_t i = 0; i < n; i++)
			y[i] = a[i] + b[i * bstep];
		break;
	case OP_Mul:
		for (size_t i = 0; i < n; i++)
			y[i] = a[i] * b[i * bstep];
		break;
	case OP_Sub:
		for (size_t i = 0; i < n; i++)
			y[i] = swap ? b[i * bstep] - a[i] : a[i] - b[i * bstep];
		break;
	case OP_PRelu: /* a the data, b the slope (never swapped) */
		for (size_t i = 0; i < n; i++)
			y[i] = a[i] < 0 ? a[i] * b[i * bstep] : a[i];
		break;
	default:
		for (size_t i = 0; i < n; i++)
			y[i] = swap ? b[i * bstep] / a[i] : a[i] / b[i * bstep];
	}
}

/* The threads a kernel of this much work (flops; elements moved for a
 * copy or a pooling; one time step's flops for a recurrent cell) runs
 * on: the session's, or 1 below RT_PARALLEL_MIN, where forking and
 * joining the threads costs more than they save.  At 2 threads, medians
 * of 7 alternating runs of 200 (gearc run --bench), every oneDNN
 * primitive parallel -> those above this only: rec 0.165 -> 0.152 ms,
 * vad 0.062 -> 0.051 (one thread: 0.051), bench_tf 0.367 -> 0.309, cls
 * 0.370 -> 0.362; a limit of 2^20 was slower on all four. */
#define RT_PARALLEL_MIN (1 << 18)

/* A gear of less work than rt_gear_serial (flops, roughly), or of less
 * than rt_node_serial a node on average, makes every kernel for one
 * thread, whatever the session's count (runtime/exec.c; tests set
 * rt_gear_serial to 0, which turns both off, to see each kernel's own
 * choice). */
extern double rt_gear_serial, rt_node_serial;

/* On AVX2, chanwise.c's 1x1 convolution takes products of at most this
 * many multiply-adds, oneDNN the rest (PW_TINY_AVX2; tests raise it to
 * check the AVX2 tile on every fixture). */
extern int64_t rt_pw_tiny_avx2;

/* On AVX2, wino.c takes 3x3 Convs whose transformed weights are up to
 * this many times one image's output bytes (WINO_U_AVX2); 0: the other
 * levels' limits (tests, to check other kernels on their fixtures). */
extern int64_t rt_wino_u_avx2;

/* On AVX2, a MatMul or Gemm of at least this many rows by constant
 * weights runs as oneDNN's 1x1 convolution (dnnl.c MMCONV_MIN_M; tests
 * raise it to check gemv.c's tiles of many rows). */
extern int64_t rt_mmconv_min_m;

static inline int rt_threads_for(const RunCtx *s, double work)
{
	return s->threads > 1 && work >= RT_PARALLEL_MIN ? s->threads : 1;
}

/* A (de)convolution's work for rt_threads_for: 2 flops per multiply-add,
 * cin/group taps of the window per output channel of each output pixel
 * (of each input pixel, transposed). */
static inline double rt_conv_flops(const ConvGeom *cg, bool transpose)
{
	double f = 2.0 * (double)cg->n * (double)cg->cout *
		   (double)(cg->cin / cg->group);
	for (int a = 0; a < cg->nsp; a++)
		f *= (double)(transpose ? cg->in[a] : cg->out[a]) *
		     (double)cg->kernel[a];
	return f;
}


/* RT_PARALLEL_FOR before a for loop of independent iterations spreads
 * them over nt threads (a variable nt in scope) of gearrt's pool
 * (runtime/pool.h), where the file is compiled with OpenMP (the
 * Makefile's RT_OMP files); else the loop runs on one.  Each thread takes the next iteration when it is done with
 * one (dynamic scheduling), so a thread the OS deschedules on a busy
 * machine delays the loop by the iteration it holds, not by its share
 * of a static split; RT_PARALLEL_ROWS does the same 16 iterations at a
 * time, for loops of many small ones (rows), where taking one costs
 * more than it does.  An iteration computes the same bytes whichever
 * thread runs it; rt_thread() is the running thread's number (for its
 * own scratch). */
#ifdef _OPENMP
#define RT_PARALLEL_FOR \
	_Pragma("omp parallel for num_threads(nt) schedule(dynamic)")
#define RT_PARALLEL_ROWS \
	_Pragma("omp parallel for num_threads(nt) schedule(dynamic, 16)")
#else
#define RT_PARALLEL_FOR (void)nt;
#define RT_PARALLEL_ROWS (void)nt;
#endif
static inline int rt_thread(void) { return rt_pool_thread(); }

#endif
