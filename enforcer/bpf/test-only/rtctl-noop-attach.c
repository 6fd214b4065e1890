/* Test-only: loads a BPF object, attaches every program in it, prints "attached" and keeps them
 * attached until its standard input closes (then exits, and the kernel detaches them).
 *   rtctl-noop-attach <object.o>
 * Errors go to stderr with exit status 1. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s <object.o>\n", argv[0]);
		return 1;
	}
	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	int err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "load %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	struct bpf_program *prog;
	int n = 0;
	bpf_object__for_each_program(prog, obj) {
		struct bpf_link *link = bpf_program__attach(prog);
		if (!link) {
			fprintf(stderr, "attach %s: %s\n", bpf_program__name(prog), strerror(errno));
			return 1;
		}
		n++;
	}
	if (n == 0) {
		fprintf(stderr, "%s has no programs\n", argv[1]);
		return 1;
	}
	printf("attached %d\n", n);
	fflush(stdout);
	char buf[64];
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
