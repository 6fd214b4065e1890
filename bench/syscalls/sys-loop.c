/* Bench helper: makes <count> raw system calls <nr> (with a path argument that does not exist, for path calls)
 * and prints the nanoseconds they took. usage: sys-loop <nr> <count> */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) return 2;
	long nr = strtol(argv[1], NULL, 10);
	long count = strtol(argv[2], NULL, 10);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < count; i++) syscall(nr, "/nonexistent/rtctl-bench", 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	return 0;
}
