/* cli/args.c - flag parsing, the error line and output directories,
 * shared by every subcommand. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

json_object *json_name(const char *s)
{
	size_t n;
	char *e = str_escape(s, strlen(s), 0, &n);
	json_object *o = json_object_new_string_len(e, (int)n);
	free(e);
	return o;
}

int fail(int status)
{
	fprintf(stderr, "gearc: error: %s\n", last_error());
	return status;
}

/* Flag names compare with '-' and '_' as the same character, so atc's
 * --input_shape and the GNU-style --input-shape both work. */
static bool name_eq(const char *a, size_t alen, const char *b)
{
	size_t i = 0;
	for (; i < alen && b[i]; i++) {
		char x = a[i] == '-' ? '_' : a[i];
		char y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return i == alen && !b[i];
}

static const ArgSpec *find_long(const ArgSpec *spec, const char *name,
				size_t len)
{
	for (; spec->name; spec++)
		if (name_eq(name, len, spec->name))
			return spec;
	return NULL;
}

/* Edit distance of a[0..alen) and b with '-' and '_' the same; stops
 * counting past 3 (only "at most 2" matters). */
static size_t edit_distance(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b), row[128];
	if (alen >= ARRAY_SIZE(row) || blen >= ARRAY_SIZE(row))
		return 99;
	for (size_t j = 0; j <= blen; j++)
		row[j] = j;
	for (size_t i = 1; i <= alen; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= blen; j++) {
			char x = a[i - 1] == '-' ? '_' : a[i - 1];
			char y = b[j - 1] == '-' ? '_' : b[j - 1];
			size_t best = diag + (x != y), up = row[j] + 1,
			       left = row[j - 1] + 1;
			best = up < best ? up : best;
			best = left < best ? left : best;
			diag = row[j];
			row[j] = best;
		}
	}
	return row[blen];
}

/* Whether one name starts with the other, over at least 3 characters:
 * "--soc" for --soc_version, "--input_shape_range" for --input_shape. */
static bool prefix_of(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b), n = alen < blen ? alen : blen;
	if (n < 3)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((a[i] == '-' ? '_' : a[i]) != (b[i] == '-' ? '_' : b[i]))
			return false;
	return true;
}

/* The flag of spec a user who typed name most likely meant: the closest
 * within edit distance 1, else the first that is a prefix of name or has
 * name as its prefix ("--soc" is --soc_version, not --log), else the
 * closest within distance 2; NULL if none. */
static const ArgSpec *near_miss(const ArgSpec *spec, const char *name,
				size_t len)
{
	const ArgSpec *best = NULL, *prefix = NULL;
	size_t bestd = 3;
	for (; spec->name; spec++) {
		size_t d = edit_distance(name, len, spec->name);
		if (d < bestd)
			best = spec, bestd = d;
		if (!prefix && prefix_of(name, len, spec->name))
			prefix = spec;
	}
	return best && bestd <= 1 ? best : prefix ? prefix : best;
}

static const ArgSpec *find_short(const ArgSpec *spec, char c)
{
	for (; spec->name; spec++)
		if (spec->short_name && spec->short_name == c)
			return spec;
	return NULL;
}

static int set_value(const ArgSpec *s, const char *v, const char *cmd)
{
	if (*s->value)
		return error("--%s given twice (gearc %s takes it once)",
			     s->name, cmd);
	*s->value = v;
	return 0;
}

static int parse_long(int argc, char **argv, int *i, const ArgSpec *spec,
		      const char *cmd)
{
	const char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const ArgSpec *s = find_long(spec, arg, len);
	if (!s) {
		const ArgSpec *near = near_miss(spec, arg, len);
		if (near)
			return error("unknown option '--%.*s' for 'gearc %s'; "
				     "did you mean --%s?", (int)len, arg, cmd,
				     near->name);
		return error("unknown option '--%.*s' for 'gearc %s' (see "
			     "'gearc help %s')",
			     (int)len, arg, cmd, cmd);
	}
	if (!s->takes_value) {
		if (eq)
			return error("--%s takes no value (got '%s')", s->name,
				     eq + 1);
		return set_value(s, "1", cmd);
	}
	if (eq)
		return set_value(s, eq + 1, cmd);
	if (*i + 1 >= argc)
		return error("--%s needs a value (--%s=VALUE)", s->name,
			     s->name);
	return set_value(s, argv[++*i], cmd);
}

static int parse_short(int argc, char **argv, int *i, const ArgSpec *spec,
		       const char *cmd)
{
	const char *arg = argv[*i];
	const ArgSpec *s = find_short(spec, arg[1]);
	if (!s)
		return error("unknown option '%s' for 'gearc %s' (see 'gearc "
			     "help %s')",
			     arg, cmd, cmd);
	if (!s->takes_value) {
		if (arg[2])
			return error("unknown option '%s' for 'gearc %s'", arg,
				     cmd);
		return set_value(s, "1", cmd);
	}
	if (arg[2])
		return set_value(s, arg + 2, cmd);
	if (*i + 1 >= argc)
		return error("-%c needs a value", arg[1]);
	return set_value(s, argv[++*i], cmd);
}

int args_parse(int argc, char **argv, const ArgSpec *spec, const char *cmd,
	       const char **pos, int maxpos, int *npos)
{
	bool flags = true;
	*npos = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		int rc = 0;
		if (flags && !strcmp(a, "--"))
			flags = false;
		else if (flags && a[0] == '-' && a[1] == '-')
			rc = parse_long(argc, argv, &i, spec, cmd);
		else if (flags && a[0] == '-' && a[1])
			rc = parse_short(argc, argv, &i, spec, cmd);
		else if (*npos < maxpos)
			pos[(*npos)++] = a;
		else
			rc = error("unexpected argument '%s' for 'gearc %s'", a,
				   cmd);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int make_output_dir(const char *flag, const char *dir, bool *made)
{
	struct stat st;
	*made = false;
	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode)
			       ? 0
			       : error("%s '%s': not a directory", flag, dir);
	if (errno != ENOENT || mkdir(dir, 0777) < 0)
		return error("%s '%s': cannot create the directory: %s", flag,
			     dir, strerror(errno));
	*made = true;
	return 0;
}

uint64_t phys_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
}

int cmd_args(int argc, char **argv, const ArgSpec *spec, const char *cmd,
	     const char **pos, int maxpos, int *npos, const char *const *help)
{
	if (args_parse(argc, argv, spec, cmd, pos, maxpos, npos) < 0)
		return fail(EXIT_USAGE);
	if (*help) {
		print_help(stdout, cmd);
		return EXIT_OK;
	}
	return -1;
}
