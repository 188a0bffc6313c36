/*
 * passes/constwork.h - work on weights alone, done once (passes/constwork.c).
 */
#ifndef GEARC_CONSTWORK_H
#define GEARC_CONSTWORK_H

#include "compiler/ir.h"

/* Node.flags: the node's work was done once (constwork_eval). */
enum { NF_CONSTWORK = 1 << 0 };

/* Whether op's work on weights may be done once: it has a kernel and
 * gives the same result each run (not a random op). */
bool constwork_op(int op);
/* Per value of g (g->nvals + 1 entries, malloc'd; free it): 1 if a node
 * whose inputs are all weights, or made by such nodes, makes it, and the
 * value is too large to have been folded: the runtime computes it once
 * when it opens the model, so the memory plan leaves it out. */
uint8_t *constwork_values(const Graph *g);
/* Computes those values of g once (the reference kernels, scratch from
 * a temporary arena), turns the ones a node outside the set reads into
 * weights allocated from keep and flags the nodes that made them
 * NF_CONSTWORK: the number of such nodes, or -1 with an error naming the
 * node (g is then unfit to run). */
int constwork_eval(Model *m, Graph *g, Arena *keep);
/* Whether node n's work was done by constwork_eval: it needs no task. */
bool constwork_done(const Node *n);

#endif
