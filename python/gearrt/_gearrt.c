/*
 * python/gearrt/_gearrt.c - the CPython binding of libgearrt
 * (runtime/gearrt.h): gearrt.Model, gearrt.Session and their errors.
 *
 *   m = gearrt.Model("rec.om")
 *   s = m.session(threads=1)
 *   outs = s.run({"x": pixels})          # {"probs": ndarray}
 *
 * Inputs.  An input that is a C-contiguous, aligned, native-endian numpy
 * array (or buffer) is handed to the library as it is: no copy.  Any other
 * array is copied once into that form (its dtype kept: a wrong dtype is the
 * library's error, as a wrong rank or dims are); a list or scalar is
 * converted once to the input's dtype.  A string input (a '<U' array, or
 * an object array of str) is copied to UTF-8 C strings for the run only.
 *
 * Outputs.  By default each output is copied out of the session's memory
 * into a fresh array the caller owns (strings: an object array of str, as
 * onnxruntime returns them); run(..., out={name: array}) has the library
 * write straight into the caller's array instead (no string output).
 *
 * Threads.  The GIL is released while the library runs, and any number of
 * threads may run one session at once (gearrt.h: each run takes a run
 * context of its own).  Each run() has its own tensors here too (a Call),
 * and copies its outputs out of the session's memory, which is the
 * calling thread's until its next run, before it returns.  close() while
 * runs are under way refuses (Session_close says why it does not wait).
 *
 * Lifetimes.  A Session holds its Model; Model.close() closes the file at
 * once if no session is open, else when its last session goes, and every
 * later call on the model or its sessions raises gearrt.Error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "compiler/cpu.h"
#include "runtime/gearrt.h"

#ifndef GEARC_VERSION
#error "build with -DGEARC_VERSION='\"x.y.z\"' (the Makefile's VERSION)"
#endif

/* ---- dtypes ------------------------------------------------------------ */

/* Every dtype that crosses the API and its numpy type: one row each.
 * numpy has no bfloat16: those tensors cross as uint16 arrays of their
 * bits (the input's row is found first, so uint16 feeds a bfloat16 input).
 * Strings are object arrays of str, as onnxruntime returns them; a string
 * input also takes a numpy unicode ('<U') array (gearrt_of). */
static const struct {
	int32_t gearrt;
	int npy;
} DTYPES[] = {
	{ GEARRT_FLOAT32, NPY_FLOAT32 }, { GEARRT_UINT8, NPY_UINT8 },
	{ GEARRT_INT8, NPY_INT8 },	 { GEARRT_UINT16, NPY_UINT16 },
	{ GEARRT_INT16, NPY_INT16 },	 { GEARRT_INT32, NPY_INT32 },
	{ GEARRT_INT64, NPY_INT64 },	 { GEARRT_BOOL, NPY_BOOL },
	{ GEARRT_FLOAT16, NPY_FLOAT16 }, { GEARRT_FLOAT64, NPY_FLOAT64 },
	{ GEARRT_UINT32, NPY_UINT32 },	 { GEARRT_UINT64, NPY_UINT64 },
	{ GEARRT_BFLOAT16, NPY_UINT16 }, { GEARRT_STRING, NPY_OBJECT },
};
enum { NDTYPES = sizeof(DTYPES) / sizeof(DTYPES[0]) };

/* The numpy type of a gearrt dtype, -1 if it has none. */
static int npy_of(int32_t dtype)
{
	for (int i = 0; i < NDTYPES; i++)
		if (DTYPES[i].gearrt == dtype)
			return DTYPES[i].npy;
	return -1;
}

/* The gearrt dtype of a numpy dtype: 'want' (the input's) if it maps to
 * that numpy type, else the first row's; -1 if none. */
static int32_t gearrt_of(PyArray_Descr *d, int32_t want)
{
	if (d->type_num == NPY_UNICODE)
		return GEARRT_STRING;
	int w = npy_of(want);
	if (w >= 0 && PyArray_EquivTypenums(d->type_num, w))
		return want;
	for (int i = 0; i < NDTYPES; i++)
		if (PyArray_EquivTypenums(d->type_num, DTYPES[i].npy))
			return DTYPES[i].gearrt;
	return -1;
}

/* ---- errors ------------------------------------------------------------ */

static PyObject *Error, *NoGearError;

/* Raises the library's message for status st; returns NULL. */
static PyObject *raise_status(gearrt_status st)
{
	PyErr_SetString(st == GEARRT_E_NO_GEAR ? NoGearError : Error,
			gearrt_last_error());
	return NULL;
}

/* ---- result types ------------------------------------------------------ */

static PyTypeObject IOInfoType, GearType, StatsType;

static PyStructSequence_Field io_fields[] = {
	{ "name", "the input's or output's name" },
	{ "dtype", "its numpy dtype (uint16 for bfloat16, object for string)" },
	{ "shape", "its dims, None where they vary with the gear" },
	{ "type", "the library's dtype name: 'float32', 'bfloat16', ..." },
	{ NULL, NULL },
};
static PyStructSequence_Desc io_desc = {
	"gearrt.IOInfo",
	"An input or output of a model: (name, dtype, shape, type).",
	io_fields, 4,
};

static PyStructSequence_Field gear_fields[] = {
	{ "index", "the gear's number, as Session.last_gear gives it" },
	{ "dims", "the values of every input's varying dims, inputs in "
		  "order, axes in order" },
	{ "outputs", "dict: output name -> its exact shape at this gear" },
	{ NULL, NULL },
};
static PyStructSequence_Desc gear_desc = {
	"gearrt.Gear", "One gear of a model: (index, dims, outputs).",
	gear_fields, 3,
};

static PyStructSequence_Field stats_fields[] = {
	{ "runs", "successful runs" },
	{ "gear_runs", "... on a gear (or a static compile)" },
	{ "dynamic_runs", "... on the dynamic graph" },
	{ "rebuilds", "specialisations built" },
	{ "cache_hits", "runs that reused one" },
	{ "evictions", "specialisations dropped for room" },
	{ "cached", "specialisations held now" },
	{ "last_rebuilt", "True if the last run built its specialisation" },
	{ "last_rebuild_ms", "the last rebuild's wall time" },
	{ "prepare_ms", "wall time preparing gears (first runs' set-up)" },
	{ NULL, NULL },
};
static PyStructSequence_Desc stats_desc = {
	"gearrt.Stats",
	"A session's counters since it was created (gearrt_stats).",
	stats_fields, 10,
};

/* (d0, d1, ...) with None for negative dims. */
static PyObject *shape_tuple(const int64_t *dims, int32_t rank)
{
	PyObject *t = PyTuple_New(rank);
	for (int32_t k = 0; t && k < rank; k++) {
		PyObject *v = dims[k] < 0 ? Py_NewRef(Py_None)
					  : PyLong_FromLongLong(dims[k]);
		if (!v) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, k, v);
	}
	return t;
}

static PyObject *io_info(const gearrt_tensor *t)
{
	int npy = npy_of(t->dtype);
	PyObject *r = PyStructSequence_New(&IOInfoType);
	if (!r)
		return NULL;
	PyObject *items[4] = {
		PyUnicode_FromString(t->name),
		npy < 0 ? Py_NewRef(Py_None)
			: (PyObject *)PyArray_DescrFromType(npy),
		shape_tuple(t->dims, t->rank),
		PyUnicode_FromString(gearrt_dtype_name(t->dtype)
					     ? gearrt_dtype_name(t->dtype)
					     : "?"),
	};
	for (int i = 0; i < 4; i++) {
		if (!items[i]) {
			for (int k = 0; k < 4; k++)
				Py_XDECREF(items[k]);
			Py_DECREF(r);
			return NULL;
		}
		PyStructSequence_SET_ITEM(r, i, items[i]);
	}
	return r;
}

/* ---- Model ------------------------------------------------------------- */

typedef struct {
	PyObject_HEAD
	gearrt_model *m; /* NULL once closed and its last session gone */
	PyObject *path;
	PyObject *inputs, *outputs, *gears; /* tuples */
	PyObject *in_names, *out_names;	    /* tuples of str */
	PyObject *meta;			    /* dict: gearrt_model_meta's */
	PyObject *dim_names; /* per input, per axis: str or None */
	int closed;
	Py_ssize_t nsessions; /* sessions not yet destroyed */
} ModelObject;

static PyTypeObject ModelType, SessionType;

/* Closes the library's model once it is closed and unused. */
static void model_release(ModelObject *self)
{
	if (self->closed && !self->nsessions && self->m) {
		gearrt_model_close(self->m);
		self->m = NULL;
	}
}

/* Raises unless the model is open. */
static int model_check_open(ModelObject *self)
{
	if (self->closed)
		PyErr_Format(Error, "model %R is closed", self->path);
	else if (!self->m)
		PyErr_SetString(Error, "model not open: make it with "
				       "gearrt.Model(path)");
	else
		return 0;
	return -1;
}

static PyObject *info_tuple(gearrt_model *m, size_t n,
			    gearrt_status (*get)(const gearrt_model *, size_t,
						 gearrt_tensor *),
			    PyObject **names)
{
	PyObject *t = PyTuple_New((Py_ssize_t)n);
	*names = PyTuple_New((Py_ssize_t)n);
	if (!t || !*names)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		gearrt_tensor info;
		if (get(m, i, &info) != GEARRT_OK) {
			raise_status(GEARRT_E_ARG);
			goto fail;
		}
		PyObject *r = io_info(&info);
		if (!r)
			goto fail;
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, r);
		PyObject *name = PyStructSequence_GET_ITEM(r, 0);
		PyTuple_SET_ITEM(*names, (Py_ssize_t)i, Py_NewRef(name));
	}
	return t;
fail:
	Py_XDECREF(t);
	Py_CLEAR(*names);
	return NULL;
}

static PyObject *gear_info(ModelObject *self, size_t g)
{
	const int64_t *dims;
	size_t nd;
	if (gearrt_gear_dims(self->m, g, &dims, &nd) != GEARRT_OK)
		return raise_status(GEARRT_E_ARG);
	PyObject *r = PyStructSequence_New(&GearType);
	PyObject *d = PyTuple_New((Py_ssize_t)nd), *outs = PyDict_New();
	if (!r || !d || !outs)
		goto fail;
	for (size_t k = 0; k < nd; k++) {
		PyObject *v = PyLong_FromLongLong(dims[k]);
		if (!v)
			goto fail;
		PyTuple_SET_ITEM(d, (Py_ssize_t)k, v);
	}
	for (size_t i = 0; i < gearrt_output_count(self->m); i++) {
		gearrt_tensor info;
		if (gearrt_gear_output(self->m, g, i, &info) != GEARRT_OK) {
			raise_status(GEARRT_E_ARG);
			goto fail;
		}
		PyObject *sh = shape_tuple(info.dims, info.rank);
		if (!sh || PyDict_SetItem(outs, PyTuple_GET_ITEM(
							self->out_names,
							(Py_ssize_t)i),
					  sh) < 0) {
			Py_XDECREF(sh);
			goto fail;
		}
		Py_DECREF(sh);
	}
	PyStructSequence_SET_ITEM(r, 0, PyLong_FromSize_t(g));
	if (!PyStructSequence_GET_ITEM(r, 0))
		goto fail;
	PyStructSequence_SET_ITEM(r, 1, d);
	PyStructSequence_SET_ITEM(r, 2, outs);
	return r;
fail:
	Py_XDECREF(r);
	Py_XDECREF(d);
	Py_XDECREF(outs);
	return NULL;
}

/* Every key gearrt_model_meta knows, as a dict of str. */
static PyObject *meta_dict(gearrt_model *m)
{
	static const char *const keys[] = {
		"producer_name", "producer_version", "domain",
		"model_version", "graph_name",	     "source_file",
	};
	PyObject *d = PyDict_New();
	for (size_t k = 0; d && k < sizeof(keys) / sizeof(keys[0]); k++) {
		const char *v = gearrt_model_meta(m, keys[k]);
		PyObject *o = PyUnicode_DecodeUTF8(v ? v : "",
						   (Py_ssize_t)strlen(v ? v : ""),
						   "replace");
		if (!o || PyDict_SetItemString(d, keys[k], o) < 0)
			Py_CLEAR(d);
		Py_XDECREF(o);
	}
	return d;
}

/* Per input, per axis, the source's name of the dim where the file keeps
 * it (gearrt_input_dim_name), else None. */
static PyObject *dim_names(gearrt_model *m)
{
	size_t n = gearrt_input_count(m);
	PyObject *t = PyTuple_New((Py_ssize_t)n);
	for (size_t i = 0; t && i < n; i++) {
		gearrt_tensor info;
		gearrt_input_info(m, i, &info);
		int32_t rank = info.rank < 0 ? 0 : info.rank;
		PyObject *a = PyTuple_New(rank);
		for (int32_t k = 0; a && k < rank; k++) {
			const char *v = gearrt_input_dim_name(m, i, k);
			PyObject *o = v ? PyUnicode_DecodeUTF8(
						  v, (Py_ssize_t)strlen(v),
						  "replace")
					: Py_NewRef(Py_None);
			if (!o)
				Py_CLEAR(a);
			else
				PyTuple_SET_ITEM(a, k, o);
		}
		if (!a)
			Py_CLEAR(t);
		else
			PyTuple_SET_ITEM(t, (Py_ssize_t)i, a);
	}
	return t;
}

/* Reads the model's inputs, outputs and gears into Python objects once. */
static int model_describe(ModelObject *self)
{
	gearrt_model *m = self->m;
	self->meta = meta_dict(m);
	self->dim_names = dim_names(m);
	if (!self->meta || !self->dim_names)
		return -1;
	self->inputs = info_tuple(m, gearrt_input_count(m), gearrt_input_info,
				  &self->in_names);
	if (!self->inputs)
		return -1;
	self->outputs = info_tuple(m, gearrt_output_count(m),
				   gearrt_output_info, &self->out_names);
	if (!self->outputs)
		return -1;
	size_t ng = gearrt_gear_count(m);
	self->gears = PyTuple_New((Py_ssize_t)ng);
	for (size_t g = 0; self->gears && g < ng; g++) {
		PyObject *r = gear_info(self, g);
		if (!r)
			return -1;
		PyTuple_SET_ITEM(self->gears, (Py_ssize_t)g, r);
	}
	return self->gears ? 0 : -1;
}

static int Model_init(ModelObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "path", NULL };
	PyObject *bytes = NULL;
	if (self->m || self->path) {
		PyErr_SetString(Error, "Model.__init__: the model is open "
				       "already");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O&:Model", kwlist,
					 PyUnicode_FSConverter, &bytes))
		return -1;
	const char *path = PyBytes_AS_STRING(bytes);
	gearrt_model *m = NULL;
	gearrt_status st;
	Py_BEGIN_ALLOW_THREADS
	st = gearrt_model_open(path, &m);
	Py_END_ALLOW_THREADS
	if (st != GEARRT_OK) {
		Py_DECREF(bytes);
		raise_status(st);
		return -1;
	}
	self->m = m;
	self->path = PyUnicode_DecodeFSDefaultAndSize(PyBytes_AS_STRING(bytes),
						      PyBytes_GET_SIZE(bytes));
	Py_DECREF(bytes);
	if (!self->path || model_describe(self) < 0)
		return -1;
	return 0;
}

PyDoc_STRVAR(Model_from_bytes_doc,
"from_bytes(data)\n--\n\n"
"The model whose .om file's bytes are data (bytes, bytearray, memoryview\n"
"or any C-contiguous buffer), copied: data may change or go once it\n"
"returns.  Checked as Model(path) checks a file; .path is '<memory>'.");

static PyObject *Model_from_bytes(PyTypeObject *type, PyObject *data)
{
	if (PyUnicode_Check(data))
		return PyErr_Format(PyExc_TypeError, "Model.from_bytes: "
						     "expected the bytes of a "
						     ".om, got str (a path? "
						     "use Model(path))");
	Py_buffer view;
	if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
		return NULL;
	gearrt_model *m = NULL;
	gearrt_status st;
	Py_BEGIN_ALLOW_THREADS
	st = gearrt_model_open_memory(view.buf, (size_t)view.len, &m);
	Py_END_ALLOW_THREADS
	PyBuffer_Release(&view);
	if (st != GEARRT_OK)
		return raise_status(st);
	ModelObject *self = (ModelObject *)type->tp_alloc(type, 0);
	if (!self) {
		gearrt_model_close(m);
		return NULL;
	}
	self->m = m;
	self->path = PyUnicode_FromString("<memory>");
	if (!self->path || model_describe(self) < 0)
		Py_CLEAR(self);
	return (PyObject *)self;
}

static void Model_dealloc(ModelObject *self)
{
	self->closed = 1;
	model_release(self);
	Py_XDECREF(self->path);
	Py_XDECREF(self->inputs);
	Py_XDECREF(self->outputs);
	Py_XDECREF(self->gears);
	Py_XDECREF(self->in_names);
	Py_XDECREF(self->out_names);
	Py_XDECREF(self->meta);
	Py_XDECREF(self->dim_names);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Model_repr(ModelObject *self)
{
	return PyUnicode_FromFormat("<gearrt.Model %R (%zd inputs, %zd "
				    "outputs, %zd gears%s)>",
				    self->path ? self->path : Py_None,
				    self->inputs ? PyTuple_GET_SIZE(self->inputs) : 0,
				    self->outputs ? PyTuple_GET_SIZE(self->outputs) : 0,
				    self->gears ? PyTuple_GET_SIZE(self->gears) : 0,
				    self->closed ? ", closed" : "");
}

static PyObject *Model_session(ModelObject *self, PyObject *args,
			       PyObject *kw);

PyDoc_STRVAR(Model_close_doc,
"close()\n--\n\n"
"Closes the model: later calls on it or its sessions raise gearrt.Error.\n"
"The file's memory is freed now if no session is open, else when the\n"
"last one is closed or collected.  Closing twice is harmless.");

static PyObject *Model_close(ModelObject *self, PyObject *Py_UNUSED(a))
{
	self->closed = 1;
	model_release(self);
	Py_RETURN_NONE;
}

static PyObject *Model_enter(ModelObject *self, PyObject *Py_UNUSED(a))
{
	if (model_check_open(self) < 0)
		return NULL;
	return Py_NewRef(self);
}

static PyObject *Model_exit(ModelObject *self, PyObject *Py_UNUSED(a))
{
	return Model_close(self, NULL);
}

PyDoc_STRVAR(Model_session_doc,
"session(threads=1, shape_cache=8, no_gears=False, pad_batch=False,\n"
"        concurrency=0)\n--\n\n"
"A new Session on this model, which any number of threads may run at\n"
"once (the model itself is shared by any number of sessions).\n\n"
"threads      intra-op threads of each run; 0: every core the process may\n"
"             use (its affinity mask's, at most its cgroup's quota).\n"
"shape_cache  how many specialisations of a --hybrid file's dynamic graph\n"
"             (or of a gear to its inputs' values) the session keeps;\n"
"             0 keeps none: every run off the gears rebuilds.\n"
"no_gears     run the dynamic graph even when the inputs' dims are a\n"
"             gear's (to compare the two paths).\n"
"pad_batch    a batch no gear has runs on the least gear that holds it,\n"
"             its rows zero-padded and the outputs sliced back, where the\n"
"             compiler proved the rows independent (gearc dump: 'batch:\n"
"             rows independent'); elsewhere NoGearError names the node\n"
"             that mixes them.\n"
"concurrency  the most runs of the session at once (each has its own\n"
"             arena in the library; more wait for one); 0: 8.\n\n"
"GEARRT_NO_FAST=1 and GEARRT_PROFILE=1 (or =nodes) in the environment\n"
"when the session is made act as in gearc run: reference kernels only;\n"
"per-node times printed to stderr when the session goes.");

static PyMethodDef Model_methods[] = {
	{ "session", (PyCFunction)(void (*)(void))Model_session,
	  METH_VARARGS | METH_KEYWORDS, Model_session_doc },
	{ "from_bytes", (PyCFunction)Model_from_bytes, METH_O | METH_CLASS,
	  Model_from_bytes_doc },
	{ "close", (PyCFunction)Model_close, METH_NOARGS, Model_close_doc },
	{ "__enter__", (PyCFunction)Model_enter, METH_NOARGS,
	  "Returns the model (with ... as m:)." },
	{ "__exit__", (PyCFunction)Model_exit, METH_VARARGS,
	  "Closes the model." },
	{ NULL },
};

static PyObject *Model_get_closed(ModelObject *self, void *Py_UNUSED(c))
{
	return PyBool_FromLong(self->closed);
}

static PyObject *Model_get_dynamic(ModelObject *self, void *Py_UNUSED(c))
{
	if (model_check_open(self) < 0)
		return NULL;
	return PyBool_FromLong(gearrt_has_dynamic(self->m));
}

static PyMemberDef Model_members[] = {
	{ "path", T_OBJECT, offsetof(ModelObject, path), READONLY,
	  "The .om file's path, as given." },
	{ "inputs", T_OBJECT, offsetof(ModelObject, inputs), READONLY,
	  "The inputs in order: IOInfo(name, dtype, shape, type), shape with "
	  "None where it varies with the gear." },
	{ "outputs", T_OBJECT, offsetof(ModelObject, outputs), READONLY,
	  "The outputs in order, as inputs." },
	{ "gears", T_OBJECT, offsetof(ModelObject, gears), READONLY,
	  "The gears: Gear(index, dims, outputs); () for a static compile." },
	{ "input_dim_names", T_OBJECT, offsetof(ModelObject, dim_names),
	  READONLY,
	  "Per input, per axis: the name the source model gave a dim that "
	  "varies with the gear (its ONNX dim_param) where the file keeps it "
	  "(a --hybrid compile does), else None." },
	{ NULL },
};

static PyObject *Model_get_meta(ModelObject *self, void *Py_UNUSED(c))
{
	return self->meta ? PyDict_Copy(self->meta) : PyDict_New();
}

static PyGetSetDef Model_getset[] = {
	{ "meta", (getter)Model_get_meta, NULL,
	  "What the source model said of itself, as the file keeps it: a "
	  "dict of str, keys producer_name, producer_version, domain, "
	  "model_version (decimal), graph_name, source_file ('' where it "
	  "said nothing).", NULL },
	{ "closed", (getter)Model_get_closed, NULL,
	  "True once close() was called.", NULL },
	{ "has_dynamic", (getter)Model_get_dynamic, NULL,
	  "True if the file holds a dynamic graph (a --hybrid compile): "
	  "dims that match no gear run it instead of raising NoGearError.",
	  NULL },
	{ NULL },
};

PyDoc_STRVAR(Model_doc,
"Model(path)\n--\n\n"
"A compiled .om file, opened with every check `gearc verify` makes\n"
"(raises gearrt.Error with the library's message if one fails).\n"
"Read-only once open: any number of sessions on any threads may use it.\n\n"
"    m = gearrt.Model('rec.om')\n"
"    m.inputs[0]   # IOInfo(name='x', dtype=dtype('float32'),\n"
"                  #        shape=(1, 3, 48, None), type='float32')\n"
"    s = m.session()\n\n"
"Model.from_bytes(data) opens a .om held in memory.");

static PyTypeObject ModelType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gearrt.Model",
	.tp_basicsize = sizeof(ModelObject),
	.tp_dealloc = (destructor)Model_dealloc,
	.tp_repr = (reprfunc)Model_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Model_doc,
	.tp_methods = Model_methods,
	.tp_members = Model_members,
	.tp_getset = Model_getset,
	.tp_init = (initproc)Model_init,
	.tp_new = PyType_GenericNew,
};

/* ---- Session ----------------------------------------------------------- */

/* What one run() holds besides the library's session: its tensors and
 * the Python objects behind them.  Each call has its own, since any
 * number of threads may run one session at once; a finished call's is
 * kept as a spare for the next (the spares are touched with the GIL
 * held only: they need no lock). */
typedef struct Call {
	struct Call *next;	 /* the next spare */
	gearrt_tensor *in, *out; /* the run's tensors */
	PyObject **keep;	 /* the arrays behind in[] */
	PyObject **dest;	 /* the caller's out= arrays */
	char **strs;		 /* string inputs' UTF-8 */
} Call;

typedef struct {
	PyObject_HEAD
	ModelObject *model;
	gearrt_session *s; /* NULL once closed */
	size_t nin, nout;
	/* Runs and prepares under way, the GIL released inside the library:
	 * close() refuses while any is.  Touched with the GIL held only. */
	Py_ssize_t active;
	Call *spare;
} SessionObject;

/* Destroys the library's session and lets go of the model. */
static void session_destroy(SessionObject *self)
{
	if (!self->s)
		return;
	gearrt_session_destroy(self->s);
	self->s = NULL;
	self->model->nsessions--;
	model_release(self->model);
}

/* A Call for a run: a spare, or a new one (NULL, raised, if no memory).
 * One block: the Call, in[nin], out[nout], keep[nin], dest[nout],
 * strs[nin] (every part a multiple of a pointer's size). */
static Call *call_take(SessionObject *self)
{
	Call *c = self->spare;
	if (c) {
		self->spare = c->next;
		return c;
	}
	size_t nin = self->nin + 1, nout = self->nout + 1;
	c = PyMem_Calloc(1, sizeof(Call) +
				    (nin + nout) * sizeof(gearrt_tensor) +
				    (2 * nin + nout) * sizeof(void *));
	if (!c) {
		PyErr_NoMemory();
		return NULL;
	}
	c->in = (gearrt_tensor *)(c + 1);
	c->out = c->in + nin;
	c->keep = (PyObject **)(c->out + nout);
	c->dest = c->keep + nin;
	c->strs = (char **)(c->dest + nout);
	return c;
}

/* Lets go of what call c held, then keeps it as a spare (after: letting
 * go may run a finaliser that runs the session). */
static void call_give(SessionObject *self, Call *c)
{
	for (size_t i = 0; i < self->nin; i++) {
		Py_CLEAR(c->keep[i]);
		PyMem_Free(c->strs[i]);
		c->strs[i] = NULL;
	}
	for (size_t i = 0; i < self->nout; i++)
		Py_CLEAR(c->dest[i]);
	c->next = self->spare;
	self->spare = c;
}

static PyObject *Model_session(ModelObject *self, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "threads", "shape_cache", "no_gears",
				  "pad_batch", "concurrency", NULL };
	int threads = 1, cache = GEARRT_SHAPE_CACHE_DEFAULT, no_gears = 0;
	int pad_batch = 0, concurrency = 0;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|iippi:session", kwlist,
					 &threads, &cache, &no_gears,
					 &pad_batch, &concurrency) ||
	    model_check_open(self) < 0)
		return NULL;
	gearrt_options opt = {
		.threads = threads,
		.shape_cache = cache ? cache : GEARRT_SHAPE_CACHE_OFF,
		.no_gears = no_gears,
		.pad_batch = pad_batch,
		.concurrency = concurrency,
	};
	gearrt_options_from_env(&opt); /* GEARRT_NO_FAST, GEARRT_PROFILE */
	SessionObject *s = PyObject_New(SessionObject, &SessionType);
	if (!s)
		return NULL;
	s->model = (ModelObject *)Py_NewRef(self);
	s->s = NULL;
	s->active = 0;
	s->spare = NULL;
	s->nin = gearrt_input_count(self->m);
	s->nout = gearrt_output_count(self->m);
	gearrt_status st = gearrt_session_create(self->m, &opt, &s->s);
	if (st != GEARRT_OK) {
		s->s = NULL;
		Py_DECREF(s);
		return raise_status(st);
	}
	self->nsessions++;
	return (PyObject *)s;
}

static void Session_dealloc(SessionObject *self)
{
	/* no run is under way: each holds a reference */
	session_destroy(self);
	for (Call *c = self->spare, *next; c; c = next) {
		next = c->next;
		PyMem_Free(c);
	}
	Py_XDECREF(self->model);
	PyObject_Free(self);
}

/* Raises unless the session and its model are open. */
static int session_check(SessionObject *self)
{
	if (model_check_open(self->model) < 0)
		return -1;
	if (!self->s) {
		PyErr_Format(Error, "session of %R is closed",
			     self->model->path);
		return -1;
	}
	return 0;
}

/* Checks the session is open and counts a run (or prepare) under way,
 * during which close() refuses; session_leave() uncounts it. */
static int session_enter(SessionObject *self)
{
	if (session_check(self) < 0)
		return -1;
	self->active++;
	return 0;
}

static void session_leave(SessionObject *self)
{
	self->active--;
}

/* "x, y": the names in tuple t, for messages; NULL (raised) if no memory. */
static PyObject *name_list(PyObject *t)
{
	PyObject *sep = PyUnicode_FromString(", ");
	PyObject *r = sep ? PyUnicode_Join(sep, t) : NULL;
	Py_XDECREF(sep);
	return r;
}

/* Raises gearrt.Error "<where>no <kind> 'name'; the <kind>s are: a, b"
 * for a name that is none of the model's (names: theirs); -1. */
static int no_such(const char *where, const char *kind, PyObject *name,
		   PyObject *names)
{
	PyObject *list = name_list(names);
	if (!list)
		return -1;
	if (PyUnicode_Check(name))
		PyErr_Format(Error, "%sno %s '%U'; the %ss are: %U", where,
			     kind, name, kind, list);
	else
		PyErr_Format(Error, "%sno %s %R; the %ss are: %U", where, kind,
			     name, kind, list);
	Py_DECREF(list);
	return -1;
}

/* ---- strings ------------------------------------------------------------ */

/* UTF-8 of code point cp at q (if q): its length, 0 if cp is no Unicode
 * scalar value. */
static size_t utf8_put(char *q, Py_UCS4 cp)
{
	static const unsigned char lead[] = { 0, 0, 0xC0, 0xE0, 0xF0 };
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
	for (size_t k = n - 1; q && k > 0; k--, cp >>= 6)
		q[k] = (char)(0x80 | (cp & 0x3F));
	if (q)
		q[0] = (char)(lead[n] | cp);
	return n;
}

/* Element k of a str array a ('<U', or object holding str) as UTF-8 at q
 * (if q, no NUL added): its length in bytes; -1 with gearrt.Error naming
 * input 'name' and the element if it is no str or cannot be a C string. */
static Py_ssize_t element_utf8(PyArrayObject *a, npy_intp k, const char *name,
			       char *q)
{
	const char *p = (const char *)PyArray_DATA(a) + k * PyArray_ITEMSIZE(a);
	Py_ssize_t len = 0;
	if (PyArray_TYPE(a) == NPY_UNICODE) {
		const Py_UCS4 *u = (const Py_UCS4 *)p;
		npy_intp n = PyArray_ITEMSIZE(a) / 4;
		while (n && !u[n - 1])
			n--; /* numpy drops trailing NULs too */
		for (npy_intp c = 0; c < n; c++) {
			size_t m = u[c] ? utf8_put(q ? q + len : NULL, u[c]) : 0;
			if (!m) {
				char cp[16];
				snprintf(cp, sizeof(cp), "U+%04X", (unsigned)u[c]);
				PyErr_Format(Error, "input '%s': string element "
						    "%zd holds %s, which %s",
					     name, (Py_ssize_t)k, cp,
					     u[c] ? "is no Unicode scalar value"
						  : "a C string cannot hold");
				return -1;
			}
			len += (Py_ssize_t)m;
		}
		return len;
	}
	PyObject *o = *(PyObject *const *)p;
	if (!o || !PyUnicode_Check(o)) {
		PyErr_Format(Error, "input '%s': element %zd is %.80s, expected "
				    "str%s",
			     name, (Py_ssize_t)k,
			     o ? Py_TYPE(o)->tp_name : "NULL",
			     o && PyBytes_Check(o) ? " (decode bytes first)" : "");
		return -1;
	}
	const char *s = PyUnicode_AsUTF8AndSize(o, &len);
	if (!s) {
		if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
			PyErr_Clear();
			PyErr_Format(Error, "input '%s': string element %zd "
					    "holds a surrogate, which is no "
					    "Unicode scalar value",
				     name, (Py_ssize_t)k);
		}
		return -1;
	}
	if (memchr(s, 0, (size_t)len)) {
		PyErr_Format(Error, "input '%s': string element %zd holds "
				    "U+0000, which a C string cannot hold",
			     name, (Py_ssize_t)k);
		return -1;
	}
	if (q)
		memcpy(q, s, (size_t)len);
	return len;
}

/* Input i from the C-contiguous str array a: its elements as UTF-8 C
 * strings in one block, c->strs[i] (the pointers, then the strings),
 * which c->in[i] points to and which lives for the run only. */
static int bind_strings(Call *c, size_t i, PyArrayObject *a, const char *name)
{
	npy_intp n = PyArray_SIZE(a);
	size_t bytes = (size_t)n * sizeof(char *);
	for (npy_intp k = 0; k < n; k++) {
		Py_ssize_t len = element_utf8(a, k, name, NULL);
		if (len < 0)
			return -1;
		bytes += (size_t)len + 1;
	}
	char *mem = PyMem_Malloc(bytes ? bytes : 1);
	if (!mem) {
		PyErr_NoMemory();
		return -1;
	}
	c->strs[i] = mem;
	const char **ptr = (const char **)mem;
	char *q = mem + (size_t)n * sizeof(char *);
	for (npy_intp k = 0; k < n; k++) {
		Py_ssize_t len = element_utf8(a, k, name, q);
		if (len < 0) /* as the first pass: it cannot fail here */
			return -1;
		q[len] = '\0';
		ptr[k] = q;
		q += len + 1;
	}
	c->in[i].data = mem;
	c->in[i].size = (size_t)n * sizeof(char *);
	return 0;
}

/* Output t (named name) as a new object array of str, decoded from the
 * session's UTF-8. */
static PyObject *string_array(const gearrt_tensor *t, npy_intp *dims,
			      PyObject *name)
{
	PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(t->rank, dims,
							      NPY_OBJECT);
	if (!a)
		return NULL;
	const char *const *str = t->data;
	PyObject **slot = PyArray_DATA(a);
	for (npy_intp k = 0; k < PyArray_SIZE(a); k++) {
		PyObject *s = PyUnicode_DecodeUTF8(str[k],
						   (Py_ssize_t)strlen(str[k]),
						   NULL);
		if (!s) {
			PyErr_Clear();
			PyErr_Format(Error, "output '%U': string element %zd "
					    "is not valid UTF-8",
				     name, (Py_ssize_t)k);
			Py_DECREF(a);
			return NULL;
		}
		Py_XSETREF(slot[k], s);
	}
	return (PyObject *)a;
}

/* Fills c->in[i] from feed obj for input i: the array as it is if the
 * library can read it in place, else converted once (kept in
 * c->keep[i]); strings as UTF-8 copies (bind_strings). */
static int bind_input(SessionObject *self, Call *c, size_t i, PyObject *obj)
{
	gearrt_tensor info;
	gearrt_input_info(self->model->m, i, &info);
	const gearrt_tensor *want = &info;
	PyArrayObject *a;
	if (PyArray_Check(obj)) {
		a = (PyArrayObject *)Py_NewRef(obj);
	} else if (PyObject_CheckBuffer(obj)) {
		a = (PyArrayObject *)PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
	} else {
		int npy = npy_of(want->dtype);
		a = (PyArrayObject *)PyArray_FromAny(
			obj, npy < 0 ? NULL : PyArray_DescrFromType(npy), 0, 0,
			NPY_ARRAY_CARRAY_RO, NULL);
	}
	if (!a)
		return -1;
	c->keep[i] = (PyObject *)a;
	int32_t dt = gearrt_of(PyArray_DESCR(a), want->dtype);
	if (dt < 0) {
		PyErr_Format(Error, "input '%s': numpy dtype %R has no gearrt "
				    "dtype (expected %s)%s",
			     want->name, (PyObject *)PyArray_DESCR(a),
			     gearrt_dtype_name(want->dtype),
			     PyArray_TYPE(a) == NPY_STRING
				     ? ": bytes are not strings, decode them "
				       "to str"
				     : "");
		return -1;
	}
	if (!PyArray_ISCARRAY_RO(a) || !PyArray_ISNOTSWAPPED(a)) {
		PyArray_Descr *d = PyArray_DescrNewByteorder(PyArray_DESCR(a),
							     NPY_NATIVE);
		PyObject *k = d ? PyArray_FromAny((PyObject *)a, d, 0, 0,
						  NPY_ARRAY_CARRAY_RO |
							  NPY_ARRAY_ENSURECOPY,
						  NULL)
				: NULL;
		if (!k)
			return -1;
		Py_SETREF(c->keep[i], k);
		a = (PyArrayObject *)k;
	}
	gearrt_tensor *t = &c->in[i];
	t->name = NULL;
	t->dtype = dt;
	t->rank = PyArray_NDIM(a);
	for (int k = 0; k < t->rank && k < GEARRT_MAX_RANK; k++)
		t->dims[k] = PyArray_DIM(a, k);
	t->data = PyArray_DATA(a);
	t->size = (size_t)PyArray_NBYTES(a);
	/* strings for another dtype's input: the library's dtype error,
	 * which it gives before it reads any data */
	if (dt != GEARRT_STRING || want->dtype != GEARRT_STRING)
		return 0;
	return bind_strings(c, i, a, want->name);
}

/* Raises for the first key of feeds that names no input: -1; 0 if every
 * key names one. */
static int unknown_feed(SessionObject *self, PyObject *feeds)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	while (PyDict_Next(feeds, &pos, &k, &v)) {
		int has = PySequence_Contains(self->model->in_names, k);
		if (has < 0)
			return -1;
		if (!has)
			return no_such("", "input", k, self->model->in_names);
	}
	return 0;
}

/* Binds every input from the feeds dict into c.  An unknown name is
 * reported before a missing one: it is likely the missing one misspelt. */
static int bind_inputs(SessionObject *self, Call *c, PyObject *feeds)
{
	if (!PyDict_Check(feeds)) {
		PyErr_Format(PyExc_TypeError, "feeds: expected a dict of input "
					      "name -> array, got %.80s",
			     Py_TYPE(feeds)->tp_name);
		return -1;
	}
	PyObject *names = self->model->in_names;
	for (size_t i = 0; i < self->nin; i++) {
		PyObject *name = PyTuple_GET_ITEM(names, (Py_ssize_t)i);
		PyObject *v = PyDict_GetItemWithError(feeds, name);
		if (!v) {
			PyObject *list;
			if (PyErr_Occurred() || unknown_feed(self, feeds) < 0 ||
			    !(list = name_list(names)))
				return -1;
			PyErr_Format(Error, "input '%U' is not given; the "
					    "inputs are: %U",
				     name, list);
			Py_DECREF(list);
			return -1;
		}
		if (bind_input(self, c, i, v) < 0)
			return -1;
	}
	if ((size_t)PyDict_GET_SIZE(feeds) != self->nin)
		return unknown_feed(self, feeds);
	return 0;
}

/* Binds out={name: array} into c: each a writable C-contiguous array of
 * the output's dtype, which the library writes into (held in c->dest
 * for the run: another thread may change the dict while the GIL is
 * released).  No string output: its array would hold the session's char
 * pointers. */
static int bind_outputs(SessionObject *self, Call *c, PyObject *out)
{
	for (size_t i = 0; i < self->nout; i++)
		c->out[i] = (gearrt_tensor){ 0 };
	if (!out || out == Py_None)
		return 0;
	if (!PyDict_Check(out)) {
		PyErr_Format(PyExc_TypeError, "out: expected a dict of output "
					      "name -> array, got %.80s",
			     Py_TYPE(out)->tp_name);
		return -1;
	}
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	while (PyDict_Next(out, &pos, &k, &v)) {
		Py_ssize_t i = PySequence_Index(self->model->out_names, k);
		if (i < 0) {
			PyErr_Clear();
			return no_such("out: ", "output", k,
				       self->model->out_names);
		}
		gearrt_tensor info;
		gearrt_output_info(self->model->m, (size_t)i, &info);
		if (info.dtype == GEARRT_STRING) {
			PyErr_Format(Error, "out '%s': a string output is "
					    "returned as a new object array "
					    "of str, not written into one: "
					    "leave it out of out=",
				     info.name);
			return -1;
		}
		PyArrayObject *a = (PyArrayObject *)v;
		if (!PyArray_Check(v) || !PyArray_ISCARRAY(a) ||
		    !PyArray_ISNOTSWAPPED(a) ||
		    !PyArray_EquivTypenums(PyArray_TYPE(a), npy_of(info.dtype))) {
			PyErr_Format(Error, "out '%s': expected a writable "
					    "C-contiguous %s array, got %R",
				     info.name, gearrt_dtype_name(info.dtype),
				     PyArray_Check(v)
					     ? (PyObject *)PyArray_DESCR(a)
					     : (PyObject *)Py_TYPE(v));
			return -1;
		}
		c->out[i].dtype = info.dtype;
		c->out[i].data = PyArray_DATA(a);
		c->out[i].size = (size_t)PyArray_NBYTES(a);
		Py_XSETREF(c->dest[i], Py_NewRef(v));
	}
	return 0;
}

/* The outputs run(output_names, ...) returns, as indices into the
 * model's, looked up before the run so that a wrong name costs none:
 * *pick (PyMem_Malloc'd) and *n; all of them (*pick NULL) if names is
 * None.  -1 (raised) for a name that is no output. */
static int pick_outputs(SessionObject *self, PyObject *names,
			Py_ssize_t **pick, Py_ssize_t *n)
{
	*pick = NULL;
	*n = (Py_ssize_t)self->nout;
	if (names == Py_None)
		return 0;
	PyObject *seq = PySequence_Fast(names, "output_names: expected a list "
					       "of output names or None");
	if (!seq)
		return -1;
	*n = PySequence_Fast_GET_SIZE(seq);
	*pick = PyMem_Malloc((size_t)(*n ? *n : 1) * sizeof(Py_ssize_t));
	int rc = *pick ? 0 : (PyErr_NoMemory(), -1);
	for (Py_ssize_t k = 0; !rc && k < *n; k++) {
		PyObject *name = PySequence_Fast_GET_ITEM(seq, k);
		(*pick)[k] = PySequence_Index(self->model->out_names, name);
		if ((*pick)[k] < 0) {
			PyErr_Clear();
			rc = no_such("output_names: ", "output", name,
				     self->model->out_names);
		}
	}
	Py_DECREF(seq);
	if (rc) {
		PyMem_Free(*pick);
		*pick = NULL;
	}
	return rc;
}

/* Output i of call c as an array: a fresh copy of session memory
 * (strings decoded into str objects), or the caller's out= array (a
 * view of its first bytes if its shape differs).  Copied at once: the
 * session's memory is this thread's until its next run only. */
static PyObject *output_array(SessionObject *self, Call *c, size_t i)
{
	const gearrt_tensor *t = &c->out[i];
	npy_intp dims[GEARRT_MAX_RANK];
	for (int32_t k = 0; k < t->rank; k++)
		dims[k] = (npy_intp)t->dims[k];
	PyObject *dest = c->dest[i];
	int npy = npy_of(t->dtype);
	if (t->dtype == GEARRT_STRING)
		return string_array(t, dims,
				    PyTuple_GET_ITEM(self->model->out_names,
						     (Py_ssize_t)i));
	if (dest) {
		PyArrayObject *d = (PyArrayObject *)dest;
		if (PyArray_NDIM(d) == t->rank &&
		    PyArray_CompareLists(PyArray_DIMS(d), dims, t->rank))
			return Py_NewRef(dest);
		PyObject *v = PyArray_New(&PyArray_Type, t->rank, dims, npy,
					  NULL, PyArray_DATA(d), 0,
					  NPY_ARRAY_CARRAY, NULL);
		if (v && PyArray_SetBaseObject((PyArrayObject *)v,
					       Py_NewRef(dest)) < 0)
			Py_CLEAR(v);
		return v;
	}
	PyObject *a = PyArray_SimpleNew(t->rank, dims, npy);
	if (a && PyArray_NBYTES((PyArrayObject *)a))
		memcpy(PyArray_DATA((PyArrayObject *)a), t->data,
		       (size_t)PyArray_NBYTES((PyArrayObject *)a));
	return a;
}

/* The result: a dict of every output, or a list of those picked (n of
 * them; all if pick is NULL). */
static PyObject *results(SessionObject *self, Call *c, int as_list,
			 const Py_ssize_t *pick, Py_ssize_t n)
{
	PyObject *out_names = self->model->out_names;
	if (!as_list) {
		PyObject *d = PyDict_New();
		for (size_t i = 0; d && i < self->nout; i++) {
			PyObject *a = output_array(self, c, i);
			if (!a || PyDict_SetItem(d, PyTuple_GET_ITEM(out_names,
								    (Py_ssize_t)i),
						 a) < 0)
				Py_CLEAR(d);
			Py_XDECREF(a);
		}
		return d;
	}
	PyObject *l = PyList_New(n);
	for (Py_ssize_t k = 0; l && k < n; k++) {
		PyObject *a = output_array(self, c, pick ? (size_t)pick[k]
							 : (size_t)k);
		if (!a)
			Py_CLEAR(l);
		else
			PyList_SET_ITEM(l, k, a);
	}
	return l;
}

/* How many outputs the library must give for the picked ones: up to the
 * last of them (it copies each it gives out of the run's memory), or all
 * when out= binds any. */
static size_t outputs_needed(SessionObject *self, const Py_ssize_t *pick,
			     Py_ssize_t n, PyObject *out)
{
	if (!pick || (out && out != Py_None))
		return self->nout;
	size_t need = 0;
	for (Py_ssize_t k = 0; k < n; k++)
		if ((size_t)pick[k] + 1 > need)
			need = (size_t)pick[k] + 1;
	return need;
}

/* run(feeds, *, out=None) or run(output_names, feeds, *, out=None);
 * returns 1 for the second (a list), 0 for the first, -1 on error. */
static int parse_run(PyObject *const *args, Py_ssize_t nargs,
		     PyObject *kwnames, PyObject **names, PyObject **feeds,
		     PyObject **out)
{
	Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
	*out = NULL;
	for (Py_ssize_t k = 0; k < nkw; k++) {
		PyObject *key = PyTuple_GET_ITEM(kwnames, k);
		if (PyUnicode_CompareWithASCIIString(key, "out")) {
			PyErr_Format(PyExc_TypeError, "run() got an unexpected "
						      "keyword argument %R", key);
			return -1;
		}
		*out = args[nargs + k];
	}
	if (nargs < 1 || nargs > 2) {
		PyErr_SetString(PyExc_TypeError, "run() takes (feeds) or "
						 "(output_names, feeds)");
		return -1;
	}
	*names = nargs == 2 ? args[0] : Py_None;
	*feeds = args[nargs - 1];
	return nargs == 2;
}

PyDoc_STRVAR(Session_run_doc,
"run(feeds, *, out=None) -> dict\n"
"run(output_names, feeds, *, out=None) -> list\n\n"
"Runs the model once.\n\n"
"feeds         dict: input name -> numpy array (or anything numpy.asarray\n"
"              takes), every input of the model.  A C-contiguous, aligned,\n"
"              native-endian array is read in place, with no copy; other\n"
"              arrays are copied once into that form (their dtype kept),\n"
"              lists and scalars converted once to the input's dtype.\n"
"              bfloat16 inputs take uint16 arrays of the bits.  String\n"
"              inputs take '<U' arrays, object arrays of str or lists of\n"
"              str, copied to UTF-8 for the run (bytes and other objects\n"
"              raise gearrt.Error; so does U+0000 or a lone surrogate).\n"
"output_names  as onnxruntime.InferenceSession.run: None for every output,\n"
"              or a list of names; the result is then a list in that order.\n"
"out           dict: output name -> a writable C-contiguous array of the\n"
"              output's dtype with room for it: the library writes the\n"
"              output there and the result holds that array (a view of its\n"
"              first elements if its shape differs).  Other outputs are\n"
"              fresh arrays the caller owns; a string output is always a\n"
"              fresh object array of str (as onnxruntime returns it), and\n"
"              out= naming one raises gearrt.Error.\n\n"
"The gear is the one whose dims equal the inputs' (see Model.gears).\n"
"Raises gearrt.Error with the library's message for a wrong dtype, rank\n"
"or dims, gearrt.NoGearError (listing the gears) for dims that match no\n"
"gear in a file with no dynamic graph, before the run for a name that is\n"
"no input or output.  The GIL is released during the run, and any number\n"
"of threads may run the session at once (each run has its own memory in\n"
"the library, up to the session's concurrency; the outputs are copied\n"
"out of it before run() returns).");

static PyObject *Session_run(SessionObject *self, PyObject *const *args,
			     Py_ssize_t nargs, PyObject *kwnames)
{
	PyObject *names, *feeds, *out, *res = NULL;
	Py_ssize_t *pick = NULL, n;
	int as_list = parse_run(args, nargs, kwnames, &names, &feeds, &out);
	if (as_list < 0 || pick_outputs(self, names, &pick, &n) < 0)
		return NULL;
	/* counted from here: binding may run Python code (an __array__),
	 * which must not close the session, or the model under it, midway */
	if (session_enter(self) < 0) {
		PyMem_Free(pick);
		return NULL;
	}
	Call *c = call_take(self);
	if (c && bind_inputs(self, c, feeds) == 0 &&
	    bind_outputs(self, c, out) == 0) {
		size_t nout = outputs_needed(self, pick, n, out);
		gearrt_status st;
		Py_BEGIN_ALLOW_THREADS
		st = gearrt_run(self->s, c->in, self->nin, c->out, nout);
		Py_END_ALLOW_THREADS
		res = st != GEARRT_OK ? raise_status(st)
				      : results(self, c, as_list, pick, n);
	}
	if (c)
		call_give(self, c);
	session_leave(self);
	PyMem_Free(pick);
	return res;
}

PyDoc_STRVAR(Session_close_doc,
"close()\n--\n\n"
"Frees the session's memory; later runs raise gearrt.Error.  Closing\n"
"twice is harmless.  While another thread's run (or prepare) is under\n"
"way it raises gearrt.Error and leaves the session open: close it once\n"
"they return.");

static PyObject *Session_close(SessionObject *self, PyObject *Py_UNUSED(a))
{
	/* refuse rather than wait: a run of this thread under way (a
	 * finaliser closing the session mid-run) would wait forever */
	if (self->active) {
		PyErr_Format(Error, "session of %R has %zd run%s under way: "
				    "close it once %s",
			     self->model->path, self->active,
			     self->active == 1 ? "" : "s",
			     self->active == 1 ? "it returns"
					       : "they return");
		return NULL;
	}
	session_destroy(self);
	Py_RETURN_NONE;
}

static PyObject *Session_enter(SessionObject *self, PyObject *Py_UNUSED(a))
{
	return Py_NewRef(self);
}

static PyObject *Session_exit(SessionObject *self, PyObject *Py_UNUSED(a))
{
	return Session_close(self, NULL);
}

PyDoc_STRVAR(Session_prepare_doc,
"prepare(gears=None)\n--\n\n"
"Prepares the gears listed (indices into Model.gears; all if None; a\n"
"static model's graph is gear 0) as their first run would, then runs\n"
"each once on zeros, so that no later run pays for it.");

static PyObject *Session_prepare(SessionObject *self, PyObject *args,
				 PyObject *kw)
{
	static char *names[] = { "gears", NULL };
	PyObject *gears = Py_None;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:prepare", names,
					 &gears) ||
	    session_check(self) < 0)
		return NULL;
	Py_ssize_t n = 0;
	size_t *g = NULL;
	PyObject *seq = NULL;
	if (gears != Py_None) {
		seq = PySequence_Fast(gears, "gears must be a list of ints");
		n = seq ? PySequence_Fast_GET_SIZE(seq) : -1;
		g = n > 0 ? PyMem_Calloc((size_t)n, sizeof(size_t)) : NULL;
		for (Py_ssize_t i = 0; g && i < n; i++) {
			Py_ssize_t v = PyNumber_AsSsize_t(
				PySequence_Fast_GET_ITEM(seq, i),
				PyExc_OverflowError);
			if (v < 0 && !PyErr_Occurred())
				PyErr_Format(Error, "gear %zd is out of range",
					     v);
			if (PyErr_Occurred()) {
				n = -1;
				break;
			}
			g[i] = (size_t)v;
		}
		if (n > 0 && !g && !PyErr_Occurred())
			PyErr_NoMemory();
	}
	gearrt_status st = GEARRT_OK;
	if (!PyErr_Occurred() && (gears == Py_None || n > 0) &&
	    session_enter(self) == 0) {
		Py_BEGIN_ALLOW_THREADS
		st = gearrt_session_prepare(self->s, g, (size_t)n);
		Py_END_ALLOW_THREADS
		session_leave(self);
	}
	PyMem_Free(g);
	Py_XDECREF(seq);
	if (PyErr_Occurred())
		return NULL;
	if (st != GEARRT_OK)
		return raise_status(st);
	Py_RETURN_NONE;
}

static PyMethodDef Session_methods[] = {
	{ "run", (PyCFunction)(void (*)(void))Session_run,
	  METH_FASTCALL | METH_KEYWORDS, Session_run_doc },
	{ "prepare", (PyCFunction)(void (*)(void))Session_prepare,
	  METH_VARARGS | METH_KEYWORDS, Session_prepare_doc },
	{ "close", (PyCFunction)Session_close, METH_NOARGS, Session_close_doc },
	{ "__enter__", (PyCFunction)Session_enter, METH_NOARGS,
	  "Returns the session (with ... as s:)." },
	{ "__exit__", (PyCFunction)Session_exit, METH_VARARGS,
	  "Closes the session." },
	{ NULL },
};

/* The library's counters; NULL (raised) if the session is closed. */
static int session_stats(SessionObject *self, gearrt_stats *st)
{
	if (!self->s) {
		PyErr_Format(Error, "session of %R is closed",
			     self->model->path);
		return -1;
	}
	gearrt_session_stats(self->s, st);
	return 0;
}

static PyObject *Session_get_last_gear(SessionObject *self, void *Py_UNUSED(c))
{
	gearrt_stats st;
	if (session_stats(self, &st) < 0)
		return NULL;
	int g = gearrt_last_gear(self->s);
	return g < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(g);
}

static PyObject *Session_get_last_path(SessionObject *self, void *Py_UNUSED(c))
{
	static const char *const names[] = {
		[GEARRT_PATH_STATIC] = "static",
		[GEARRT_PATH_GEAR] = "gear",
		[GEARRT_PATH_DYNAMIC] = "dynamic",
	};
	gearrt_stats st;
	if (session_stats(self, &st) < 0)
		return NULL;
	if (st.last_path <= GEARRT_PATH_NONE ||
	    st.last_path > GEARRT_PATH_DYNAMIC)
		Py_RETURN_NONE;
	return PyUnicode_FromString(names[st.last_path]);
}

static PyObject *Session_get_stats(SessionObject *self, void *Py_UNUSED(c))
{
	gearrt_stats st;
	if (session_stats(self, &st) < 0)
		return NULL;
	PyObject *r = PyStructSequence_New(&StatsType);
	if (!r)
		return NULL;
	PyObject *v[10] = {
		PyLong_FromUnsignedLongLong(st.runs),
		PyLong_FromUnsignedLongLong(st.gear_runs),
		PyLong_FromUnsignedLongLong(st.dynamic_runs),
		PyLong_FromUnsignedLongLong(st.rebuilds),
		PyLong_FromUnsignedLongLong(st.cache_hits),
		PyLong_FromUnsignedLongLong(st.evictions),
		PyLong_FromLong(st.cached),
		PyBool_FromLong(st.last_rebuilt),
		PyFloat_FromDouble(st.last_rebuild_ms),
		PyFloat_FromDouble(st.prepare_ms),
	};
	for (int i = 0; i < 10; i++) {
		if (!v[i]) {
			for (int k = 0; k < 10; k++)
				Py_XDECREF(v[k]);
			Py_DECREF(r);
			return NULL;
		}
		PyStructSequence_SET_ITEM(r, i, v[i]);
	}
	return r;
}

static PyObject *Session_get_model(SessionObject *self, void *Py_UNUSED(c))
{
	return Py_NewRef(self->model);
}

static PyGetSetDef Session_getset[] = {
	{ "last_gear", (getter)Session_get_last_gear, NULL,
	  "The gear the last successful run used (an index into "
	  "Model.gears), or None: a static compile, the dynamic graph, or no "
	  "run yet.", NULL },
	{ "last_path", (getter)Session_get_last_path, NULL,
	  "What the last successful run took: 'gear', 'static' or "
	  "'dynamic'; None before the first.", NULL },
	{ "stats", (getter)Session_get_stats, NULL,
	  "The session's counters: Stats(runs, gear_runs, dynamic_runs, "
	  "rebuilds, cache_hits, evictions, cached, last_rebuilt, "
	  "last_rebuild_ms, prepare_ms).", NULL },
	{ "model", (getter)Session_get_model, NULL, "The session's Model.",
	  NULL },
	{ NULL },
};

PyDoc_STRVAR(Session_doc,
"A session on a Model (made by Model.session()): it owns the memory runs\n"
"use, and any number of threads may run it at once.\n\n"
"    outs = s.run({'x': x})               # dict: name -> ndarray\n"
"    probs, = s.run(None, {'x': x})       # as onnxruntime\n"
"    s.run({'x': x}, out={'probs': buf})  # written into buf");

static PyTypeObject SessionType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "gearrt.Session",
	.tp_basicsize = sizeof(SessionObject),
	.tp_dealloc = (destructor)Session_dealloc,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = Session_doc,
	.tp_methods = Session_methods,
	.tp_getset = Session_getset,
};

/* ---- module ------------------------------------------------------------ */

PyDoc_STRVAR(module_doc,
"gearrt: runs gearc's compiled .om models from Python (libgearrt).\n\n"
"    import gearrt, numpy as np\n"
"    m = gearrt.Model('demo.om')\n"
"    s = m.session()\n"
"    outs = s.run({'x': np.zeros((4, 3, 32, 32), np.float32)})\n\n"
"Model(path) opens and checks a file; Model.session() makes a Session;\n"
"Session.run(feeds) runs it.  Errors are gearrt.Error (a ValueError and a\n"
"RuntimeError) with the library's one-line message; gearrt.NoGearError\n"
"when the inputs' dims match no gear.  String tensors are object arrays\n"
"of str ('<U' arrays also feed a string input), as in onnxruntime.");

static PyObject *mod_cpu_features(PyObject *m, PyObject *Py_UNUSED(a))
{
	(void)m;
	return PyUnicode_FromString(gearrt_cpu_features());
}

static PyObject *wait_policy(PyObject *m, PyObject *Py_UNUSED(a))
{
	(void)m;
	return PyUnicode_FromString(gearrt_wait_policy());
}

static PyObject *usable_cores(PyObject *m, PyObject *Py_UNUSED(a))
{
	(void)m;
	return PyLong_FromLong(cpu_usable_cores());
}

static PyMethodDef module_functions[] = {
	{ "cpu_features", mod_cpu_features, METH_NOARGS,
	  "cpu_features()\n--\n\n"
	  "The CPU features the kernels choose by, as 'avx2 fma ...'." },
	{ "wait_policy", wait_policy, METH_NOARGS,
	  "wait_policy()\n--\n\n"
	  "How the threads of a run wait: gearrt's pool spins while a run\n"
	  "is under way, then sleeps, and sleeps at once while other\n"
	  "processes want the cores; oneDNN's regions run on it too, or,\n"
	  "with GEARRT_DNNL_LIBGOMP=1, on libgomp, whose policy it adds\n"
	  "(gearrt sets GOMP_SPINCOUNT=1000 on import unless\n"
	  "GOMP_SPINCOUNT or OMP_WAIT_POLICY is set)." },
	{ "usable_cores", usable_cores, METH_NOARGS,
	  "usable_cores()\n--\n\n"
	  "The cores this process may use (its affinity mask's, at most\n"
	  "its cgroup's CPU quota): what threads=0 runs on." },
	{ NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "gearrt._gearrt",
	.m_doc = module_doc,
	.m_size = -1,
	.m_methods = module_functions,
};

static int add_types(PyObject *m)
{
	if (PyStructSequence_InitType2(&IOInfoType, &io_desc) < 0 ||
	    PyStructSequence_InitType2(&GearType, &gear_desc) < 0 ||
	    PyStructSequence_InitType2(&StatsType, &stats_desc) < 0 ||
	    PyType_Ready(&ModelType) < 0 || PyType_Ready(&SessionType) < 0)
		return -1;
	PyTypeObject *types[] = { &IOInfoType, &GearType, &StatsType,
				  &ModelType, &SessionType };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (PyModule_AddType(m, types[i]) < 0)
			return -1;
	return 0;
}

static int add_errors(PyObject *m)
{
	PyObject *bases = PyTuple_Pack(2, PyExc_ValueError,
				       PyExc_RuntimeError);
	if (!bases)
		return -1;
	Error = PyErr_NewExceptionWithDoc(
		"gearrt.Error",
		"A libgearrt call failed: the message is the library's one line "
		"naming the file, input, gear or node at fault.",
		bases, NULL);
	Py_DECREF(bases);
	if (!Error || PyModule_AddObjectRef(m, "Error", Error) < 0)
		return -1;
	NoGearError = PyErr_NewExceptionWithDoc(
		"gearrt.NoGearError",
		"The inputs' dims match no gear (and the file has no dynamic "
		"graph); the message lists the gears.",
		Error, NULL);
	if (!NoGearError ||
	    PyModule_AddObjectRef(m, "NoGearError", NoGearError) < 0)
		return -1;
	return 0;
}

PyMODINIT_FUNC PyInit__gearrt(void)
{
	import_array();
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return NULL;
	if (add_types(m) < 0 || add_errors(m) < 0 ||
	    PyModule_AddStringConstant(m, "__version__", GEARC_VERSION) < 0 ||
	    PyModule_AddStringConstant(m, "SPINCOUNT", GEARRT_SPINCOUNT) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
