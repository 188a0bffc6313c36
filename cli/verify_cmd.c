/* cli/verify_cmd.c - `gearc verify`: the command around cli/verify.c's
 * checks (which libgearrt's loader makes too). */
#include "cli.h"
#include "serializer/om.h"

int cmd_verify(int argc, char **argv)
{
	const char *help = NULL, *verbose = NULL, *quiet = NULL, *pos[1];
	const ArgSpec spec[] = {
		{ "verbose", 'v', false, &verbose },
		{ "quiet", 'q', false, &quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	int npos;
	int done = cmd_args(argc, argv, spec, "verify", pos, 1, &npos, &help);
	if (done >= 0)
		return done;
	if (quiet && verbose) {
		error("--quiet and --verbose cannot be used together");
		return fail(EXIT_USAGE);
	}
	if (npos != 1) {
		error("verify needs the .om file to check (gearc verify "
		      "FILE.om)");
		return fail(EXIT_USAGE);
	}
	OmFile f;
	if (om_open(&f, pos[0]) < 0)
		return fail(EXIT_FAIL);
	int rc = verify_print(&f, verbose != NULL, quiet != NULL);
	if (rc < 0)
		error_prefix("%s", pos[0]);
	om_close(&f);
	return rc < 0 ? fail(EXIT_FAIL) : EXIT_OK;
}
