/* Test program for the fanotify helper's per-process identity cache (process-identity.test.ts).
 *
 *   identity-probe reuse <container-pid> <file>
 *       Enters the container's mount namespace, then: process A (pid 1 of a new pid namespace) opens <file>
 *       and exits; once A is reaped, process B is created with A's host pid (clone3 set_tid) in this pid
 *       namespace and opens <file>. Prints `reuse <pid>`; exit 3 when the pid was taken meanwhile (retry).
 *   identity-probe exec <container-pid> <file>
 *       Enters the container's mount namespace; a child opens <file> twice (the helper keeps a process's
 *       links from their second read on), then execs the container's /bin/sh `-c ': < <file>; : < <file>'`,
 *       which opens it twice more in the same process. Prints `exec <pid>`.
 *   identity-probe nsmove <container-pid> <file> <n>
 *       A child enters the container's mount namespace and opens <file> n times while its parent (this
 *       program) is still in the host's; then the parent enters the container's mount namespace too, and the
 *       child opens <file> n times more. Prints `nsmove <pid>`.
 *   identity-probe chdir <container-pid> <file> <dir> <n>
 *       Enters the container's mount namespace; a child opens <file> n times, each time at once followed by a
 *       chdir, alternately to <dir> and to "/" (its first open is made in "/"). Prints `chdir <pid>`.
 *   identity-probe exit <container-pid> <file> <n>
 *       Enters the container's mount namespace; n children in turn each open <file> and exit at once.
 *       Prints `exit <pid>...` (the children's pids).
 * Every open is closed at once; the helper reports each (an Audit rule on the file's directory). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int open_close(const char *file) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  close(fd);
  return 0;
}

static pid_t clone3_with(uint64_t flags, pid_t *set_tid, size_t n) {
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = flags;
  args.exit_signal = SIGCHLD;
  args.set_tid = (uint64_t)(uintptr_t)set_tid;
  args.set_tid_size = n;
  return (pid_t)syscall(SYS_clone3, &args, sizeof args);
}

static int enter_mounts(const char *container_pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%s/ns/mnt", container_pid);
  int ns = open(path, O_RDONLY | O_CLOEXEC);
  if (ns < 0 || setns(ns, CLONE_NEWNS) != 0) {
    fprintf(stderr, "setns %s: %s\n", path, strerror(errno));
    return -1;
  }
  close(ns);
  return 0;
}

static int wait_ok(pid_t pid) {
  int status;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "reuse") == 0) {
    if (enter_mounts(argv[2]) != 0) return 1;
    pid_t a = clone3_with(CLONE_NEWPID, NULL, 0);
    if (a < 0) {
      fprintf(stderr, "clone3: %s\n", strerror(errno));
      return 1;
    }
    if (a == 0) _exit(open_close(argv[3]) == 0 ? 0 : 1);
    if (wait_ok(a) != 0) return 1;
    pid_t tid[1] = {a};
    pid_t b = clone3_with(0, tid, 1);
    if (b < 0) {
      if (errno == EEXIST) return 3;
      fprintf(stderr, "clone3 set_tid %d: %s\n", (int)a, strerror(errno));
      return 1;
    }
    if (b == 0) _exit(open_close(argv[3]) == 0 ? 0 : 1);
    if (wait_ok(b) != 0) return 1;
    printf("reuse %d\n", (int)a);
    return 0;
  }
  if (argc == 4 && strcmp(argv[1], "exec") == 0) {
    if (enter_mounts(argv[2]) != 0) return 1;
    fflush(stdout);
    pid_t e = fork();
    if (e < 0) return 1;
    if (e == 0) {
      if (open_close(argv[3]) != 0 || open_close(argv[3]) != 0) _exit(1);
      char script[8300];
      snprintf(script, sizeof script, ": < %s; : < %s", argv[3], argv[3]);
      execl("/bin/sh", "sh", "-c", script, (char *)NULL);
      _exit(1);
    }
    if (wait_ok(e) != 0) return 1;
    printf("exec %d\n", (int)e);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "nsmove") == 0) {
    int n = atoi(argv[4]);
    int to_parent[2], to_child[2];
    if (pipe(to_parent) != 0 || pipe(to_child) != 0) return 1;
    fflush(stdout);
    pid_t c = fork();
    if (c < 0) return 1;
    if (c == 0) {
      char b;
      if (enter_mounts(argv[2]) != 0) _exit(1);
      for (int i = 0; i < n; i++)
        if (open_close(argv[3]) != 0) _exit(1);
      if (write(to_parent[1], "m", 1) != 1 || read(to_child[0], &b, 1) != 1) _exit(1);
      for (int i = 0; i < n; i++)
        if (open_close(argv[3]) != 0) _exit(1);
      _exit(0);
    }
    char b;
    if (read(to_parent[0], &b, 1) != 1 || enter_mounts(argv[2]) != 0 || write(to_child[1], "m", 1) != 1) {
      kill(c, SIGKILL);
      wait_ok(c);
      return 1;
    }
    if (wait_ok(c) != 0) return 1;
    printf("nsmove %d\n", (int)c);
    return 0;
  }
  if (argc == 6 && strcmp(argv[1], "chdir") == 0) {
    if (enter_mounts(argv[2]) != 0) return 1;
    int n = atoi(argv[5]);
    fflush(stdout);
    pid_t c = fork();
    if (c < 0) return 1;
    if (c == 0) {
      if (chdir("/") != 0) _exit(1);
      for (int i = 0; i < n; i++) {
        if (open_close(argv[3]) != 0) _exit(1);
        if (chdir(i % 2 == 0 ? argv[4] : "/") != 0) _exit(1);
      }
      _exit(0);
    }
    if (wait_ok(c) != 0) return 1;
    printf("chdir %d\n", (int)c);
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "exit") == 0) {
    if (enter_mounts(argv[2]) != 0) return 1;
    int n = atoi(argv[4]);
    printf("exit");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
      pid_t c = fork();
      if (c < 0) return 1;
      if (c == 0) _exit(open_close(argv[3]) == 0 ? 0 : 1);
      if (wait_ok(c) != 0) return 1;
      printf(" %d", (int)c);
    }
    printf("\n");
    return 0;
  }
  fprintf(stderr, "usage: identity-probe reuse|exec|nsmove|chdir|exit <container-pid> <file> ...\n");
  return 2;
}
