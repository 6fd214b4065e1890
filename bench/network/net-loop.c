/* Bench helper: <count> unconnected UDP sends (sendto, the cgroup/sendmsg4 hook) to 192.0.2.1:9 from one socket,
 * in a network namespace with only `lo` (down: each send fails with ENETUNREACH after the hook), and prints the
 * nanoseconds they took. usage: net-loop <count> */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) return 2;
	long count = strtol(argv[1], NULL, 10);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) return 1;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
	inet_pton(AF_INET, "192.0.2.1", &to.sin_addr);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < count; i++) sendto(fd, "x", 1, 0, (struct sockaddr *)&to, sizeof(to));
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%lld\n", (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
	close(fd);
	return 0;
}
