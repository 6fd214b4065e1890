/* Test helper: makes one raw system call naming a path, prints the errno it returned (0: it succeeded), then
 * exits 0 whatever the call returned.
 * usage: sys-call <nr> <path argument index: 0, or 1 with AT_FDCWD as argument 0> <path> [next argument (octal)] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) return 2;
	long nr = strtol(argv[1], NULL, 10);
	long next = argc == 5 ? strtol(argv[4], NULL, 8) : 0;
	long r;
	if (argv[2][0] == '1')
		r = syscall(nr, AT_FDCWD, argv[3], next, 0);
	else
		r = syscall(nr, argv[3], next, 0, 0);
	printf("%d\n", r < 0 ? errno : 0);
	return 0;
}
