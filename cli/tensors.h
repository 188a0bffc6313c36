/*
 * cli/tensors.h - a folder of tensors: what `gearc run --dump-tensors`
 * writes (cli/tensordump.c) and `gearc compare` reads (cli/compare.c).
 *
 * DIR/FILE.npy per tensor, FILE from the tensor's name as npy_file()
 * makes it (as --output-dir names outputs), and DIR/index.json, the run
 * order and what each tensor is:
 *
 *   {"format": "gearc-tensors", "version": 1, "model": "FILE.om",
 *    "complete": true,              false if the run failed, with
 *    "error": "...",                the run's error
 *    "tensors": [                   in the order the run made them
 *      {"name": "x", "kind": "input", "file": "x.npy",
 *       "dtype": "float32", "shape": [1,3,32,32]},
 *      {"name": "c1", "kind": "fused", "file": null, "graph": "Batch_0",
 *       "node": "conv1_batch_0", "op": "FusedConv"},
 *      {"name": "r1", "kind": "node", "file": "r1.npy", "dtype", "shape",
 *       "graph", "node", "op", "kernel"},
 *      {"name": "s", "kind": "not_written", "file": null, "graph",
 *       "node", "op", "kernel", "why": "..."} ]}
 *
 * "fused": a value of the source model that no longer exists, computed
 * inside the node named (listed before that node's outputs);
 * "not_written": an output with no .npy form (a sequence, bfloat16).
 * A node evaluated as a whole (If, Loop, Scan) has "why" too on its
 * outputs: the values inside its subgraphs are not written.  Names are
 * the source model's (bytes that are no UTF-8 as \xNN); a name whose
 * file name would pass 200 bytes is written as "%longN.npy", a name no
 * tensor's file has.
 */
#ifndef GEARC_TENSORS_H
#define GEARC_TENSORS_H

#include <stdbool.h>

#include "runtime/gearrt.h"

#define TENSORS_INDEX "index.json"
#define TENSORS_FORMAT "gearc-tensors"
#define TENSORS_VERSION 1

typedef struct TensorDump TensorDump;

/* A dump into dir (made if missing, one level) of a run of model;
 * NULL with an error naming --dump-tensors. */
TensorDump *tensor_dump_open(const char *dir, const char *model);
/* The model's inputs, first in the index. */
int tensor_dump_inputs(TensorDump *d, const gearrt_tensor *in, size_t n);
/* gearrt_options.on_node for d: writes while armed, else does nothing
 * (the runs after the first). */
int tensor_dump_hook(void *d, const gearrt_node_info *n);
void tensor_dump_arm(TensorDump *d, bool armed);
/* Writes the index (error: the run's, NULL if it succeeded), says in
 * said[0..n) (if given) what was written, and frees d: 0, or -1 with an
 * error. */
int tensor_dump_close(TensorDump *d, const char *error, char *said,
		      size_t n);

#endif
