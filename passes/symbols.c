/* passes/symbols.c - the symbolic walk over a dynamic graph (hybrid.h). */
#include "hybrid.h"

void hybrid_symbols(Graph *g)
{
	(void)g;
}
