/*
 * serializer/raise.h - a .om file back into the IR (the reverse of
 * lower.c), for `gearc verify` to re-run passes on what a file holds.
 *
 * om_to_model() rebuilds every graph (the root as Model.graph, subgraphs
 * hung off their attributes, parents set), its values, nodes and
 * attributes, and the weights: Tensors whose data points into the mapped
 * WEIGHTS partition (strings are unpacked into Bytes that point there
 * too) or into the message's inline data of constants gearc computed
 * (protobuf-c's copy; copied again only if not 16-byte aligned).  Gear
 * compiles get Model.gears (mode, inputs, table), Model.branches and
 * Model.gear_info.  Memory plans become Graph.plan as the file states
 * them: only om_open's checks have been made on them (indices in range,
 * no overflow); `gearc verify` checks the rest.
 *
 * The OmFile must have been opened by om_open/om_parse (so every index is
 * valid) and must outlive the Model.  Returns NULL with an error if the
 * graphs break an IR invariant the reader does not check (a tensor with
 * two producers, one used before it is produced, ...).
 */
#ifndef GEARC_RAISE_H
#define GEARC_RAISE_H

#include "om.h"

Model *om_to_model(const OmFile *f);

/* om_to_model with each gear's branch, and the graphs below it, left to
 * om_raise_gear: until then a branch holds only its outputs' values
 * (names, dtypes, shapes, flags; what a Case choosing it reads), and a
 * weight is raised when a raised graph first uses it.  *r is what
 * om_raise_gear needs; om_raise_free it after the model.  A file of many
 * gears opens without raising them all. */
typedef struct Raise OmRaise;
Model *om_to_model_lazy(const OmFile *f, OmRaise **r);
/* Raises gear g's branch and the graphs below it, once (gears sharing a
 * branch share it): 0, or -1 with an error. */
int om_raise_gear(OmRaise *r, size_t g);
void om_raise_free(OmRaise *r);

#endif
