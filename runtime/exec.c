/*
 * runtime/exec.c - a static graph made runnable (the task sink) and run.
 *
 * rt_prepare resolves, once per session and graph, where every value's
 * bytes are: weights in the mapped file, planned tensors in the session's
 * arena at the plan's offset (a view or an in-place result shares its
 * owner's offset), graph inputs and outputs in the caller's buffers
 * (pointers refreshed by each run).  Each node becomes a Task run by
 * the kernel registry's row that takes it (fast.c): every task is
 * matched to its row, then the tensors' layouts are decided (layout.c),
 * then every task's kernel is built for them.  rt_exec walks the
 * tasks: a fast kernel runs on the task's tensors; a reference task
 * binds its node's tensors in an OpBind and calls the op's run hook; an
 * evaluated task (control flow, shapes known only at run time) goes
 * through runspec_node and copies its results into planned buffers where
 * it has them.
 *
 * With gearrt_options.profile set (GEARRT_PROFILE=1 to gearc run and the
 * Python module), every task of a run is timed; when the prepared graph
 * goes (the session's destroy) the times are printed to stderr summed
 * per op and kernel ("Conv/dnnl.conv", "Shape/ref", "If/eval": the op's
 * name and its registry row's), largest first, as milliseconds per run
 * after the first (the first alone if it was the only one), after the
 * time the graph took to prepare and its first run's;
 * GEARRT_PROFILE_NODES (GEARRT_PROFILE=nodes) adds a
 * row per node, in run order, saying which of its tensors are NHWC
 * (runtime/layout.c), what a convolution reorders and which oneDNN
 * implementation it runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dnnl.h"
#include "rt.h"


/* Gives planned value v its arena bytes; -1 if the block does not fit. */
static int place(Prepared *p, const MemBlock *b)
{
	const Graph *g = p->g;
	Tensor *t = &p->vt[b->tensor];
	uint64_t arena = p->mem_bytes;
	if (b->offset > arena || b->size > arena - b->offset ||
	    t->nbytes > b->size)
		return error("graph '%s': tensor '%s' (%zu bytes) has block "
			     "[%llu, +%llu), outside the %llu-byte arena",
			     g->name, g->vals[b->tensor].name, t->nbytes,
			     (unsigned long long)b->offset,
			     (unsigned long long)b->size,
			     (unsigned long long)arena);
	t->data = p->mem + b->offset;
	p->cur[b->tensor] = t;
	return 0;
}

/* Tensors of every value: dtype, shape, size; contents where known now. */
static int resolve_values(Prepared *p)
{
	Graph *g = p->g;
	for (ValId v = 0; v < g->nvals; v++) {
		const Value *x = &g->vals[v];
		Tensor *t = &p->vt[v];
		t->name = x->name;
		t->dtype = x->dtype;
		t->shape = x->shape;
		int64_t bytes = x->tkind == TK_TENSOR ? shape_bytes(&x->shape,
								    x->dtype)
						      : -1;
		t->nbytes = bytes < 0 ? 0 : (size_t)bytes;
		if (x->kind == VAL_WEIGHT)
			p->cur[v] = x->konst;
		else if (x->kind == VAL_INPUT ||
			 (x->kind == VAL_NODE && x->tkind == TK_SEQUENCE))
			p->cur[v] = t; /* a sequence: its kernel fills t */
	}
	for (int32_t k = 0; k < g->noutputs; k++) {
		const Value *x = &g->vals[g->outputs[k]];
		if (x->kind == VAL_NODE && shape_is_static(&x->shape) &&
		    x->tkind == TK_TENSOR && dtype_size(x->dtype))
			p->cur[g->outputs[k]] = &p->vt[g->outputs[k]];
	}
	for (int32_t i = 0; g->plan && i < g->plan->nblocks; i++) {
		const MemBlock *b = &g->plan->blocks[i];
		if (b->tensor >= 0 && b->tensor < g->nvals &&
		    g->vals[b->tensor].kind == VAL_NODE &&
		    place(p, b) < 0)
			return -1;
	}
	return 0;
}

static bool touches_sequences(const Graph *g, const Node *n)
{
	for (int32_t k = 0; k < n->ninputs; k++)
		if (n->inputs[k] >= 0 &&
		    g->vals[n->inputs[k]].tkind == TK_SEQUENCE)
			return true;
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0 &&
		    g->vals[n->outputs[k]].tkind == TK_SEQUENCE)
			return true;
	return false;
}

/* A string output holds pointers to bytes its kernel allocated. */
static bool makes_strings(const Graph *g, const Node *n)
{
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0 &&
		    g->vals[n->outputs[k]].dtype == DT_STRING)
			return true;
	return false;
}

static int alias_run(void *state, const Tensor *const *in,
		     Tensor *const *out)
{
	(void)state;
	if (in[0]->nbytes != out[0]->nbytes)
		return error("its input has %zu bytes, the view %zu",
			     in[0]->nbytes, out[0]->nbytes);
	out[0]->data = in[0]->data;
	return 0;
}

/* A view (Reshape, Squeeze, ...) whose output the plan holds no bytes
 * for (its input's are not in the arena: a graph input, a view of one,
 * an evaluated result) and whose shapes are static: its tensor takes the
 * input's bytes on every run, where it was evaluated (Silero VAD
 * legacy's Reshape and Unsqueeze of its input: 10% of a run's
 * instructions).  No node writes in place into an unplanned value.
 * Marks the output planned and t->alias; the registry's first row,
 * rt_alias_build, then takes t (with fast paths off too: an alias
 * computes nothing). */
static void alias_view(Prepared *p, Task *t)
{
	const Node *n = t->n;
	ValId x = n->ninputs > 0 ? n->inputs[0] : -1;
	ValId o = n->noutputs == 1 ? n->outputs[0] : -1;
	if (!n->op || op_info[n->op].view != VIEW_ALIAS || x < 0 || o < 0 ||
	    p->cur[o] || node_has_subgraphs(n))
		return;
	const Value *xv = &p->g->vals[x], *ov = &p->g->vals[o];
	if (xv->tkind != TK_TENSOR || ov->tkind != TK_TENSOR ||
	    xv->dtype != ov->dtype || !shape_is_static(&xv->shape) ||
	    !shape_is_static(&ov->shape) || p->vt[x].nbytes != p->vt[o].nbytes)
		return;
	p->cur[o] = &p->vt[o];
	t->alias = true;
}

int rt_alias_build(RunCtx *s, Prepared *p, Task *t, FastKernel *k)
{
	(void)s;
	if (!t->alias)
		return 0;
	k->run = alias_run;
	if (shape_equal(&p->vt[t->n->inputs[0]].shape,
			&p->vt[t->n->outputs[0]].shape)) {
		/* the same bytes read the same way: either layout */
		rt_task_slots(t);
		rt_slot(t, 0)->group = rt_slot(t, -1)->group = 1;
	}
	return 1;
}

/* Task t for node n, matched to its kernel's registry row (fast.c). */
static int make_task(RunCtx *s, Prepared *p, Task *t, const Node *n)
{
	t->n = n;
	bool run = n->op && op_info[n->op].run;
	t->in = xmalloc(((size_t)n->ninputs + 1) * sizeof(*t->in));
	t->out = xmalloc(((size_t)n->noutputs + 1) * sizeof(*t->out));
	t->result = xmalloc(((size_t)n->noutputs + 1) * sizeof(*t->result));
	t->set = xmalloc((size_t)n->noutputs + 1);
	t->seq = run && touches_sequences(p->g, n);
	t->keep = t->seq || makes_strings(p->g, n);
	alias_view(p, t);
	for (int32_t k = 0; k < n->noutputs; k++) {
		ValId o = n->outputs[k];
		t->out[k] = o >= 0 && p->cur[o] ? &p->vt[o] : NULL;
	}
	if (rt_kernel_choose(s, p, t) < 0)
		return -1;
	p->planned &= !rt_evaluated(t) && !t->seq;
	return 0;
}

/* ---- GEARRT_PROFILE ---------------------------------------------------- */

typedef struct Profile {
	/* per task: the first run's time, and the later runs' summed (the
	 * first run touches its memory for the first time: on ISNet at
	 * 1024x1024, 2.8 s against 1.8 s a run later, so averaging it in
	 * made every node look slower) */
	uint64_t *first, *ns;
	uint64_t runs;
	uint64_t prepare_ns, first_ns; /* rt_prepare's, the first run's */
	bool nodes; /* GEARRT_PROFILE=nodes: a row per node too */
} Profile;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static Profile *profile_new(const RunCtx *s, int32_t ntasks)
{
	if (!s->profile)
		return NULL;
	Profile *pr = xmalloc(sizeof(*pr));
	pr->ns = xcalloc((size_t)ntasks + 1, sizeof(*pr->ns));
	pr->first = xcalloc((size_t)ntasks + 1, sizeof(*pr->first));
	pr->runs = pr->prepare_ns = pr->first_ns = 0;
	pr->nodes = s->profile == GEARRT_PROFILE_NODES;
	return pr;
}

/* Task i's time a run: the runs after the first, or the first if it is
 * the only one. */
static double task_ms(const Profile *pr, int32_t i)
{
	return pr->runs > 1 ? (double)pr->ns[i] / 1e6 / (double)(pr->runs - 1)
			    : (double)pr->first[i] / 1e6;
}

/* The rows of p's profile: per distinct op and kernel, its tasks'
 * time a run (task_ms); row[i] is the first task of each row. */
static int32_t profile_rows(const Prepared *p, int32_t *row, double *ms,
			    int32_t *count)
{
	int32_t nrows = 0;
	for (int32_t i = 0; i < p->ntasks; i++) {
		const Task *t = &p->tasks[i];
		int32_t r = 0;
		while (r < nrows &&
		       (p->tasks[row[r]].n->op != t->n->op ||
			strcmp(rt_kernel_name(&p->tasks[row[r]]),
			       rt_kernel_name(t))))
			r++;
		if (r == nrows) {
			row[nrows] = i;
			ms[nrows] = 0;
			count[nrows++] = 0;
		}
		ms[r] += task_ms(p->prof, i);
		count[r]++;
	}
	return nrows;
}

/* For a profile's node row: which of t's tensors are NHWC, which of a
 * convolution's are reordered, how many of a fused op's activations run
 * after its oneDNN primitive (dnnl.c make_attr). */
static const char *task_layouts(const Prepared *p, const Task *t, char *buf,
				size_t size)
{
	const Node *n = t->n;
	bool in = false, out = false;
	DnnlInfo d;
	for (int32_t k = 0; k < n->ninputs; k++)
		in |= rt_nhwc(p, n->inputs[k]);
	for (int32_t k = 0; k < n->noutputs; k++)
		out |= rt_nhwc(p, n->outputs[k]);
	if (t->kernel->backend != KB_DNNL || !dnnl_fast_info(&t->fast, &d))
		d = (DnnlInfo){ .impl = "" };
	char tail[32] = "";
	if (d.tail)
		snprintf(tail, sizeof(tail), "  %d act%s after", d.tail,
			 d.tail > 1 ? "s" : "");
	snprintf(buf, size, "%s%s%s%s%s%s%s", in ? "  in NHWC" : "",
		 out ? "  out NHWC" : "", d.x_in ? "  reorders X" : "",
		 d.y_out ? "  reorders Y" : "", tail, *d.impl ? "  " : "",
		 d.impl);
	return buf;
}

static void profile_print(const Prepared *p)
{
	const Profile *pr = p->prof;
	if (!pr->runs)
		return;
	size_t n = (size_t)p->ntasks + 1;
	int32_t *row = xmalloc(n * sizeof(*row)), *count = xmalloc(
							n * sizeof(*count));
	double *ms = xmalloc(n * sizeof(*ms)), total = 0;
	int32_t nrows = profile_rows(p, row, ms, count);
	for (int32_t r = 0; r < nrows; r++)
		total += ms[r];
	fprintf(stderr, "gearrt profile: graph '%s', prepared in %.3f ms, "
		"first run %.3f ms, %llu runs after it, %.3f ms a run in %d "
		"nodes\n",
		p->g->name, (double)pr->prepare_ns / 1e6,
		(double)pr->first_ns / 1e6, (unsigned long long)pr->runs - 1,
		total, (int)p->ntasks);
	for (int32_t done = 0; done < nrows; done++) {
		int32_t best = 0; /* largest row left (taken ones are -1) */
		for (int32_t r = 1; r < nrows; r++)
			if (row[best] < 0 || (row[r] >= 0 && ms[r] > ms[best]))
				best = r;
		const Task *t = &p->tasks[row[best]];
		char name[96];
		snprintf(name, sizeof(name), "%s/%s", t->n->op_type,
			 rt_kernel_name(t));
		fprintf(stderr, "  %-28s %5d nodes %10.3f ms %5.1f%%\n", name,
			(int)count[best], ms[best],
			total > 0 ? 100.0 * ms[best] / total : 0.0);
		row[best] = -1;
	}
	for (int32_t i = 0; pr->nodes && i < p->ntasks; i++) {
		const Task *t = &p->tasks[i];
		char lay[128];
		fprintf(stderr, "  node %-40s %s/%s %.3f ms%s\n", t->n->name,
			t->n->op_type, rt_kernel_name(t), task_ms(pr, i),
			task_layouts(p, t, lay, sizeof(lay)));
	}
	free(row);
	free(count);
	free(ms);
}

void rt_profile_each(const Prepared *p,
		     void (*fn)(void *user, const gearrt_node_time *t),
		     void *user)
{
	const Profile *pr = p->prof;
	for (int32_t i = 0; pr && pr->runs && i < p->ntasks; i++) {
		const Task *t = &p->tasks[i];
		gearrt_node_time nt = {
			.graph = p->g->name, .name = t->n->name,
			.op_type = t->n->op_type, .kernel = rt_kernel_name(t),
			.runs = pr->runs, .first_ms = (double)pr->first[i] / 1e6,
			.ms = task_ms(pr, i),
		};
		fn(user, &nt);
	}
}

static void profile_free(Prepared *p)
{
	if (!p->prof)
		return;
	if (p->tasks)
		profile_print(p);
	free(p->prof->ns);
	free(p->prof->first);
	free(p->prof);
}

/* ---- a small gear on one thread ------------------------------------- */

/* A node's work in flops, roughly: 2 per multiply-add of the matrix ops
 * (convolutions, products, attention, recurrences; the int8 and contrib
 * ones too), else 4 per output element.  Only compared with
 * rt_gear_serial. */
static double node_work(const Prepared *p, const Node *n)
{
	const Value *y = n->noutputs ? &p->g->vals[n->outputs[0]] : NULL;
	const Value *a = rt_in_val(p, n, 0), *w = rt_in_val(p, n, 1);
	if (!y || !shape_is_static(&y->shape))
		return 0;
	double out = (double)shape_numel(&y->shape);
	bool known = a && w && shape_is_static(&a->shape) &&
		     shape_is_static(&w->shape) && a->shape.rank >= 1 &&
		     w->shape.rank >= 1;
	if (n->op == OP_QLinearConv || n->op == OP_QLinearMatMul ||
	    n->op == OP_MS_QGemm) {
		w = rt_in_val(p, n, 3);
		known = known && w && shape_is_static(&w->shape) &&
			w->shape.rank >= 1;
	}
	if (!known)
		return 4 * out;
	double wn = (double)shape_numel(&w->shape);
	double an = (double)shape_numel(&a->shape);
	int64_t k = a->shape.dims[a->shape.rank - 1];
	switch (n->op) {
	case OP_Conv: case OP_FusedConv: case OP_ConvInteger:
	case OP_QLinearConv: case OP_ConvTranspose: case OP_DynQuantConv:
		return w->shape.dims[0] ? 2 * out * wn /
					  (double)w->shape.dims[0] : 0;
	case OP_MatMul: case OP_FusedMatMul: case OP_Gemm: case OP_FusedGemm:
	case OP_MatMulInteger: case OP_QLinearMatMul: case OP_DynQuantMatMul:
	case OP_MS_FusedMatMul: case OP_MS_MatMulIntegerToFloat:
	case OP_MS_DynamicQuantizeMatMul: case OP_MS_QGemm:
		return 2 * out * (double)k;
	case OP_MS_Attention: /* Q, K and V made from the input first */
		return 6 * out * (double)k +
		       4 * out * (double)y->shape.dims[y->shape.rank >= 2
							? y->shape.rank - 2
							: 0];
	case OP_Sdpa: case OP_MS_MultiHeadAttention:
		return 4 * out * (double)y->shape.dims[y->shape.rank >= 2
						       ? y->shape.rank - 2 : 0];
	case OP_LSTM: case OP_GRU: case OP_RNN: {
		const Value *r = rt_in_val(p, n, 2);
		double rn = r && shape_is_static(&r->shape)
				    ? (double)shape_numel(&r->shape) : 0;
		return k ? 2 * an / (double)k * (wn + rn) : 0;
	}
	default:
		return 4 * out;
	}
}

/* A gear of less work than rt_gear_serial (flops by node_work), or of
 * less than rt_node_serial a node on average, runs on one thread whatever
 * the session's count: its kernels' regions would cost more to hand out
 * than they save.  On libgomp (its workers asleep between runs) the
 * limits were 64 MFLOP and 4 a node; on gearrt's pool (workers up at a
 * run's start, spinning through it) 2 threads gain from 1.5 MFLOP a
 * node.  Medians of runs 2-5 after 150 ms idle (bench_run over a pipe),
 * 2 threads at 64 and 4 / at 16 and 1 / 1 thread, in ms: MobileNetV3
 * small (1.5 MFLOP a node) 1.57 / 1.20 / 1.50, MNASNet 0.5 2.41 / 1.97
 * / 2.41, PP-OCRv4 cls at batch 6 (2.6) 2.34 / 1.98 / 2.27,
 * ShuffleNetV2 (2.1) 3.58 / 3.29 / 3.56; cls at batch 1 (33 MFLOP, 0.4
 * a node) stays on one thread: 0.36 there, 0.46 on two; Silero VAD (1
 * MFLOP) 0.03 against 0.04. */
double rt_gear_serial = 16.0 * (1 << 20);
double rt_node_serial = 1.0 * (1 << 20);

static bool gear_small(const Prepared *p)
{
	const Graph *g = p->g;
	double sum = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		sum += node_work(p, &g->nodes[i]);
	return sum < rt_gear_serial || sum < rt_node_serial * g->nnodes;
}

static Prepared *prepare_tasks(RunCtx *s, Prepared *p, uint64_t t0);

Prepared *rt_prepare(RunCtx *s, Graph *g)
{
	return rt_prepare_in(s, g, s->arena, s->model->arena_bytes);
}

Prepared *rt_prepare_in(RunCtx *s, Graph *g, uint8_t *mem,
			uint64_t mem_bytes)
{
	uint64_t t0 = now_ns();
	Prepared *p = xmalloc(sizeof(*p));
	memset(p, 0, sizeof(*p));
	p->g = g;
	p->mem = mem;
	p->mem_bytes = mem_bytes;
	p->planned = g->plan != NULL;
	p->vt = xmalloc(((size_t)g->nvals + 1) * sizeof(Tensor));
	memset(p->vt, 0, ((size_t)g->nvals + 1) * sizeof(Tensor));
	p->cur = xmalloc(((size_t)g->nvals + 1) * sizeof(*p->cur));
	memset(p->cur, 0, ((size_t)g->nvals + 1) * sizeof(*p->cur));
	p->own_out = xmalloc(((size_t)g->noutputs + 1) * sizeof(Tensor));
	memset(p->own_out, 0, ((size_t)g->noutputs + 1) * sizeof(Tensor));
	p->stage = xcalloc((size_t)g->noutputs + 1, sizeof(*p->stage));
	if (resolve_values(p) < 0) {
		rt_prepared_free(p);
		return NULL;
	}
	/* a small gear's kernels are made for one thread (each takes its
	 * count when made) */
	int threads = s->threads;
	if (threads > 1 && rt_gear_serial > 0 && gear_small(p))
		s->threads = 1;
	Prepared *r = prepare_tasks(s, p, t0);
	s->threads = threads;
	return r;
}

/* rt_prepare_in's tasks, their layouts and kernels (preparation begun
 * at t0): p, or NULL (p freed). */
static Prepared *prepare_tasks(RunCtx *s, Prepared *p, uint64_t t0)
{
	Graph *g = p->g;
	const MemPlan *pl = g->plan;
	int32_t nodes = pl ? pl->norder : g->nnodes;
	p->tasks = xmalloc(((size_t)nodes + 1) * sizeof(Task));
	memset(p->tasks, 0, ((size_t)nodes + 1) * sizeof(Task));
	for (int32_t i = 0; i < nodes; i++) {
		const Node *n = &g->nodes[pl ? pl->order[i] : i];
		if (constwork_done(n))
			continue; /* done when the model opened */
		Task *t = &p->tasks[p->ntasks++];
		if (make_task(s, p, t, n) < 0) {
			rt_prepared_free(p);
			return NULL;
		}
	}
	if (rt_layout(s, p) < 0) {
		rt_prepared_free(p);
		return NULL;
	}
	for (int32_t i = 0; i < p->ntasks; i++)
		if (rt_kernel_build(s, p, &p->tasks[i]) < 0) {
			rt_prepared_free(p);
			return NULL;
		}
	if (rt_map_io(s->model, p) < 0) {
		rt_prepared_free(p);
		return NULL;
	}
	p->prof = profile_new(s, p->ntasks);
	for (int32_t k = 0; k < g->noutputs; k++) {
		Tensor *t = &p->own_out[k];
		*t = p->vt[g->outputs[k]];
		t->data = p->cur[g->outputs[k]] ? big_alloc(t->nbytes, NULL)
						: NULL;
		t->layout = TENSOR_ROWS;
		if ((p->cur[g->outputs[k]] && !t->data) ||
		    (rt_nhwc(p, g->outputs[k]) &&
		     !(p->stage[k] = big_alloc(t->nbytes, NULL)))) {
			error("output '%s': cannot allocate %zu bytes",
			      t->name, t->nbytes);
			rt_prepared_free(p);
			return NULL;
		}
	}
	if (p->prof)
		p->prof->prepare_ns = now_ns() - t0;
	return p;
}

void rt_prepared_free(Prepared *p)
{
	if (!p)
		return;
	profile_free(p);
	for (int32_t i = 0; i < p->ntasks; i++) {
		if (p->tasks[i].fast.free)
			p->tasks[i].fast.free(p->tasks[i].fast.state);
		free(p->tasks[i].lay);
		free(p->tasks[i].in);
		free(p->tasks[i].out);
		free(p->tasks[i].result);
		free(p->tasks[i].set);
	}
	for (int32_t k = 0; p->own_out && k < p->g->noutputs; k++)
		free((void *)p->own_out[k].data);
	free(p->own_out);
	for (int32_t k = 0; p->stage && k < p->g->noutputs; k++)
		free(p->stage[k]);
	free(p->stage);
	free(p->in_at);
	free(p->out_at);
	free(p->tasks);
	free(p->vt);
	free(p->cur);
	free(p);
}

static const Tensor *cur_value(void *exec, ValId v)
{
	Prepared *p = exec;
	return v >= 0 && v < p->g->nvals ? p->cur[v] : NULL;
}

static int64_t model_opset_or_newest(const Model *m)
{
	int64_t v = model_opset(m);
	return v > 0 ? v : OPSET_NEWEST;
}

static int gather_inputs(Prepared *p, Task *t)
{
	const Node *n = t->n;
	for (int32_t k = 0; k < n->ninputs; k++) {
		ValId v = n->inputs[k];
		t->in[k] = v >= 0 ? p->cur[v] : NULL;
		if (v >= 0 && !t->in[k])
			return error("node '%s' (%s): input %d ('%s') has no "
				     "value", n->name, n->op_type, k,
				     p->g->vals[v].name);
	}
	return 0;
}

static int run_fast(Task *t)
{
	clear_error();
	if (t->fast.run(t->fast.state, t->in, t->out) == 0)
		return 0;
	const Node *n = t->n;
	return error_prefix("node '%s' (%s)", n->name, n->op_type);
}

static int run_reference(RunCtx *s, Prepared *p, Task *t)
{
	const Node *n = t->n;
	OpBind b = { .in = t->in, .out = t->out, .set = t->set,
		     .result = t->seq ? t->result : NULL,
		     .value = cur_value, .exec = p };
	OpCtx c = { .model = s->model->m, .g = p->g, .n = (Node *)n,
		    .opset = model_opset_or_newest(s->model->m),
		    .fold_limit = INT64_MAX, .bind = &b,
		    .arena = t->keep ? &s->pool : &s->scratch };
	memset(t->set, 0, (size_t)n->noutputs);
	clear_error();
	int rc = op_info[n->op].run(&c);
	if (!t->keep)
		arena_reset(&s->scratch);
	if (rc < 0)
		return -1;
	for (int32_t k = 0; k < n->noutputs; k++) {
		ValId o = n->outputs[k];
		if (o >= 0 && !t->set[k])
			return *last_error()
				       ? -1
				       : op_error(&c, "output %d ('%s') was not "
						  "computed", k,
						  p->g->vals[o].name);
		if (o >= 0 && !t->out[k])
			p->cur[o] = t->result[k];
	}
	return 0;
}

/* An evaluated output into its planned buffer (dtype and shape must be
 * the plan's), else kept where evaluation put it. */
static int take_output(Prepared *p, const Node *n, int32_t k, const Tensor *t)
{
	char a[160], b[160];
	ValId o = n->outputs[k];
	Tensor *dst = p->cur[o] ? &p->vt[o] : NULL;
	if (!dst) {
		p->cur[o] = t;
		return 0;
	}
	if (t->dtype != dst->dtype || !shape_equal(&t->shape, &dst->shape))
		return error("node '%s' (%s): output %d is %s %s at run time, "
			     "the plan holds %s %s", n->name, n->op_type, k,
			     dtype_name(t->dtype),
			     shape_str(&t->shape, a, sizeof(a)),
			     dtype_name(dst->dtype),
			     shape_str(&dst->shape, b, sizeof(b)));
	if (t->data != dst->data && t->nbytes)
		memmove(tensor_mut(dst), t->data, t->nbytes);
	return 0;
}

static int run_evaluated(RunCtx *s, Prepared *p, Task *t)
{
	const Node *n = t->n;
	EvalSource src = { cur_value, p };
	const Tensor **outs = arena_array(&s->pool, (size_t)n->noutputs + 1,
					  sizeof(*outs));
	if (runspec_node(s->model->m, p->g, n, &src, &s->pool, outs) < 0)
		return -1;
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0 && take_output(p, n, k, outs[k]) < 0)
			return -1;
	return 0;
}

/* Runs t's kernel: by its registry row's backend. */
static int run_task(RunCtx *s, Prepared *p, Task *t)
{
	switch (t->kernel->backend) {
	case KB_PLAIN:
	case KB_DNNL: return run_fast(t);
	case KB_REFERENCE: return run_reference(s, p, t);
	default: return run_evaluated(s, p, t);
	}
}

/* The graph's outputs into the caller's tensors: GEARRT_E_OUTPUT if a
 * caller's buffer is too small. */
static gearrt_status deliver(Prepared *p, gearrt_tensor *const *out)
{
	const Graph *g = p->g;
	for (int32_t k = 0; k < g->noutputs; k++) {
		gearrt_tensor *o = out[k];
		const Tensor *t = p->cur[g->outputs[k]];
		if (!o)
			continue;
		if (!t)
			return error("output '%s' was not computed",
				     g->vals[g->outputs[k]].name), GEARRT_E_RUN;
		o->dtype = t->dtype;
		o->rank = t->shape.rank;
		for (int32_t d = 0; d < t->shape.rank; d++)
			o->dims[d] = t->shape.dims[d];
		if (o->data && o->size < t->nbytes)
			return error("output '%s' needs %zu bytes, its buffer "
				     "has %zu", t->name, t->nbytes, o->size),
			       GEARRT_E_OUTPUT;
		if (p->stage[k]) { /* computed channels-last */
			if (!o->data) {
				o->data = (void *)p->own_out[k].data;
				o->size = t->nbytes;
			}
			rt_nhwc_to_rows(t, o->data);
		} else if (!o->data) {
			o->data = (void *)t->data;
			o->size = t->nbytes;
		} else if (o->data != t->data && t->nbytes) {
			memmove(o->data, t->data, t->nbytes);
		}
	}
	return GEARRT_OK;
}

/* Caller buffers into the graph's input and output tensors.  An output
 * is computed in the caller's buffer only if that is large enough and
 * 64-byte aligned (rt_aligned), else in the session's and copied at
 * delivery. */
static void bind_io(Prepared *p, const gearrt_tensor *const *in,
		    gearrt_tensor *const *out)
{
	const Graph *g = p->g;
	for (int32_t k = 0; k < g->ninputs; k++) {
		Tensor *t = &p->vt[g->inputs[k]];
		t->data = in[k]->data;
		if (!shape_is_static(&g->vals[g->inputs[k]].shape)) {
			/* a graph run at the inputs' own dims (a scope compile's
			 * root): its nodes are evaluated at these shapes */
			t->shape = shape_of(in[k]->rank, in[k]->dims);
			t->nbytes = (size_t)shape_bytes(&t->shape, t->dtype);
		}
	}
	for (int32_t k = 0; k < g->noutputs; k++) {
		ValId v = g->outputs[k];
		if (g->vals[v].kind != VAL_NODE || !p->cur[v] ||
		    p->cur[v] != &p->vt[v])
			continue;
		bool own = !out[k] || !out[k]->data ||
			   out[k]->size < p->vt[v].nbytes ||
			   !rt_aligned(out[k]->data);
		p->vt[v].data = p->stage[k] ? p->stage[k]
			      : own ? p->own_out[k].data : out[k]->data;
	}
}

/* ---- gearrt_options.on_node ------------------------------------------- */

/* Output value v of a node as the API gives it (gearrt.h
 * gearrt_node_info): row-major, strings as char *, in s's scratch. */
static void api_output(RunCtx *s, const Prepared *p, ValId v,
		       gearrt_tensor *o)
{
	const Tensor *t = p->cur[v];
	*o = (gearrt_tensor){ .name = p->g->vals[v].name };
	if (!t || p->g->vals[v].tkind != TK_TENSOR)
		return; /* a sequence: no data */
	o->dtype = t->dtype;
	o->rank = t->shape.rank;
	memcpy(o->dims, t->shape.dims, (size_t)t->shape.rank * sizeof(int64_t));
	o->data = (void *)t->data;
	o->size = t->nbytes;
	if (t->layout == TENSOR_NHWC) {
		o->data = arena_alloc(&s->scratch, t->nbytes + 1);
		rt_nhwc_to_rows(t, o->data);
	} else if (t->dtype == DT_STRING) {
		size_t n = (size_t)shape_numel(&t->shape);
		const Bytes *b = t->data;
		char **str = arena_array(&s->scratch, n + 1, sizeof(char *));
		for (size_t k = 0; k < n; k++)
			str[k] = arena_strndup(&s->scratch,
					       (const char *)b[k].data, b[k].len);
		o->data = str;
		o->size = n * sizeof(char *);
	}
}

/* Tells on_node what task t computed: 0, or -1 with an error. */
static int report_node(RunCtx *s, const Prepared *p, const Task *t)
{
	const Node *n = t->n;
	gearrt_tensor *out = arena_array(&s->scratch, (size_t)n->noutputs + 1,
					 sizeof(*out));
	size_t nout = 0;
	for (int32_t k = 0; k < n->noutputs; k++)
		if (n->outputs[k] >= 0)
			api_output(s, p, n->outputs[k], &out[nout++]);
	gearrt_node_info info = {
		.graph = p->g->name, .name = n->name, .op_type = n->op_type,
		.kernel = rt_kernel_name(t), .outputs = out, .noutputs = nout,
		.fused = n->fused, .nfused = (size_t)n->nfused,
	};
	clear_error();
	int rc = s->on_node(s->on_node_user, &info);
	arena_reset(&s->scratch);
	if (!rc)
		return 0;
	return *last_error() ? error_prefix("node '%s' (%s)", n->name,
					    n->op_type)
			     : error("node '%s' (%s): on_node returned %d",
				     n->name, n->op_type, rc);
}

/* Runs p's tasks in order (p->running the one running): 0, or -1 with
 * an error. */
static int run_tasks(RunCtx *s, Prepared *p)
{
	Profile *pr = p->prof;
	for (int32_t i = 0; i < p->ntasks; i++) {
		Task *t = &p->tasks[i];
		uint64_t t0 = pr ? now_ns() : 0;
		p->running = i;
		if (gather_inputs(p, t) < 0 || run_task(s, p, t) < 0)
			return -1;
		if (pr)
			*(pr->runs ? &pr->ns[i] : &pr->first[i]) +=
				now_ns() - t0;
		if (s->on_node && report_node(s, p, t) < 0)
			return -1;
	}
	return 0;
}

/* A run's kernels allocate in a trap (util.h OomTrap): a tensor too
 * large for memory or the address space is GEARRT_E_RUN naming its
 * node, not an abort. */
gearrt_status rt_exec(RunCtx *s, Prepared *p,
		      const gearrt_tensor *const *in, gearrt_tensor *const *out)
{
	arena_reset(&s->pool);
	for (int32_t i = 0; i < p->ntasks; i++) {
		Task *t = &p->tasks[i];
		for (int32_t k = 0; (rt_evaluated(t) || t->seq) &&
				    k < t->n->noutputs; k++)
			if (t->n->outputs[k] >= 0 && !t->out[k])
				p->cur[t->n->outputs[k]] = NULL;
	}
	Profile *pr = p->prof;
	uint64_t run0 = pr ? now_ns() : 0;
	bind_io(p, in, out);
	OomTrap trap;
	if (setjmp(trap.jb))
		return error("node '%s' (%s): cannot allocate %zu bytes",
			     p->tasks[p->running].n->name,
			     p->tasks[p->running].n->op_type, trap.bytes),
		       GEARRT_E_RUN;
	oom_trap_push(&trap);
	int rc = run_tasks(s, p);
	oom_trap_pop(&trap);
	if (rc < 0)
		return GEARRT_E_RUN;
	gearrt_status st = deliver(p, out);
	if (pr && !pr->runs++)
		pr->first_ns = now_ns() - run0;
	return st;
}
