/*
 * compiler/onnx.h - ONNX import: ModelProto bytes -> Model (compiler/ir.h).
 *
 * The file is parsed with protobuf-c (onnx.pb-c.h generated from the
 * system's onnx.proto).  The importer builds the IR:
 *  - opset imports, ir_version, producer, model version, domain;
 *  - graph inputs (an initializer also listed as an input is a weight, not
 *    an input), outputs, initializers (VAL_WEIGHT with .konst), value_info
 *    (dtype and shape hints on intermediate values);
 *  - nodes with every attribute type; a Constant node's value becomes a
 *    tensor (value, value_float(s), value_int(s)); sparse tensors are
 *    unsupported and said so;
 *  - subgraphs of If/Loop/Scan (any GRAPH/GRAPHS attribute) as Graphs whose
 *    parent is the enclosing graph; names they use but do not define become
 *    VAL_OUTER values, chained through every enclosing level;
 *  - dim_value, dim_param (kept in Value.dim_params, dim -1) and unknown
 *    dims (-1); unknown rank (no shape) is rank -1;
 *  - tensor data from raw_data or the typed fields (float_data, int32_data
 *    for int8/16/32, uint8/16, bool and float16/bfloat16, int64_data,
 *    uint64_data, double_data, string_data), converted to the IR's packed
 *    little-endian form; external data (data_location = EXTERNAL, location
 *    relative to the model file's directory, offset, length) is mapped once
 *    per file and pointed into, never copied.
 * Then the graph is sorted topologically and verified.
 *
 * Malformed models are user errors naming the file and the node or tensor:
 * a node input nobody produces, two producers of one name, a cycle, an
 * unknown dtype, a tensor whose data size disagrees with its dims, rank
 * above MAX_RANK, external data outside its file or escaping the model's
 * directory, a truncated or non-protobuf file.
 */
#ifndef GEARC_ONNX_H
#define GEARC_ONNX_H

#include "ir.h"

/* Reads and imports the ONNX model at path.  NULL with an error set. */
Model *onnx_load(const char *path);

/* Imports a model from memory.  path names it in messages and locates
 * external data (its directory); the bytes must stay alive as long as the
 * Model (tensors may point into them). */
Model *onnx_load_bytes(const uint8_t *data, size_t size, const char *path);

/* Reads a serialized TensorProto (an ONNX test's input_N.pb) into m's
 * arena.  NULL with an error naming path. */
const Tensor *onnx_load_tensor(Model *m, const char *path);

#endif
