/* cli/main.c - gearc's entry point: the subcommand table (git's commands[]). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "runtime/gearrt.h"

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("gearc %s\ncpu: %s\n", GEARC_VERSION, gearrt_cpu_features());
	return EXIT_OK;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "compile", cmd_compile },
	{ "compare", cmd_compare },
	{ "dump", cmd_dump },
	{ "export", cmd_export },
	{ "help", cmd_help },
	{ "inspect", cmd_inspect },
	{ "verify", cmd_verify },
	{ "run", cmd_run },
};

/* Runs a command, then makes sure everything it wrote reached stdout: a
 * full disk or closed pipe is a failure, not a silent truncation. */
static int run(int (*fn)(int, char **), int argc, char **argv)
{
	int status = fn(argc, argv);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno != EPIPE)
			fprintf(stderr, "gearc: error: writing to stdout: %s\n",
				strerror(errno));
		return status ? status : EXIT_FAIL;
	}
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_help(stderr, NULL);
		return EXIT_USAGE;
	}
	const char *a = argv[1];
	if (!strcmp(a, "--help") || !strcmp(a, "-h"))
		return run(cmd_help, 0, NULL);
	if (!strcmp(a, "--version") || !strcmp(a, "-V"))
		return run(cmd_version, 0, NULL);
	if (!strcmp(a, "run")) /* its threads wait briefly (gearrt.h) */
		gearrt_wait_policy_exec(argv);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(a, commands[i].name))
			return run(commands[i].run, argc - 2, argv + 2);
	if (a[0] == '-') /* atc style: gearc --model=... means compile */
		return run(cmd_compile, argc - 1, argv + 1);
	error("'%s' is not a gearc command (commands: compile, compare, inspect, dump, export, help, verify, run; "
	      "see 'gearc --help')",
	      a);
	return fail(EXIT_USAGE);
}
