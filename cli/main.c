/* cli/main.c - gearc's entry point (skeleton; the real CLI follows). */
#include <stdio.h>

#include "compiler/ir.h"

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("gearc %s (%d ops)\n", GEARC_VERSION, OP_COUNT);
	return 0;
}
