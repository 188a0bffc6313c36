/*
 * serializer/omread.h - questions dump, verify and the runtime ask of a
 * gearom.Model that om_open() validated (om.h): attributes by name
 * (compiler/ownattrs.h names gearc's own), partition nodes, the options
 * the compile recorded.  The raise of the whole file into the IR is
 * serializer/raise.h.
 */
#ifndef GEARC_OMREAD_H
#define GEARC_OMREAD_H

#include "om.h"

/* Node n's attribute called name, or NULL. */
const Gearom__Attribute *om_attr(const Gearom__Node *n, const char *name);
/* A STRING attribute's bytes as a C string in buf (cut to len - 1
 * bytes); "" if a is NULL. */
const char *om_attr_cstr(const Gearom__Attribute *a, char *buf, size_t len);
/* The partition kind of node n ("known", "unknown", or whatever else the
 * file says) in buf, or NULL if n is not a partition node (a
 * PartitionedCall with a PARTITION_ATTR). */
const char *om_partition_kind(const Gearom__Node *n, char *buf, size_t len);
/* The option the compile recorded under key ("gear_scope"), or NULL. */
const char *om_option(const Gearom__Model *m, const char *key);
/* Per graph of m, the gear whose branch it is or lies below (the first
 * such gear), or -1: malloc'd, n_graphs entries. */
int32_t *om_graph_gears(const Gearom__Model *m);

#endif
