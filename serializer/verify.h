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

/* The memory-plan checks alone on a validated file: 0, or -1 with the
 * first violation as the error. */
int verify_plans(const OmFile *f);
/* Every check of 'gearc verify' (plans, the gear table, the input/output
 * table against every graph a run starts at, partitions, shapes
 * re-inferred), silently: 0, or -1 with the first violation. */
int verify_file(const OmFile *f);
/* The same, printing what was checked ("verify: N graphs, ...: ok"). */
int verify_print(const OmFile *f, bool verbose, bool quiet);
/* om_open, then verify_file: how every command that uses a .om's
 * contents (the runtime's loader, export) reads it, so each refuses what
 * verify refuses.  -1 with the error ("PATH: ..."), f closed. */
int verify_open(OmFile *f, const char *path);

#endif
