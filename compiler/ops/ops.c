/* compiler/ops/ops.c - the op table built from GEARC_OPS, and lookups. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "opimpl.h"

/* The ew column as OpInfo's kind and dtypes; the kernels are for
 * elementwise.c and logic.c. */
#define EW_NONE EW_KIND_NONE, 0
#define EW_MATH(dts, f) EW_KIND_UNARY, dts
#define EW_FLOAT(dts, f) EW_KIND_UNARY, dts
#define EW_EXACT(dts, f) EW_KIND_UNARY, dts
#define EW_ARITH(f) EW_KIND_BINARY, 0
#define EW_LOGIC(f) EW_KIND_BINARY, 0

const OpInfo op_info[OP_COUNT] = {
	[OP_UNKNOWN] = { "?", "", 0, 0, VIEW_NONE, INPLACE_NONE, SHAPE_OWN,
			 EW_NONE },
#define X(nm, inf, run, vw, ip, sh, ew) \
	[OP_##nm] = { #nm, "", inf, run, vw, ip, sh, ew },
	GEARC_OPS(X)
#undef X
#define X(nm, inf, run, vw, ip, sh, ew) \
	[OP_##nm] = { #nm, GEARC_DOMAIN, inf, run, vw, ip, sh, ew },
	GEARC_OWN_OPS(X)
#undef X
#define X(nm, inf, run, vw, ip, sh, ew) \
	[OP_MS_##nm] = { #nm, MS_DOMAIN, inf, run, vw, ip, sh, ew },
	GEARC_MS_OPS(X)
#undef X
#define X(nm, inf, run, vw, ip, sh, ew) \
	[OP_MS_##nm] = { #nm, "", inf, run, vw, ip, sh, ew },
	GEARC_ORT_OPS(X)
#undef X
};

bool domain_is_default(const char *d)
{
	return !d || !*d || !strcmp(d, "ai.onnx");
}

bool domain_is_ms(const char *d)
{
	return d && !strcmp(d, MS_DOMAIN);
}

enum { BY_DEFAULT, BY_GEARC, BY_MS, BY_COUNT };

/* Per domain, its ops by name. */
static NameMap byname[BY_COUNT];
static pthread_once_t byname_once = PTHREAD_ONCE_INIT;

static int domain_index(const char *d)
{
	return domain_is_default(d) ? BY_DEFAULT
	       : !strcmp(d, GEARC_DOMAIN) ? BY_GEARC
	       : domain_is_ms(d)	  ? BY_MS
					  : -1;
}

static void byname_init(void)
{
	for (int i = 1; i < OP_COUNT; i++)
		namemap_put(&byname[domain_index(op_info[i].domain)],
			    op_info[i].name, i);
	/* ONNX Runtime's FusedConv and FusedGemm compute what gearc's do:
	 * contrib_import gives them gearc's attributes and domain. */
	namemap_put(&byname[BY_MS], "FusedConv", OP_FusedConv);
	namemap_put(&byname[BY_MS], "FusedGemm", OP_FusedGemm);
}

int op_lookup(const char *domain, const char *op_type)
{
	int d = domain_index(domain);
	if (d < 0)
		return OP_UNKNOWN;
	pthread_once(&byname_once, byname_init);
	int op = namemap_get(&byname[d], op_type);
	return op < 0 ? OP_UNKNOWN : op;
}

Value *op_in(OpCtx *c, int i)
{
	if (i < 0 || i >= c->n->ninputs || c->n->inputs[i] < 0)
		return NULL;
	return &c->g->vals[c->n->inputs[i]];
}

const Tensor *op_const_in(OpCtx *c, int i)
{
	if (c->bind)
		return i >= 0 && i < c->n->ninputs ? c->bind->in[i] : NULL;
	Value *v = op_in(c, i);
	return v ? v->konst : NULL;
}

Value *op_out(OpCtx *c, int i)
{
	if (i < 0 || i >= c->n->noutputs || c->n->outputs[i] < 0)
		return NULL;
	return &c->g->vals[c->n->outputs[i]];
}

void op_set_out(OpCtx *c, int i, int dtype, const Shape *s)
{
	Value *v = op_out(c, i);
	if (!v || c->bind)
		return;
	v->dtype = dtype;
	v->shape = *s;
}

/* Run time: t into the bound buffer of output i.  A kernel that made
 * something else than the plan holds leaves the output unset, and the
 * runtime reports it. */
static void bind_set(OpCtx *c, int i, const Tensor *t)
{
	char a[160], b[160];
	Tensor *o = c->bind->out[i];
	if (!o) {
		if (c->bind->result) {
			c->bind->result[i] = t;
			c->bind->set[i] = 1;
		}
		return;
	}
	if (t->dtype != o->dtype || !shape_equal(&t->shape, &o->shape) ||
	    t->nbytes != o->nbytes) {
		op_error(c, "output %d is %s %s, the plan holds %s %s", i,
			 dtype_name(t->dtype), shape_str(&t->shape, a, sizeof(a)),
			 dtype_name(o->dtype), shape_str(&o->shape, b, sizeof(b)));
		return;
	}
	if (t->data != o->data && t->nbytes)
		memmove(tensor_mut(o), t->data, t->nbytes);
	c->bind->set[i] = 1;
}

void op_set_const(OpCtx *c, int i, const Tensor *t)
{
	if (c->bind) {
		if (i >= 0 && i < c->n->noutputs)
			bind_set(c, i, t);
		return;
	}
	Value *v = op_out(c, i);
	if (!v)
		return;
	v->dtype = t->dtype;
	v->shape = t->shape;
	v->konst = t;
}

Tensor *op_new_output(OpCtx *c, int i, int dt, const Shape *s)
{
	Tensor *o = c->bind && i >= 0 && i < c->n->noutputs ? c->bind->out[i]
							     : NULL;
	if (o && o->dtype == dt && shape_equal(&o->shape, s))
		return o;
	return op_new_tensor(c, dt, s);
}

Tensor *op_new_output_zeroed(OpCtx *c, int i, int dt, const Shape *s)
{
	Tensor *o = op_new_output(c, i, dt, s);
	if (o && c->bind && o->nbytes)
		memset(tensor_mut(o), 0, o->nbytes);
	return o;
}

/* The contents of output i the kernel set: the bound buffer at run time
 * (or, for an output the runtime did not plan, the tensor published), the
 * value's konst when folding. */
Tensor *op_out_result(OpCtx *c, int i)
{
	if (i < 0 || i >= c->n->noutputs)
		return NULL;
	if (c->bind) {
		if (!c->bind->set[i])
			return NULL;
		return c->bind->out[i] ? c->bind->out[i]
				       : (Tensor *)(uintptr_t)c->bind->result[i];
	}
	Value *v = op_out(c, i);
	return v ? (Tensor *)(uintptr_t)v->konst : NULL;
}

const Tensor *op_seq_in(OpCtx *c, int i)
{
	return c->bind && i >= 0 && i < c->n->ninputs ? c->bind->in[i] : NULL;
}

Tensor *op_seq_out(OpCtx *c, int i)
{
	return c->bind && i >= 0 && i < c->n->noutputs ? c->bind->out[i]
						       : NULL;
}

void op_set_seq(OpCtx *c, int i, int dt, const Tensor **els, int64_t n)
{
	Tensor *o = op_seq_out(c, i);
	if (!o)
		return;
	o->dtype = dt;
	o->shape = shape_of(1, &n);
	o->data = els;
	o->nbytes = (size_t)n * sizeof(*els);
	c->bind->set[i] = 1;
}

int op_error(OpCtx *c, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error("node '%s' (%s): %s", c->n->name, c->n->op_type, msg);
}
