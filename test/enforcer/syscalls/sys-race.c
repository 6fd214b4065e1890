/* Test helper: the path-swap race against a system call rule. One thread calls unlink(buf) a fixed number of
 * times while another flips buf between an allowed path and a blocked one (same length) as fast as it can, so
 * that the string the caller passed at the call's entry and the one the kernel then resolves differ. After each
 * call that succeeded it looks which file went and makes it again. Prints
 * `<calls> <denied (EACCES)> <allowed removed> <blocked removed> <other errors>` and exits 0.
 * usage: sys-race <calls> <allowed path> <blocked path> */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char buf[4096];
static const char *allowed, *blocked;
static size_t len;
static atomic_int stop;

static void *flip(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		memcpy(buf, blocked, len);
		memcpy(buf, allowed, len);
	}
	return NULL;
}

static void make(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0) close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 4) return 2;
	long calls = strtol(argv[1], NULL, 10);
	allowed = argv[2];
	blocked = argv[3];
	len = strlen(allowed) + 1;
	if (len != strlen(blocked) + 1 || len > sizeof(buf)) return 2;
	memcpy(buf, allowed, len);
	make(allowed);
	make(blocked);
	pthread_t t;
	if (pthread_create(&t, NULL, flip, NULL)) return 3;
	long denied = 0, allowed_removed = 0, blocked_removed = 0, other = 0;
	struct stat st;
	for (long i = 0; i < calls; i++) {
		if (unlink(buf) < 0) {
			if (errno == EACCES) denied++;
			else other++;
			continue;
		}
		if (stat(blocked, &st) < 0) {
			blocked_removed++;
			make(blocked);
		}
		if (stat(allowed, &st) < 0) {
			allowed_removed++;
			make(allowed);
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("%ld %ld %ld %ld %ld\n", calls, denied, allowed_removed, blocked_removed, other);
	return 0;
}
