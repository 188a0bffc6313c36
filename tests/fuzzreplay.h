/* tests/fuzzreplay.h - feed every file of a directory to a fuzz harness. */
#ifndef GEARC_FUZZREPLAY_H
#define GEARC_FUZZREPLAY_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

static int replay_by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_dir(const char *dir,
		       int (*one)(const uint8_t *data, size_t size))
{
	DIR *d = opendir(dir);
	cr_assert(d, "no directory %s", dir);
	char *names[4096];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 4096)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(char *), replay_by_name);
	for (size_t i = 0; i < n; i++) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		FILE *f = fopen(path, "rb");
		cr_assert(f, "cannot open %s", path);
		fseek(f, 0, SEEK_END);
		long size = ftell(f);
		fseek(f, 0, SEEK_SET);
		uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
		cr_assert_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
		fclose(f);
		one(buf, (size_t)size); /* aborts on a bug */
		free(buf);
		free(names[i]);
	}
}

#endif
