/*
 * gearrt.h - libgearrt, the runtime for gearc's .om files: the only
 * header a program that runs a compiled model includes.
 *
 *   gearrt_model *m;
 *   if (gearrt_model_open("rec.om", &m) != GEARRT_OK)
 *           die(gearrt_last_error());
 *   gearrt_session *s;
 *   gearrt_session_create(m, NULL, &s);
 *   gearrt_tensor in = { .dtype = GEARRT_FLOAT32, .rank = 4,
 *                        .dims = { 1, 3, 48, 320 }, .data = pixels,
 *                        .size = sizeof(pixels) };
 *   gearrt_tensor out = { 0 };           // data NULL: the session owns it
 *   if (gearrt_run(s, &in, 1, &out, 1) != GEARRT_OK)
 *           die(gearrt_last_error());
 *   ... out.dims, out.data (valid until this thread's next run) ...
 *   gearrt_session_destroy(s);
 *   gearrt_model_close(m);
 *
 * Model.  gearrt_model_open() reads the file into memory once (so a file
 * cut or replaced under a running program cannot fault it, as a mapping
 * would; serializer/om.h) and uses the weights in place there, never
 * copying them again (the graph part is given back once decoded: the
 * constants gearc computed are kept once, in the decoded message); it
 * makes every check `gearc verify` makes (the header,
 * checksum, every index, the nesting depth, the gear table and the
 * input/output table against every graph a run starts at, shape inference
 * re-run on every graph, every memory plan) and refuses a file that fails
 * one, but for what is a gear's own (its graph and those below it: read
 * into the IR, their plans checked, their shapes re-inferred): that is
 * done before the gear's first run (once per model, whichever session
 * runs it first), so a file of many gears opens without them; a gear
 * that fails is
 * GEARRT_E_FILE from gearrt_run on every run of it, naming the file, and
 * the other gears run.  A model is read-only to its users
 * once open: any number of sessions, on any threads, may use it; close it
 * after its last session is destroyed.
 *
 * Gears.  A gear compile holds one static graph per gear.  A run picks the
 * gear whose dims equal the inputs' dims at the gear axes (the -1 dims of
 * gearrt_input_info), as GE's DavinciModel matches exactly; dims that
 * match no gear are GEARRT_E_NO_GEAR, and the message lists the gears,
 * unless the file holds a dynamic graph (see "Hybrid files" below).  A
 * static compile has no gears: the inputs must have the model's shapes.
 *
 * Session.  Any number of threads may run one session at once, as an
 * ONNX Runtime InferenceSession's run().  A run takes a run context
 * from the session's pool (one is made with the session; another is made
 * when every one is in use, up to the concurrency option, beyond which a
 * run waits for one) and gives it back when it returns.  A context owns
 * a feature-map arena, sized once to the largest gear's plan, and
 * prepares each gear on its first run in it (task list, buffers bound
 * from the plan); later runs of a prepared gear make no heap allocation
 * and no file I/O: they bind the caller's input and output buffers and
 * walk the tasks.  N contexts cost N arenas and N preparations of each
 * gear they run; the model's weights are shared.  A run's outputs are
 * the same bytes whatever else runs at once.
 *
 * Errors.  Every call returns a status; on failure gearrt_last_error()
 * gives a one-line message naming the file, input, gear or node at fault
 * (thread-local, valid until the thread's next gearrt call).  Bad files and
 * bad arguments never abort the process.
 *
 * Tensors.  dtype uses ONNX's TensorProto numbering; data is dense,
 * row-major, little-endian.
 *
 * Strings.  A GEARRT_STRING tensor's data is an array of const char *,
 * one per element, each a NUL-terminated UTF-8 string, and its size is
 * the element count times sizeof(char *) (gearrt_dtype_size).  An input
 * whose data or any element is NULL, or whose size is short, is
 * GEARRT_E_INPUT; the session reads the caller's strings during the run
 * only.  A string output's data points to session-owned pointers to
 * session-owned copies of the strings, valid until the session's next
 * run; an output given a buffer (data set) receives the pointers there
 * (size at least the count times sizeof(char *), else GEARRT_E_OUTPUT),
 * still pointing into the session.  An output string holding a NUL byte
 * cannot be a C string: GEARRT_E_OUTPUT.  The session keeps the copies'
 * memory and grows it only when a run needs more than any before, so a
 * string model's runs allocate no more than their strings need.
 */
#ifndef GEARRT_H
#define GEARRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GEARRT_MAX_RANK 8

#if defined(GEARRT_BUILD) && defined(__GNUC__)
#define GEARRT_API __attribute__((visibility("default")))
#else
#define GEARRT_API
#endif

typedef enum gearrt_status {
	GEARRT_OK = 0,
	GEARRT_E_ARG,	  /* a NULL pointer, an index out of range */
	GEARRT_E_FILE,	  /* the .om cannot be read, or fails a check */
	GEARRT_E_INPUT,	  /* an input's dtype, rank or size is wrong */
	GEARRT_E_NO_GEAR, /* the inputs' dims match no gear */
	GEARRT_E_OUTPUT,  /* an output buffer is too small or mistyped */
	GEARRT_E_RUN,	  /* a node failed while running */
} gearrt_status;

typedef enum gearrt_dtype {
	GEARRT_FLOAT32 = 1,
	GEARRT_UINT8 = 2,
	GEARRT_INT8 = 3,
	GEARRT_UINT16 = 4,
	GEARRT_INT16 = 5,
	GEARRT_INT32 = 6,
	GEARRT_INT64 = 7,
	GEARRT_STRING = 8, /* see "Strings" above */
	GEARRT_BOOL = 9,
	GEARRT_FLOAT16 = 10,
	GEARRT_FLOAT64 = 11,
	GEARRT_UINT32 = 12,
	GEARRT_UINT64 = 13,
	GEARRT_BFLOAT16 = 16,
} gearrt_dtype;

/* A tensor crossing the API: an input the caller gives, an output buffer
 * (data NULL: the session provides one, valid until its next run), or a
 * description (data NULL, dims -1 where they vary with the gear). */
typedef struct gearrt_tensor {
	const char *name; /* inputs: NULL, or checked against the model's */
	int32_t dtype;	  /* gearrt_dtype */
	int32_t rank;
	int64_t dims[GEARRT_MAX_RANK];
	void *data;
	size_t size; /* bytes at data: given (inputs), room (outputs) */
} gearrt_tensor;

typedef struct gearrt_model gearrt_model;
typedef struct gearrt_session gearrt_session;

/* The message of this thread's last failed call ("" if none). */
GEARRT_API const char *gearrt_last_error(void);
/* libgearrt's version, "0.1.0" (gearc --version's). */
GEARRT_API const char *gearrt_version(void);
/* The CPU features the kernels choose by, as "avx2 fma f16c avx512f
 * ...": those of the CPU the library runs on, within the ISA cap. */
GEARRT_API const char *gearrt_cpu_features(void);
/* How the threads of a run wait between parallel loops, as "spin while
 * a run is under way and 1 ms after, then sleep; sleep at once while
 * other processes want the cores (gearrt's pool), oneDNN's on it too". */
GEARRT_API const char *gearrt_wait_policy(void);

/* The threads of a run.  libgearrt runs its kernels' parallel loops and
 * oneDNN's on a pool of its own: each thread that calls gearrt_run has
 * a team of threads-1 workers, started on its first parallel run and
 * stopped when it exits.  A worker spins for the next loop while a run
 * is under way (up to 1 ms between loops) and for 1 ms after it (a
 * server's next request), then sleeps, so an idle server holds no core;
 * a run wakes its sleeping workers as it starts, so they are up by its
 * first loop, and a worker woken onto its master's CPU moves to
 * another one the process may use (the kernel sometimes puts a wakee
 * beside its waker and moves one of them only milliseconds later).  A loop's parts are taken, not dealt: a
 * thread done with its part takes the next one nobody has begun, so a
 * worker the OS has descheduled delays a loop by the part it holds, not
 * by its share.  When the kernel says the run's thread (unless
 * its workers all slept when it began), or its workers in two runs in a
 * row, waited to run for an eighth of a run
 * (their run delay, /proc/thread-self/schedstat), another process
 * wants the cores: for the next 0.1 s (twice as long each time it
 * comes back at once, up to 3.2 s, and again while other processes
 * left the team's CPUs less than 1.5 free over it: /proc/stat's idle
 * time and the process's CPU time) its team's workers sleep at once
 * and its master takes the parts itself, as at 1 thread, unless a
 * worker is already awake.
 * (PP-OCRv4 det at 640x640 at 2 threads beside a busy process: 44.7 ms
 * a run, 45.5 at 1 thread; quiet, 27.7.)
 *
 * oneDNN, built on OpenMP, reaches the pool through its six imports of
 * libgomp, pointed at the pool when the first session is made;
 * GEARRT_DNNL_LIBGOMP=1 in the environment leaves them on libgomp (for
 * comparison), whose threads then wait as libgomp read its environment
 * when the process started (GOMP_SPINCOUNT, OMP_WAIT_POLICY).  For that
 * case gearrt_wait_policy_exec(argv), called first thing in main() as
 * gearc run does, runs the program again (its /proc/self/exe, the same
 * argv) with GOMP_SPINCOUNT=GEARRT_SPINCOUNT added and does not return,
 * unless the environment sets either variable or oneDNN is on the pool:
 * then it returns 0; -1 when it could not (then libgomp's default, a
 * spin of some 300000 times, holds). */
#define GEARRT_SPINCOUNT "1000"
GEARRT_API int gearrt_wait_policy_exec(char **argv);

/* "float32", "int64", ...; NULL for a number that is no dtype. */
GEARRT_API const char *gearrt_dtype_name(int32_t dtype);
/* Bytes per element; 0 for a number that is no dtype. */
GEARRT_API size_t gearrt_dtype_size(int32_t dtype);

GEARRT_API gearrt_status gearrt_model_open(const char *path, gearrt_model **model);
/* The same from size bytes of a .om in memory, which it copies: the
 * caller may free them once it returns.  Messages name the model
 * "<memory>". */
GEARRT_API gearrt_status gearrt_model_open_memory(const void *data,
						   size_t size,
						   gearrt_model **model);
GEARRT_API void gearrt_model_close(gearrt_model *model);

/* The model's inputs and outputs in order: name, dtype, rank and dims,
 * -1 at dims that vary with the gear. */
GEARRT_API size_t gearrt_input_count(const gearrt_model *model);
GEARRT_API size_t gearrt_output_count(const gearrt_model *model);
GEARRT_API gearrt_status gearrt_input_info(const gearrt_model *model, size_t i,
				gearrt_tensor *info);
GEARRT_API gearrt_status gearrt_output_info(const gearrt_model *model, size_t i,
				 gearrt_tensor *info);

/* The precision a model computes in on this CPU, one line: "float32"
 * for a file compiled without a reduced-precision mode, else its mode
 * and what this CPU does with it: "allow_mix_precision_bf16: bfloat16
 * on this CPU (avx512_bf16 amx_bf16) for the 63 nodes marked, where a
 * kernel gains by it" (GEARRT_PROFILE names the kernels that did:
 * dnnl.conv.bf16, dnnl.matmul.bf16, ...), or "...: float32 (this CPU
 * has no AVX512_BF16 or AMX-BF16)"; a float16 mode computes in bfloat16
 * (oneDNN 2.6 computes no float16 on CPUs) and says so. */
GEARRT_API const char *gearrt_model_precision(const gearrt_model *model);

/* Gears: 0 for a static compile.  Gear g's dims are the values of the -1
 * dims of every input, inputs in order, axes in order; *count of them. */
GEARRT_API size_t gearrt_gear_count(const gearrt_model *model);
GEARRT_API gearrt_status gearrt_gear_dims(const gearrt_model *model, size_t g,
			       const int64_t **dims, size_t *count);
/* Output i's dtype and exact shape at gear g. */
GEARRT_API gearrt_status gearrt_gear_output(const gearrt_model *model, size_t g,
				 size_t i, gearrt_tensor *info);

/* The name the source model gave axis of input i (its ONNX dim_param),
 * where that dim varies with the gear (-1 in gearrt_input_info) and the
 * file keeps the name: a --hybrid compile keeps its inputs' names (its
 * dynamic graph is written with them), other compiles none.  NULL
 * otherwise.  Valid until the model is closed. */
GEARRT_API const char *gearrt_input_dim_name(const gearrt_model *model,
					     size_t i, int32_t axis);
/* What the source ONNX model said of itself, as the .om keeps it, by
 * key: "producer_name", "producer_version", "domain", "model_version"
 * (decimal, "0" if unset), "graph_name" (its main graph's),
 * "source_file" (the .onnx's file name); "" where the model said
 * nothing; NULL for any other key.  Valid until the model is closed. */
GEARRT_API const char *gearrt_model_meta(const gearrt_model *model,
					 const char *key);

/* threads: intra-op threads of a run, at most GEARRT_THREADS_MAX; 0
 * (a zeroed struct, or NULL options) means every core the process may
 * use: its CPU affinity mask's, at most its cgroup's CPU quota (as ONNX
 * Runtime's 0 means every core).  A gear of little work (under 2^24
 * flops, or 2^20 a node on average: Silero VAD, PP-OCRv4 cls at batch
 * 1) runs on one thread whatever the count: handing its kernels out to
 * a second thread cost more than it gave.
 * shape_cache: how many specialisations of the dynamic graph (see
 * "Hybrid files" below) a session keeps, at most GEARRT_SHAPE_CACHE_MAX;
 * 0 (a zeroed struct, or NULL options) means the default,
 * GEARRT_SHAPE_CACHE_DEFAULT; GEARRT_SHAPE_CACHE_OFF (or any negative
 * number) keeps none: every run off the gears rebuilds.  no_gears: run
 * the dynamic graph even when the inputs' dims are a gear's (for
 * comparing the two paths); a run on a file without a dynamic graph is
 * then GEARRT_E_NO_GEAR.  no_fast: every node runs its op's reference
 * kernel, no fast path (oneDNN or plain C) is built (an oracle to compare
 * fast paths with; gearc run and the Python module set it from
 * GEARRT_NO_FAST=1).  profile: GEARRT_PROFILE_OPS times every node of
 * every run and prints the times to stderr per op and kernel when the
 * session is destroyed; GEARRT_PROFILE_NODES adds a row per node (gearc
 * run and the Python module set it from GEARRT_PROFILE=1 / =nodes).
 * pad_batch: inputs whose gear dims match no gear, but for a batch (the
 * gear dim at axis 0 of the inputs that have one there) that a larger
 * gear holds, run on the least such gear: their rows zero-padded to its
 * batch, the outputs sliced back to the inputs' (each along the axis its
 * batch reaches, which the compiler records).  Only where the compiler
 * proved every output row depends on its own batch index's input rows
 * alone (gearc dump says so: "batch: rows independent"); a model where
 * a node mixes them (a reduction over the batch, a dynamic int8
 * quantisation's min and max, a Reshape merging the batch) refuses a
 * padded run with GEARRT_E_NO_GEAR naming that node.  A file with a
 * dynamic graph (--hybrid) runs such inputs there instead.
 * concurrency: the most runs of the session at once (its run contexts),
 * at most GEARRT_CONCURRENCY_MAX; 0 means GEARRT_CONCURRENCY_DEFAULT.
 * max_isa: the most of the CPU's instruction set the kernels use, as on
 * a CPU that had no more (for testing what a smaller CPU runs, or
 * leaving the wider units alone): GEARRT_ISA_AVX512 (with VNNI, BF16,
 * FP16, AMX), GEARRT_ISA_AVX2 (with FMA, F16C, AVX-VNNI), GEARRT_ISA_AVX,
 * GEARRT_ISA_SSE41 or GEARRT_ISA_BASELINE (x86-64's SSE2; on ARM64,
 * NEON without dotprod, bf16 and SVE); 0 (a zeroed struct) asks for no
 * cap.  Every choice of kernel reads it: gearc's own kernels run their
 * variant of that level (a profile names it: chan.pwconv.avx2), and
 * oneDNN is capped the same way (dnnl_set_max_cpu_isa); oneDNN has no
 * level below SSE4.1, so at the baseline its rows are left and gearc's
 * kernels run every node, as on a CPU without SSE4.1 (where oneDNN 2.6's
 * RNN kernel uses SSE4.1 regardless).  The cap is the process's: the
 * first session created with max_isa set fixes it (gearrt_cpu_features
 * reports the features within it from then on), sessions with max_isa
 * 0 run at it too, and those created before it keep the kernels they
 * have prepared.  oneDNN takes a cap only once and only before its first
 * primitive, so a session asking for another level than the process's,
 * or for one below what oneDNN already runs at (an uncapped session ran
 * a oneDNN primitive first), is GEARRT_E_ARG naming the level in force:
 * set the cap before the first session runs (GEARRT_MAX_ISA, through
 * gearrt_options_from_env).
 * threads, shape_cache, profile, concurrency or max_isa out of range
 * (threads negative or above the maximum, shape_cache above it, profile
 * not one of the three) is GEARRT_E_ARG from gearrt_session_create,
 * whose message names the option and its range.  Fields are only ever
 * added at the end. */
#define GEARRT_THREADS_MAX 256
#define GEARRT_SHAPE_CACHE_DEFAULT 8
#define GEARRT_SHAPE_CACHE_MAX 1024
#define GEARRT_SHAPE_CACHE_OFF (-1)
#define GEARRT_PROFILE_OFF 0
#define GEARRT_PROFILE_OPS 1
#define GEARRT_PROFILE_NODES 2
#define GEARRT_CONCURRENCY_DEFAULT 8
#define GEARRT_CONCURRENCY_MAX 256
#define GEARRT_ISA_BASELINE 1
#define GEARRT_ISA_SSE41 2
#define GEARRT_ISA_AVX 3
#define GEARRT_ISA_AVX2 4
#define GEARRT_ISA_AVX512 5

/* Debugging (gearc run --dump-tensors, as atc's dump or Polygraphy's
 * --mark all): gearrt_options.on_node, if set, is called after every
 * node a run computes (a gear's or a static compile's graph, a
 * specialised dynamic graph; not the run on zeros that
 * gearrt_session_prepare makes), on the thread running it, before the
 * node's outputs' memory is reused.  outputs[0..noutputs) are the
 * node's outputs as the source model has them: named as its values,
 * row-major (a tensor the runtime holds channels-last is given NCHW),
 * strings as gearrt_tensor's char * arrays; data valid during the call
 * only; an output that is no tensor (a sequence) has dtype 0 and data
 * NULL; an omitted optional output is left out.  fused[0..nfused) names
 * the source model's values the node computes inside that no longer
 * exist (fused away at compile time).  A node evaluated as a whole (If,
 * Loop, Scan: kernel "eval") gives its outputs, not its subgraphs'
 * values.  Return 0 to go on; anything else fails the run with
 * GEARRT_E_RUN, the message naming the node ("node 'NAME' (OP):
 * on_node returned N").  When on_node is NULL a run pays one branch a
 * node for it. */
typedef struct gearrt_node_info {
	const char *graph;   /* the graph running it: "Batch_0", "root", ... */
	const char *name;    /* the node's name */
	const char *op_type; /* "Conv", "FusedConv", ... */
	const char *kernel;  /* what ran it: "dnnl.conv", "ref", "eval", ... */
	const gearrt_tensor *outputs;
	size_t noutputs;
	const char *const *fused;
	size_t nfused;
} gearrt_node_info;

typedef int (*gearrt_node_fn)(void *user, const gearrt_node_info *node);

typedef struct gearrt_options {
	int threads;
	int shape_cache;
	int no_gears;
	int no_fast;
	int profile;
	int concurrency;
	int pad_batch;
	gearrt_node_fn on_node; /* see gearrt_node_info; NULL: off */
	void *on_node_user;	/* on_node's first argument */
	int max_isa;
} gearrt_options;

/* Sets o's no_fast, profile and max_isa from the environment, for a
 * program whose users expect gearc run's variables: no_fast if
 * GEARRT_NO_FAST is set and not "0"; profile GEARRT_PROFILE_NODES if
 * GEARRT_PROFILE is "nodes", GEARRT_PROFILE_OPS if it is anything else
 * but "" or "0"; max_isa from GEARRT_MAX_ISA, one of "avx512", "avx2",
 * "avx", "sse41", "baseline" (unset or "": left as it is; anything else
 * sets -1, which gearrt_session_create refuses, naming the variable).
 * The library reads no environment variable otherwise. */
GEARRT_API void gearrt_options_from_env(gearrt_options *o);

/* options may be NULL (defaults). */
GEARRT_API gearrt_status gearrt_session_create(gearrt_model *model,
				    const gearrt_options *options,
				    gearrt_session **session);
GEARRT_API void gearrt_session_destroy(gearrt_session *session);

/* The gear inputs[0..nin) select (their dims at the gear axes equal the
 * gear's), 0 for a static compile, or -1 (none; or the inputs' ranks or
 * static dims are not the model's).  Only dims are read. */
GEARRT_API int gearrt_find_gear(const gearrt_model *model,
				const gearrt_tensor *inputs, size_t nin);
/* The smallest gear (the least product of its dims) whose every dim at
 * the gear axes is at least the inputs': the gear to pad them to (see
 * pad_batch); 0 for a static compile; -1 if no gear holds them. */
GEARRT_API int gearrt_pick_gear(const gearrt_model *model,
				const gearrt_tensor *inputs, size_t nin);

/* Prepares gears[0..n) (every gear if n is 0; a static compile's graph
 * is gear 0) in every run context the session has made, as their first
 * run would: the gear's checks, its task list and kernels, then one run
 * on zero inputs (its memory touched, oneDNN's first executions done),
 * so that no run pays for them.  A session whose options gave
 * concurrency N makes its N contexts first, so that N threads' first
 * runs at once pay nothing either; with the default (0), a context made
 * later, for a concurrent run, prepares a gear on its first run of it.
 * GEARRT_E_ARG for a gear out of range, GEARRT_E_FILE for one that
 * fails its checks, GEARRT_E_RUN if a context's arena cannot be had. */
GEARRT_API gearrt_status gearrt_session_prepare(gearrt_session *session,
						const size_t *gears, size_t n);

/* Runs the model: inputs[0..nin) in the model's input order (nin must be
 * the input count), outputs[0..nout) receive the model's outputs in order
 * (nout may be smaller).  Each output's dtype, rank and dims are set; its
 * data is written to the caller's buffer if data is set (size must be
 * enough), else it points to session memory valid until the calling
 * thread's next run on the session (64-byte aligned; copied there from
 * the run context, so that another thread's run may use the context at
 * once).  A caller's buffer 64-byte aligned is computed into
 * directly; one that is not receives a copy.  A GEARRT_BOOL input may
 * hold any byte: any but 0 is true (the caller's bytes are not changed).
 * A run that would need a tensor larger than memory fails with
 * GEARRT_E_RUN naming the node and the bytes; nothing is aborted. */
GEARRT_API gearrt_status gearrt_run(gearrt_session *session, const gearrt_tensor *inputs,
			 size_t nin, gearrt_tensor *outputs, size_t nout);

/* The gear the calling thread's last successful run on the session
 * used: 0..count-1, or -1 (a static compile, the dynamic graph, or no
 * run yet). */
GEARRT_API int gearrt_last_gear(const gearrt_session *session);

/* Hybrid files.  A file compiled with --hybrid also holds the model as
 * one dynamic-shape graph.  A run whose gear dims match no gear runs it
 * (GE's SelectExecuteGraph): the session specialises it to the inputs'
 * dims as the compiler would (every shape inferred, constant shape
 * arithmetic folded, Ifs on constants inlined, dead nodes dropped), plans
 * its memory with the compiler's planner and builds its task list (a
 * "rebuild"); nodes whose output shapes depend on data (NonZero,
 * NonMaxSuppression, Unique, TopK with a runtime k, Range, Resize with
 * runtime scales) are evaluated at run time into a session pool reused
 * across runs.  The specialisation is kept in a per-session cache, least
 * recently used first out, keyed by every input's dims (shape_cache
 * entries); a run of a cached shape costs no rebuild and, when every node
 * is planned, no heap allocation.  Without a dynamic graph, dims that
 * match no gear stay GEARRT_E_NO_GEAR.
 *
 * Inputs' values.  A gear (or a static compile's graph) with a node left
 * to evaluation that reads one of the model's small integer inputs (at
 * most 8 integers or booleans of a fixed shape) - a partition whose shapes
 * that value decides, an If on a sample rate - is specialised the same
 * way to those inputs' contents: the If keeps one branch and the whole
 * gear is planned.  These specialisations share the cache, keyed by the
 * gear, the dims and those contents; a session whose key inputs change
 * more often than the cache can hold goes back to evaluating the node
 * (see rebuilds). */
typedef enum gearrt_path {
	GEARRT_PATH_NONE = 0, /* no successful run yet */
	GEARRT_PATH_STATIC,   /* a static compile's graph */
	GEARRT_PATH_GEAR,     /* a gear's branch (gearrt_last_gear) */
	GEARRT_PATH_DYNAMIC,  /* the dynamic graph, specialised */
} gearrt_path;

typedef struct gearrt_stats {
	uint64_t runs;	     /* successful runs */
	uint64_t gear_runs;  /* ... on a gear (or a static compile) */
	uint64_t dynamic_runs; /* ... on the dynamic graph */
	uint64_t rebuilds;   /* specialisations built (the dynamic graph's,
			      * or a gear's to its inputs' values) */
	uint64_t cache_hits; /* runs that reused one */
	uint64_t evictions;  /* specialisations dropped for room */
	int32_t cached;	     /* specialisations held now */
	int32_t last_path;   /* gearrt_path of the last successful run */
	int32_t last_rebuilt; /* 1 if that run built its specialisation */
	double last_rebuild_ms; /* the last rebuild's wall time */
	double prepare_ms;   /* wall time preparing gears to run as compiled
			      * (a gear's first run's set-up: its check and
			      * its kernels), summed */
} gearrt_stats;

/* The session's counters (since it was created), over every thread's
 * runs; last_path and last_rebuilt are the last run's to finish. */
GEARRT_API gearrt_status gearrt_session_stats(const gearrt_session *session,
					   gearrt_stats *stats);
/* The times options.profile took (GEARRT_PROFILE_OPS or _NODES): fn is
 * called once per node of every graph the session prepared to run as
 * compiled (a gear's, a static compile's graph; not the dynamic graph's
 * specialisations), per run context, in run order, with what stderr gets
 * when the session is destroyed.  Call it while no run of the session is
 * in progress.  GEARRT_E_ARG for a session created without profile. */
typedef struct gearrt_node_time {
	const char *graph, *name, *op_type, *kernel;
	uint64_t runs;	 /* runs of its graph timed, the first included */
	double first_ms; /* the node's time in the first of them */
	double ms;	 /* its mean time a run after the first (the first's
			  * if there was one run) */
} gearrt_node_time;
GEARRT_API gearrt_status gearrt_session_profile(
	const gearrt_session *session,
	void (*fn)(void *user, const gearrt_node_time *t), void *user);

/* 1 if the model holds a dynamic graph (a --hybrid compile), else 0. */
GEARRT_API int gearrt_has_dynamic(const gearrt_model *model);

#ifdef __cplusplus
}
#endif

#endif
