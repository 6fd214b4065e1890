/* Test helper: copies an executable into a memfd and executes it from there (fexecve): a fileless exec.
 * usage: memfd-exec <executable> [args...]; exits 126 when the exec itself fails. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc < 2) return 2;
	int in = open(argv[1], O_RDONLY);
	if (in < 0) { perror("open"); return 2; }
	struct stat st;
	if (fstat(in, &st)) { perror("fstat"); return 2; }
	int fd = memfd_create("rtctl-fileless", MFD_CLOEXEC);
	if (fd < 0) { perror("memfd_create"); return 2; }
	off_t off = 0;
	while (off < st.st_size)
		if (sendfile(fd, in, &off, st.st_size - off) <= 0) { perror("sendfile"); return 2; }
	fexecve(fd, argv + 1, environ);
	perror("fexecve");
	return 126;
}
