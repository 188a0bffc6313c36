/*
 * serializer/export.h - a plain IR graph as an ONNX model file, for
 * `gearc export` (each gear leaves as a static ONNX model that any ONNX
 * runtime can load).
 *
 * onnx_write() writes g (a main graph with no gearc op left, e.g. from
 * passes/flatten.h) as a ModelProto with the protobuf-c ONNX schema the
 * importer uses (build/gen/onnx/onnx.pb-c.h):
 *   - ir_version, opset_import, producer's model_version and domain of the
 *     source model (Model fields), producer "gearc" and its version, the
 *     given doc_string and metadata_props;
 *   - every weight value (of g and of its subgraphs) once, as an
 *     initializer of the main graph, in the order first met (g's values,
 *     then its nodes' subgraphs depth first); a subgraph reads it as an
 *     outer-scope name.  Tensors of attributes (Constant values ...)
 *     stay in their attributes;
 *   - inputs and outputs with their types and shapes, and a value_info
 *     entry for every other node output whose dtype is known: its shape,
 *     a dim with no value where gearc does not know it (data-dependent
 *     values), no shape at an unknown rank;
 *   - names unique in the whole model, made so by one rule: the graph's
 *     inputs and outputs keep theirs, any other value whose name is taken
 *     gets "_2", "_3", ...; node names the same among nodes, an unnamed
 *     node named after its op_type (ONNX Runtime refuses two nodes of one
 *     name) (source IR versions below 4 also list initializers as
 *     inputs).
 * External data (ONNX's convention): when x->external is set, or when
 * the model would pass protobuf's 2 GB limit, every initializer of at
 * least 1024 bytes (strings excepted) is written to "BASE.data" next to
 * path (BASE the file name of path) at a 64-byte aligned offset, and its
 * TensorProto says data_location EXTERNAL with location (that relative
 * name), offset and length.
 * Both files are written atomically (serializer/om.h: om_temp_open,
 * om_temp_commit); the same inputs give the same bytes.
 */
#ifndef GEARC_EXPORT_H
#define GEARC_EXPORT_H

#include "compiler/ir.h"

typedef struct OnnxExport {
	const char *doc;    /* ModelProto.doc_string, or NULL */
	const KeyVal *meta; /* metadata_props */
	int32_t nmeta;
	bool external; /* --external-data */
	bool fp16_weights; /* --fp16-weights: float16 as the source stored
			    * them (Tensor.from_half), each widened by a Cast */
	/* set by onnx_write: */
	bool wrote_external;
	int32_t nnodes, ninitializers;
} OnnxExport;

int onnx_write(const Model *m, const Graph *g, OnnxExport *x,
	       const char *path);

#endif
