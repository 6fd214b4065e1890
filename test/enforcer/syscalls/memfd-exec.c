/* Test helper: copies an executable into a memfd and executes it from there (fexecve): a fileless exec. With
 * --deleted <dir>, copies it into a file of <dir> instead, removes that file and executes it from its fd.
 * usage: memfd-exec [--deleted <dir>] <executable> [args...]; exits 126 when the exec itself fails. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	if (argc < 2) return 2;
	const char *deleted = NULL;
	if (argc >= 4 && !strcmp(argv[1], "--deleted")) {
		deleted = argv[2];
		argv += 2;
		argc -= 2;
	}
	int in = open(argv[1], O_RDONLY);
	if (in < 0) { perror("open"); return 2; }
	struct stat st;
	if (fstat(in, &st)) { perror("fstat"); return 2; }
	int fd;
	char path[4096];
	if (deleted) {
		snprintf(path, sizeof(path), "%s/rtctl-deleted-%d", deleted, (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
		if (fd < 0) { perror("open"); return 2; }
	} else {
		fd = memfd_create("rtctl-fileless", MFD_CLOEXEC);
		if (fd < 0) { perror("memfd_create"); return 2; }
	}
	off_t off = 0;
	while (off < st.st_size)
		if (sendfile(fd, in, &off, st.st_size - off) <= 0) { perror("sendfile"); return 2; }
	if (deleted) {
		/* Executing a file open for writing fails (ETXTBSY): reopen it read-only through /proc, then remove it. */
		char self[64];
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		int ro = open(self, O_RDONLY | O_CLOEXEC);
		if (ro < 0) { perror("reopen"); return 2; }
		close(fd);
		fd = ro;
		if (unlink(path)) { perror("unlink"); return 2; }
	}
	fexecve(fd, argv + 1, environ);
	perror("fexecve");
	return 126;
}
