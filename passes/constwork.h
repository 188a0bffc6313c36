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
/* Work on weights done for a model's graphs: results runs read are
 * allocated from keep, the others from mid until constwork_end; a node
 * done in one graph is not done again for its twin (same op, attributes
 * and input tensors) in another. */
typedef struct ConstWork {
	Model *m;
	Arena *keep;
	Arena mid;
	struct Done *done;
} ConstWork;

void constwork_begin(ConstWork *cw, Model *m, Arena *keep);
/* Computes the constwork_values() of g once (the reference kernels,
 * each node on scratch of its own), turns the ones a node outside the
 * set reads into weights and flags the nodes that made them
 * NF_CONSTWORK: the number of such nodes, or -1 with an error naming the
 * node (g is then unfit to run). */
int constwork_eval(ConstWork *cw, Graph *g);
void constwork_end(ConstWork *cw);
/* Whether node n's work was done by constwork_eval: it needs no task. */
bool constwork_done(const Node *n);

#endif
