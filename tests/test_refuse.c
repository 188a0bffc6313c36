/* tests/test_refuse.c - models with no defined meaning are refused at
 * import, naming the field or output at fault (issue 19, items 9 and
 * 11).  The models are packed here with protobuf-c: x [1,4] -> Relu -> y,
 * varied one field at a time. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "compiler/onnx.h"
#include "onnx/onnx.pb-c.h"

typedef struct Spec {
	const char *const *domains; /* opset imports */
	const int64_t *versions;
	int nopsets;
	const char *const *outputs; /* graph outputs (NULL: "y") */
	int noutputs;
	const int64_t *wdims; /* an initializer "w" of these dims */
	int wrank;
} Spec;

typedef struct Packed {
	uint8_t *data;
	size_t len;
} Packed;

static Onnx__ValueInfoProto *value_info(const char *name, bool typed)
{
	static Onnx__TensorShapeProto__Dimension d[2];
	static Onnx__TensorShapeProto__Dimension *dims[2] = { &d[0], &d[1] };
	static Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
	static Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
	static Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
	for (int k = 0; k < 2; k++) {
		d[k] = (Onnx__TensorShapeProto__Dimension)
			ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
		d[k].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		d[k].dim_value = k ? 4 : 1;
	}
	shape.n_dim = 2;
	shape.dim = dims;
	tt.has_elem_type = 1;
	tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	tt.shape = &shape;
	type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	type.tensor_type = &tt;
	Onnx__ValueInfoProto *v = malloc(sizeof(*v));
	*v = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
	v->name = (char *)name;
	v->type = typed ? &type : NULL;
	return v;
}

static Packed pack(const Spec *s)
{
	Onnx__OperatorSetIdProto ops[8], *opp[8];
	cr_assert(s->nopsets <= 8);
	for (int i = 0; i < s->nopsets; i++) {
		ops[i] = (Onnx__OperatorSetIdProto)
			ONNX__OPERATOR_SET_ID_PROTO__INIT;
		ops[i].domain = (char *)s->domains[i];
		ops[i].has_version = 1;
		ops[i].version = s->versions[i];
		opp[i] = &ops[i];
	}
	char *in = s->wdims ? "w" : "x", *out = "y";
	Onnx__NodeProto node = ONNX__NODE_PROTO__INIT, *nodes[1] = { &node };
	node.name = "relu";
	node.op_type = "Relu";
	node.n_input = node.n_output = 1;
	node.input = &in;
	node.output = &out;
	Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT, *inits[1] = { &w };
	w.name = "w";
	w.has_data_type = 1;
	w.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	w.n_dims = (size_t)s->wrank;
	w.dims = (int64_t *)s->wdims;
	Onnx__ValueInfoProto *inputs[1] = { value_info("x", true) };
	Onnx__ValueInfoProto *outputs[4];
	int nout = s->outputs ? s->noutputs : 1;
	cr_assert(nout <= 4);
	for (int i = 0; i < nout; i++)
		outputs[i] = value_info(s->outputs ? s->outputs[i] : "y", false);
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	g.name = "main";
	g.n_node = 1;
	g.node = nodes;
	g.n_input = s->wdims ? 0 : 1;
	g.input = inputs;
	g.n_output = (size_t)nout;
	g.output = outputs;
	g.n_initializer = s->wdims ? 1 : 0;
	g.initializer = inits;
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	m.has_ir_version = 1;
	m.ir_version = 8;
	m.n_opset_import = (size_t)s->nopsets;
	m.opset_import = opp;
	m.graph = &g;
	Packed p;
	p.len = onnx__model_proto__get_packed_size(&m);
	p.data = malloc(p.len + 1);
	onnx__model_proto__pack(&m, p.data);
	free(inputs[0]);
	for (int i = 0; i < nout; i++)
		free(outputs[i]);
	return p;
}

static const char *const DEFAULT[] = { "" };

/* The model loads, or fails with an error containing want. */
static void expect_load(const Spec *s, const char *want)
{
	Packed p = pack(s);
	clear_error();
	Model *m = onnx_load_bytes(p.data, p.len, "t.onnx");
	if (!want) {
		cr_expect(m, "%s", last_error());
	} else {
		cr_expect_null(m, "loaded, expected '%s'", want);
		cr_expect(strstr(last_error(), want), "'%s' lacks '%s'",
			  last_error(), want);
	}
	model_free(m);
	free(p.data);
}

static void expect_opset(int64_t v, const char *want)
{
	Spec s = { DEFAULT, &v, 1, 0, 0, 0, 0 };
	expect_load(&s, want);
}

Test(refuse, default_domain_opsets_that_do_not_exist)
{
	expect_opset(13, NULL);
	expect_opset(1, NULL);
	expect_opset(OPSET_NEWEST, NULL);
	expect_opset(-5, "opset_import[0]: domain 'ai.onnx' version -5, "
			 "expected >= 1");
	expect_opset(0, "opset_import[0]: domain 'ai.onnx' version 0, "
			"expected >= 1");
	expect_opset(99, "opset_import[0]: ai.onnx version 99 is newer than "
			 "gearc knows (1 to 23)");
	expect_opset((int64_t)1 << 62, "opset_import[0]: ai.onnx version "
				       "4611686018427387904 is newer");
}

Test(refuse, missing_duplicate_and_other_domain_imports)
{
	Spec none = { DEFAULT, NULL, 0, 0, 0, 0, 0 };
	expect_load(&none, "node 'relu' (Relu) is in the default domain, but "
			   "the model imports no ai.onnx opset");
	const char *const ml[] = { "ai.onnx.ml" };
	int64_t v1 = 3;
	Spec only_ml = { ml, &v1, 1, 0, 0, 0, 0 };
	expect_load(&only_ml, "imports no ai.onnx opset");
	const char *const two[] = { "", "ai.onnx" };
	int64_t vv[] = { 13, 13 };
	Spec twice = { two, vv, 2, 0, 0, 0, 0 };
	expect_load(&twice, "opset_import[1]: domain 'ai.onnx' is imported "
			    "twice (also at [0])");
	const char *const mixed[] = { "", "ai.onnx.ml" };
	int64_t good[] = { 13, 3 }, bad[] = { 13, -1 };
	Spec ok = { mixed, good, 2, 0, 0, 0, 0 };
	expect_load(&ok, NULL);
	Spec neg = { mixed, bad, 2, 0, 0, 0, 0 };
	expect_load(&neg, "opset_import[1]: domain 'ai.onnx.ml' version -1");
}

Test(refuse, an_output_listed_twice)
{
	int64_t v = 13;
	const char *const twice[] = { "y", "y" };
	Spec s = { DEFAULT, &v, 1, twice, 2, 0, 0 };
	expect_load(&s, "graph 'main': output 'y' is listed twice");
	const char *const once[] = { "y", "x" };
	Spec t = { DEFAULT, &v, 1, once, 2, 0, 0 };
	expect_load(&t, NULL);
}

/* The element count overflows at the second dim: the message still
 * shows the third as given (it printed 0). */
Test(refuse, overflowing_dims_printed_as_given)
{
	int64_t v = 13, big = (int64_t)1 << 32;
	const int64_t dims[] = { big, big, big };
	Spec s = { DEFAULT, &v, 1, 0, 0, dims, 3 };
	expect_load(&s, "tensor 'w': dims [4294967296,4294967296,4294967296] "
			"overflow");
}
