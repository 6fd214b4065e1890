/* Test helper: makes one raw system call naming a path, then exits 0 whatever the call returned.
 * usage: sys-call <nr> <path argument index: 0, or 1 with AT_FDCWD as argument 0> <path> */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4) return 2;
	long nr = strtol(argv[1], NULL, 10);
	if (argv[2][0] == '1')
		syscall(nr, AT_FDCWD, argv[3], 0, 0);
	else
		syscall(nr, argv[3], 0, 0, 0);
	return 0;
}
