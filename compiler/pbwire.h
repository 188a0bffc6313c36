/*
 * compiler/pbwire.h - a look at protobuf bytes before protobuf-c unpacks
 * them.
 *
 * protobuf-c's unpacker trusts its input in three ways that a reader of
 * hostile files cannot: it recurses once per nested message (a deep file
 * overflows the stack), it allocates for every entry of a repeated field
 * however empty (two bytes of input, an empty message, cost a whole
 * struct: some hundred bytes), and it cuts a string field at its first
 * NUL byte without a word.  pb_scan() walks the wire format with the
 * message's descriptor, iteratively, and reports all three before
 * anything is allocated.
 */
#ifndef GEARC_PBWIRE_H
#define GEARC_PBWIRE_H

#include <protobuf-c/protobuf-c.h>

#include "util.h"

typedef struct PbScan {
	int max_depth;	     /* in: nested messages allowed (<= 256) */
	uint64_t alloc;	     /* out: bound on what unpacking allocates */
	const char *message; /* out, on PB_NUL: the message type's name */
	const char *field;   /* and the string field holding a NUL byte */
} PbScan;

enum {
	PB_OK = 0,
	PB_BROKEN = -1, /* not the wire format */
	PB_DEEP = -2,	/* nested more than max_depth levels */
	PB_NUL = -3,	/* a string field holds a NUL byte */
};

/* Scans the message of type desc in p[0..n).  s->alloc bounds the bytes
 * protobuf-c 1.x allocates to unpack it, counting its scratch memory and
 * malloc's per-block overhead, so a caller can refuse a file that would
 * cost more memory than its size justifies.  Fields named doc_string are
 * not checked for NUL bytes (free text nothing here reads). */
int pb_scan(const uint8_t *p, size_t n, const ProtobufCMessageDescriptor *desc,
	    PbScan *s);

#endif
