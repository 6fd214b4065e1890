/* What the machine charges for the kernel work the fanotify plane is made of, so that figures measured on
 * different machines can be compared: a bare system call, a /proc link read, an open+close, and a wake-up
 * round trip between two processes (each side sleeps until the other writes: two wake-ups and two switches,
 * as a permission event's round trip has). Prints one JSON object; each figure is the median of 5 rounds,
 * in µs per operation. The open+close opens the file named by the first argument, else the tool itself.
 * Built and run by bench/support/machine-costs.ts; not part of the product. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v) {
  qsort(v, ROUNDS, sizeof *v, cmp);
  return v[ROUNDS / 2];
}

static double bare_syscall(int n) {
  double t = now_us();
  for (int i = 0; i < n; i++) syscall(SYS_getppid);
  return (now_us() - t) / n;
}

static double proc_readlink(int n) {
  char buf[4096];
  double t = now_us();
  for (int i = 0; i < n; i++)
    if (readlink("/proc/self/exe", buf, sizeof buf) < 0) return -1;
  return (now_us() - t) / n;
}

static double open_close(const char *path, int n) {
  double t = now_us();
  for (int i = 0; i < n; i++) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    close(fd);
  }
  return (now_us() - t) / n;
}

/* One byte back and forth over two pipes between this process and a child, `n` times. */
static double wake_round_trip(int n) {
  int ping[2], pong[2];
  if (pipe(ping) != 0 || pipe(pong) != 0) return -1;
  pid_t child = fork();
  if (child < 0) return -1;
  char b = 0;
  if (child == 0) {
    for (int i = 0; i < n; i++)
      if (read(ping[0], &b, 1) != 1 || write(pong[1], &b, 1) != 1) _exit(1);
    _exit(0);
  }
  double t = now_us();
  for (int i = 0; i < n; i++)
    if (write(ping[1], &b, 1) != 1 || read(pong[0], &b, 1) != 1) return -1;
  double per = (now_us() - t) / n;
  int status = 0;
  waitpid(child, &status, 0);
  close(ping[0]);
  close(ping[1]);
  close(pong[0]);
  close(pong[1]);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? per : -1;
}

int main(int argc, char **argv) {
  const char *file = argc > 1 ? argv[1] : argv[0]; /* a regular file: the tool itself */
  double sc[ROUNDS], rl[ROUNDS], oc[ROUNDS], wk[ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    sc[r] = bare_syscall(200000);
    rl[r] = proc_readlink(20000);
    oc[r] = open_close(file, 20000);
    wk[r] = wake_round_trip(5000);
    if (rl[r] < 0 || oc[r] < 0 || wk[r] < 0) {
      fprintf(stderr, "machine-costs: a measure failed (round %d)\n", r);
      return 1;
    }
  }
  printf("{\"syscallMicros\":%.3f,\"procReadlinkMicros\":%.3f,\"openCloseMicros\":%.3f,"
         "\"wakeRoundTripMicros\":%.3f,\"rounds\":%d}\n",
         median(sc), median(rl), median(oc), median(wk), ROUNDS);
  return 0;
}
