/*
 * cli/atcflags.c - atc's flags that configure an Ascend NPU and have no
 * meaning on a CPU.  atc scripts pass them on every line (--soc_version
 * is required by atc), so gearc accepts each with the value shape atc
 * documents, and says in one warning line that it does not apply, and
 * what gearc does instead where it does something.  A value atc would
 * refuse is a usage error here too: a typo in a script should not pass
 * silently because the flag is ignored.
 *
 * The flags with a CPU meaning (--log, --mode, --out_nodes, --output_type,
 * --input_fp16_nodes, --insert_op_conf) live with the rest of compile's
 * flags in compile.c.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* values: "a|b|c" one of those words, "N" a positive integer, NULL any
 * non-empty text (a path, a chip name, an op list). */
static const struct {
	const char *name, *values, *instead;
} flags[ATC_NFLAGS] = {
	{ "soc_version", NULL,
	  "libgearrt picks its kernels for the CPU it runs on, which "
	  "'gearc --version' shows" },
	{ "core_type", "AiCore|VectorCore", NULL },
	{ "aicore_num", "N",
	  "threads are chosen at run time (gearc run --threads)" },
	{ "op_select_implmode",
	  "high_performance|high_precision|high_performance_for_all|"
	  "high_precision_for_all",
	  "gearc's kernels have one implementation of each op" },
	{ "optypelist_for_implmode", NULL, NULL },
	{ "enable_small_channel", "0|1", NULL },
	{ "buffer_optimize", "l2_optimize|l1_optimize|off_optimize",
	  "the memory plan always reuses buffers" },
	{ "fusion_switch_file", NULL, "--no-fuse turns gearc's fusion off" },
	{ "virtual_type", "0|1", NULL },
	{ "host_env_os", "linux", NULL },
	{ "host_env_cpu", "x86_64|aarch64",
	  "the .om runs on any CPU libgearrt is built for" },
	{ "display_model_info", "0|1", "'gearc dump FILE.om' shows it" },
	{ "enable_compress_weight", "true|false",
	  "weights are stored once, uncompressed" },
	{ "compress_weight_conf", NULL, NULL },
	{ "dump_mode", "0|1",
	  "--mode=1's JSON always has every shape" },
	{ "status_check", "0|1", NULL },
	{ "op_debug_level", "0|1|2|3|4", NULL },
	{ "debug_dir", NULL,
	  "--dump-after=PASS prints the graph after a pass" },
	{ "op_compiler_cache_mode", "enable|disable|force",
	  "kernels are compiled into libgearrt: there is no op cache" },
	{ "op_compiler_cache_dir", NULL, NULL },
	{ "is_input_adjust_hw_layout", "BOOLS",
	  "inputs keep the model's layout (NCHW, or NHWC with AIPP)" },
	{ "is_output_adjust_hw_layout", "BOOLS",
	  "outputs keep the model's layout" },
};

int atc_flags_add(ArgSpec *spec, const char **vals)
{
	for (int i = 0; i < ATC_NFLAGS; i++)
		spec[i] = (ArgSpec){ flags[i].name, 0, true, &vals[i] };
	return ATC_NFLAGS;
}

/* Whether v is one of the '|'-separated words of list. */
static bool one_of(const char *v, const char *list)
{
	size_t n = strlen(v);
	for (const char *p = list; p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, v, n))
			return true;
		p = bar ? bar + 1 : NULL;
	}
	return false;
}

/* "true,false,true": atc's per-node switches. */
static bool bool_list(const char *v)
{
	for (const char *p = v; p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (!(len == 4 && !strncmp(p, "true", 4)) &&
		    !(len == 5 && !strncmp(p, "false", 5)))
			return false;
		p = comma ? comma + 1 : NULL;
	}
	return true;
}

static int check_value(int i, const char *v)
{
	const char *want = flags[i].values;
	int64_t n;
	if (!*v)
		return error("--%s is empty: expected %s", flags[i].name,
			     !want ? "a value" : !strcmp(want, "N")
						  ? "a positive integer"
						  : want);
	if (!want)
		return 0;
	if (!strcmp(want, "N")) {
		if (!parse_i64(v, strlen(v), &n) || n < 1)
			return error("--%s: '%s' is not a positive integer",
				     flags[i].name, v);
		return 0;
	}
	if (!strcmp(want, "BOOLS")) {
		if (!bool_list(v))
			return error("--%s: '%s' is not a list of true and "
				     "false separated by ','", flags[i].name,
				     v);
		return 0;
	}
	if (!one_of(v, want))
		return error("--%s: '%s' is not one of %s", flags[i].name, v,
			     want);
	return 0;
}

int atc_flags_check(const char **vals)
{
	for (int i = 0; i < ATC_NFLAGS; i++)
		if (vals[i] && check_value(i, vals[i]) < 0)
			return -1;
	return 0;
}

void atc_flags_warn(const char **vals, FILE *f)
{
	for (int i = 0; i < ATC_NFLAGS; i++) {
		if (!vals[i])
			continue;
		fprintf(f, "gearc: warning: --%s=%s is an Ascend NPU setting, "
			"ignored on the CPU%s%s%s\n", flags[i].name, vals[i],
			flags[i].instead ? " (" : "",
			flags[i].instead ? flags[i].instead : "",
			flags[i].instead ? ")" : "");
	}
}
