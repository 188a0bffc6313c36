/* cli/verify_cmd.c - `gearc verify FILE.om ...`: the command around
 * serializer/verify.c's checks (which libgearrt's loader makes too).
 * Several files are each checked and reported, the way a CI step checks
 * every model it built: one line each (prefixed with the file's name),
 * an error line for each that fails, exit 1 if any does. */
#include "cli.h"
#include "serializer/om.h"

enum { MAX_FILES = 4096 };

/* Checks one file: 0, or -1 with its error printed (and, named, a
 * line "PATH: failed" where its "PATH: verify: ...: ok" would be). */
static int verify_one(const char *path, bool verbose, bool quiet, bool named)
{
	OmFile f;
	bool said = named && !quiet;
	if (om_open(&f, path) < 0) { /* the error names the file */
		if (said)
			printf("%s: failed\n", path);
	} else {
		if (said)
			printf(verbose ? "%s:\n" : "%s: ", path);
		int rc = verify_print(&f, verbose, quiet);
		om_close(&f);
		if (!rc)
			return 0;
		if (said && !verbose)
			printf("failed\n");
		error_prefix("%s", path);
	}
	fflush(stdout); /* its line before its error */
	fail(EXIT_FAIL);
	return -1;
}

int cmd_verify(int argc, char **argv)
{
	const char *help = NULL, *verbose = NULL, *quiet = NULL;
	const char *pos[MAX_FILES];
	const ArgSpec spec[] = {
		{ "verbose", 'v', false, &verbose },
		{ "quiet", 'q', false, &quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	int npos;
	int done = cmd_args(argc, argv, spec, "verify", pos, MAX_FILES, &npos,
			    &help);
	if (done >= 0)
		return done;
	if (quiet && verbose) {
		error("--quiet and --verbose cannot be used together");
		return fail(EXIT_USAGE);
	}
	if (npos < 1) {
		error("verify needs the .om file(s) to check (gearc verify "
		      "FILE.om ...)");
		return fail(EXIT_USAGE);
	}
	int failed = 0;
	for (int i = 0; i < npos; i++)
		failed += verify_one(pos[i], verbose != NULL, quiet != NULL,
				     npos > 1) < 0;
	return failed ? EXIT_FAIL : EXIT_OK;
}
