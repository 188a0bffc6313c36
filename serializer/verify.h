/*
 * serializer/verify.h - the checks of 'gearc verify' on a validated .om
 * (serializer/verify.c): what om_open cannot check alone, re-derived with
 * code of its own (memory plans, the gear table against the graphs,
 * partitions, shapes re-inferred).  cli/verify_cmd.c is the command;
 * libgearrt's loader makes the same checks.
 */
#ifndef GEARC_VERIFY_H
#define GEARC_VERIFY_H

#include <stdbool.h>

#include "om.h"
#include "serializer/raise.h"

/* The memory-plan checks alone on a validated file: 0, or -1 with the
 * first violation as the error. */
int verify_plans(const OmFile *f);
/* Every check of 'gearc verify' (plans, the gear table, the input/output
 * table against every graph a run starts at, partitions, shapes
 * re-inferred), silently: 0, or -1 with the first violation. */
int verify_file(const OmFile *f);
/* The same, printing what was checked ("verify: N graphs, ...: ok"). */
int verify_print(const OmFile *f, bool verbose, bool quiet);
/* om_open, then every check of verify_file on the file raised into the
 * IR once, *m (the checks' model: what the runtime's loader and export
 * run on, so each refuses what verify refuses).  With lazy, what is each
 * gear's own (raising its branch and the graphs below it, their plans
 * and shapes; raise.h's om_to_model_lazy) is left to verify_gear, to be
 * called for each gear before its first run, and *lazy is what that
 * needs (om_raise_free it after the model): a file of many gears opens
 * without them all.  -1 with the error ("PATH: ..."), f closed and *m
 * NULL. */
int verify_open(OmFile *f, const char *path, OmRaise **lazy, Model **m);
/* The same on size bytes at data (copied; name for messages). */
int verify_open_memory(OmFile *f, const void *data, size_t size,
		       const char *name, OmRaise **lazy, Model **m);
/* Gear g's own checks on m (from verify_open with lazy), once per gear:
 * 0, or -1 with the violation. */
int verify_gear(const OmFile *f, OmRaise *lazy, Model *m, size_t g);

#endif
