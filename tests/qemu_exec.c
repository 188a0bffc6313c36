/*
 * tests/qemu_exec.c - runs the tests' children under qemu-user too.
 *
 * Criterion runs each test in a child that re-executes the test binary
 * (BoxFort's execve of /proc/self/exe), and the CLI tests exec gearc;
 * under qemu-user an exec is the host's, so those children ran natively,
 * on the host's CPU (an x86-64 binary), or not at all (an ARM64 one,
 * without binfmt_misc).  Preloaded into the emulated test binary
 * (qemu's -E LD_PRELOAD=this.so), this library runs every exec of a
 * program of the emulated machine through GEARC_QEMU ("qemu-aarch64 -cpu
 * neoverse-n1", split at spaces), preloading itself there again; other
 * programs (the host's /bin/sh) run as they are, without it.  The
 * variable's absence leaves every exec alone.
 *
 * Built by make check-nehalem / check-arm64 for the emulated machine;
 * not part of any library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#define GUEST_MACHINE 62 /* EM_X86_64 */
#elif defined(__aarch64__)
#define GUEST_MACHINE 183 /* EM_AARCH64 */
#else
#define GUEST_MACHINE -1
#endif

extern char **environ;

typedef int (*Execve)(const char *, char *const[], char *const[]);

/* This library's path (LD_PRELOAD's value when it was loaded): taken
 * out of the environment, so that the host's programs (a shell that
 * system() runs) do not try to preload a library of another machine. */
static char shim[4096];

__attribute__((constructor)) static void take_preload(void)
{
	const char *p = getenv("LD_PRELOAD");
	if (p && getenv("GEARC_QEMU")) {
		snprintf(shim, sizeof(shim), "%s", p);
		unsetenv("LD_PRELOAD");
	}
}

static Execve real_execve(void)
{
	static Execve f;
	if (!f)
		f = (Execve)(uintptr_t)dlsym(RTLD_NEXT, "execve");
	return f;
}

/* Whether path is an ELF file of the emulated machine. */
static int guest_program(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	return n == (ssize_t)sizeof(h) && !memcmp(h, "\177ELF", 4) &&
	       (h[18] | h[19] << 8) == GUEST_MACHINE;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	const char *q = getenv("GEARC_QEMU");
	if (!q || !*q || !shim[0] || !guest_program(path))
		return real_execve()(path, argv, envp);
	/* GEARC_QEMU's words, -E LD_PRELOAD=shim, -0 argv[0], path,
	 * argv[1..] */
	char words[1024], pre[4200];
	snprintf(words, sizeof(words), "%s", q);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s", shim);
	size_t n = 0;
	while (argv[n])
		n++;
	char **a = calloc(n + 48, sizeof(char *));
	if (!a) {
		errno = ENOMEM;
		return -1;
	}
	size_t k = 0;
	for (char *w = strtok(words, " "); w && k < 40; w = strtok(NULL, " "))
		a[k++] = w;
	if (!k) {
		free(a);
		return real_execve()(path, argv, envp);
	}
	a[k++] = "-E";
	a[k++] = pre;
	a[k++] = "-0";
	a[k++] = n ? argv[0] : (char *)path;
	a[k++] = (char *)path;
	for (size_t i = 1; i < n; i++)
		a[k++] = argv[i];
	a[k] = NULL;
	/* the emulator is the host's: found on PATH */
	char *const *env = envp;
	const char *dirs = getenv("PATH");
	char prog[4096], list[4096];
	snprintf(list, sizeof(list), "%s", dirs ? dirs : "/usr/bin:/bin");
	int err = ENOENT;
	for (char *d = strtok(list, ":"); d; d = strtok(NULL, ":")) {
		snprintf(prog, sizeof(prog), "%s/%s", d, a[0]);
		real_execve()(a[0][0] == '/' ? a[0] : prog, a, env);
		err = errno;
		if (a[0][0] == '/')
			break;
	}
	free(a);
	errno = err;
	return -1;
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int execvp(const char *file, char *const argv[])
{
	if (strchr(file, '/'))
		return execve(file, argv, environ);
	const char *dirs = getenv("PATH");
	char list[4096], prog[4096];
	snprintf(list, sizeof(list), "%s", dirs ? dirs : "/usr/bin:/bin");
	for (char *d = strtok(list, ":"); d; d = strtok(NULL, ":")) {
		snprintf(prog, sizeof(prog), "%s/%s", d, file);
		if (access(prog, X_OK) == 0)
			return execve(prog, argv, environ);
	}
	errno = ENOENT;
	return -1;
}
