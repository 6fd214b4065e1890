/* Test helper: makes one 32-bit system call (int 0x80, the i386 table) from 64-bit code, with a path copied below
 * 4 GiB (the call sees 32-bit pointers), prints the errno it returned (0: it succeeded), exits 0.
 * usage: sys-call-compat <i386 nr> <path> [next argument (octal)] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) return 2;
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (low == MAP_FAILED) return 3;
	strncpy(low, argv[2], 4095);
	long nr = strtol(argv[1], NULL, 10), next = argc == 4 ? strtol(argv[3], NULL, 8) : 0, r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"((long)low), "c"(next), "d"(0L) : "memory");
	printf("%ld\n", r < 0 ? -r : 0);
	return 0;
}
