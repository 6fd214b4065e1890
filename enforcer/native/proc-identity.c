/* Per-process identity cache for the fanotify helper's reports (proc-identity.h). */
#define _GNU_SOURCE
#include "proc-identity.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* PIDFD_GET_INFO (include/uapi/linux/pidfd.h, Linux 6.13): the first version of the structure, 64 bytes. */
struct rt_pidfd_info {
  uint64_t mask;
  uint64_t cgroupid;
  uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  int32_t exit_code;
};
#define RT_PIDFD_INFO_PID 1ULL
#define RT_PIDFD_INFO_CREDS 2ULL
#define RT_PIDFD_GET_INFO _IOWR(0xFF, 11, struct rt_pidfd_info)

/* Direct-mapped by pid: a process evicted by another one with the same slot is simply read again. */
#define SLOTS 1024u

struct slot {
  int pid;   /* 0: empty */
  int pidfd; /* refers to the process this entry describes */
  /* /proc/<pid> of that process (O_PATH): a name read through it (exe, cwd, ns/mnt, syscall) is always that
   * process's, and fails (ENOENT, ESRCH) once it is gone; never another process's that took the pid. */
  int dirfd;
  int sysfd; /* /proc/<pid>/syscall of that process, opened on first use; -1 */
  /* The links exe, cwd and ns/mnt of that process themselves (O_PATH | O_NOFOLLOW, see LINKS), opened at
   * their second read: -1 not opened, -2 could not be opened (not tried again). `seen`: links read once. */
  int links[3];
  unsigned seen;
  int nspid;
  /* The parent's nspid as last looked up, for parent pid `parent`. A process's parent changes only by
   * reparenting to another live process (a subreaper or init), never to a later holder of the same pid, so
   * while `parent` is still its ppid, `parent_nspid` still describes it. */
  int parent, parent_nspid;
};

static struct slot slots[SLOTS];
static int use_pidfd = 1;      /* pidfd_open works */
static int use_info = 1;       /* PIDFD_GET_INFO works (cleared on the first EINVAL/ENOTTY) */
static struct proc_identity_stats stats;

#define EMPTY_SLOT ((struct slot){.pid = 0, .pidfd = -1, .dirfd = -1, .sysfd = -1, .links = {-1, -1, -1}})

/* The links read per reported event. A link opened with O_PATH | O_NOFOLLOW is the link itself, not where it
 * points: readlinkat(fd, "") computes its target at each read (the process's executable, working directory
 * or mount namespace as they are then), so a kept one is never stale; it only saves the lookup of the name
 * (about a quarter of a read). Like the directory it is opened from, it belongs to the entry's process and
 * fails once that process is gone (ENOENT, EACCES), never reading another process that took the pid. */
static const char *const LINKS[3] = {"exe", "cwd", "ns/mnt"};
/* Whether links are kept (ident_keep_links): they take up to three more descriptors per slot. */
static int keep_links;
#define FD_LIMIT 16384

void ident_init(void) {
  for (unsigned i = 0; i < SLOTS; i++) slots[i] = EMPTY_SLOT;
  /* Room for the descriptors of every slot beside the event file descriptors (a slot whose descriptors
   * cannot be opened is not cached: its reads go by path). */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max && rl.rlim_cur < FD_LIMIT) {
    rl.rlim_cur = rl.rlim_max < FD_LIMIT ? rl.rlim_max : FD_LIMIT;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  stats.pidfd_info = -1;
}

int ident_keep_links(long others) {
  struct rlimit rl;
  long most = (long)SLOTS * 6 + others;
  const char *off = getenv("RTCTL_FANOTIFY_NO_LINK_FDS"); /* for measuring against */
  keep_links = getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rl.rlim_cur == RLIM_INFINITY || (long)rl.rlim_cur >= most) &&
               !(off && *off);
  return keep_links;
}

static void clear(struct slot *s);

void ident_reset(void) {
  for (unsigned i = 0; i < SLOTS; i++) clear(&slots[i]);
}

struct proc_identity_stats ident_stats(void) {
  struct proc_identity_stats s = stats;
  if (s.pidfd_info < 0) s.pidfd_info = 0;
  return s;
}

/* Whether the process behind a pidfd still runs (a pidfd polls readable once it exited). */
static int alive(int pidfd) {
  struct pollfd p = {.fd = pidfd, .events = POLLIN};
  return poll(&p, 1, 0) == 0;
}

static void clear(struct slot *s) {
  if (s->pidfd >= 0) close(s->pidfd);
  if (s->dirfd >= 0) close(s->dirfd);
  if (s->sysfd >= 0) close(s->sysfd);
  for (unsigned k = 0; k < 3; k++)
    if (s->links[k] >= 0) close(s->links[k]);
  *s = EMPTY_SLOT;
}

static int parse_int(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return atoi(p);
}

/* One read of /proc/<pid>/status: PPid, the real uid, and the last NSpid (the pid in its own namespace).
 * Returns -1 when the file cannot be read. */
static int read_status(int dirfd, int pid, int *ppid, int *uid, int *nspid) {
  char path[64], buf[4096];
  int fd = -1;
  if (dirfd >= 0) fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  stats.status_reads++;
  if (n <= 0) return -1;
  buf[n] = 0;
  for (char *line = buf; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    if (strncmp(line, "PPid:", 5) == 0) {
      *ppid = parse_int(line + 5);
    } else if (strncmp(line, "Uid:", 4) == 0) {
      *uid = parse_int(line + 4);
    } else if (strncmp(line, "NSpid:", 6) == 0) {
      /* `NSpid:\t<host>\t<...>\t<own>`: the last number. */
      char *last = line + 6;
      for (char *q = line + 6; *q; q++)
        if ((*q == '\t' || *q == ' ') && q[1] != 0 && q[1] != '\t' && q[1] != ' ') last = q + 1;
      *nspid = parse_int(last);
      break; /* NSpid comes after PPid and Uid */
    }
    line = nl ? nl + 1 : NULL;
  }
  return 0;
}

static int info(int pidfd, int *ppid, int *uid);

/* The cached entry of a live `pid`, built when missing or stale. With `with_info`, a hit also fills
 * ppid/uid from PIDFD_GET_INFO, which doubles as the liveness check (it fails once the process is reaped,
 * and a pid is only reused after that); *fresh tells the caller they are filled. On a fresh build, the
 * status fields read on the way are returned the same way. NULL when nothing can be cached. */
static struct slot *entry(int pid, int with_info, int *fresh, int *ppid, int *uid) {
  struct slot *s = &slots[(unsigned)pid % SLOTS];
  *fresh = 0;
  if (s->pid == pid && s->pidfd >= 0) {
    if (with_info && use_info && info(s->pidfd, ppid, uid) == 0) {
      stats.hits++;
      *fresh = 1;
      return s;
    }
    if ((!with_info || !use_info) && alive(s->pidfd)) {
      stats.hits++;
      return s;
    }
  }
  clear(s); /* empty, another pid, or a process that exited (its pid may now be another's) */
  stats.misses++;
  int fd = use_pidfd ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
  if (fd < 0 && errno == ENOSYS) use_pidfd = 0;
  int dirfd = -1;
  if (fd >= 0) {
    char path[32];
    snprintf(path, sizeof path, "/proc/%d", pid);
    dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  }
  int nspid = pid;
  if (read_status(dirfd, pid, ppid, uid, &nspid) != 0) {
    if (fd >= 0) close(fd);
    if (dirfd >= 0) close(dirfd);
    return NULL;
  }
  *fresh = 1;
  /* The pidfd was opened before the directory and the read: if it still runs, all three described the
   * same process (a pid is taken by another process only after its holder is gone). */
  if (fd < 0 || dirfd < 0 || !alive(fd)) {
    if (fd >= 0) close(fd);
    if (dirfd >= 0) close(dirfd);
    s->nspid = nspid; /* not cached (pid 0), but the caller reads nspid from here */
    return s;
  }
  *s = (struct slot){.pid = pid, .pidfd = fd, .dirfd = dirfd, .sysfd = -1, .links = {-1, -1, -1},
                     .nspid = nspid, .parent = 0, .parent_nspid = 0};
  return s;
}

/* ppid and real uid of a cached process from its pidfd; -1 when the kernel has no PIDFD_GET_INFO. */
static int info(int pidfd, int *ppid, int *uid) {
  if (!use_info) return -1;
  struct rt_pidfd_info pi = {.mask = RT_PIDFD_INFO_PID | RT_PIDFD_INFO_CREDS};
  if (ioctl(pidfd, RT_PIDFD_GET_INFO, &pi) != 0) {
    if (errno == EINVAL || errno == ENOTTY || errno == EOPNOTSUPP) {
      use_info = 0;
      stats.pidfd_info = 0;
    }
    return -1;
  }
  if ((pi.mask & (RT_PIDFD_INFO_PID | RT_PIDFD_INFO_CREDS)) != (RT_PIDFD_INFO_PID | RT_PIDFD_INFO_CREDS)) return -1;
  stats.pidfd_info = 1;
  *ppid = (int)pi.ppid;
  *uid = (int)pi.ruid;
  return 0;
}

void ident_get(int pid, int want_parent, struct proc_identity *out) {
  *out = (struct proc_identity){.pid = pid, .ppid = 0, .nspid = pid, .parent_nspid = 0, .uid = -1};
  int fresh = 0, ppid = 0, uid = -1;
  struct slot *s = entry(pid, 1, &fresh, &ppid, &uid);
  if (s != NULL) {
    out->nspid = s->nspid;
    if (!fresh) {
      int ignored = pid;
      read_status(s->pid == pid ? s->dirfd : -1, pid, &ppid, &uid, &ignored);
    }
    out->ppid = ppid;
    out->uid = uid;
    if (s->pid == 0) s->nspid = 0;
  }
  out->parent_nspid = out->ppid;
  if (!want_parent || out->ppid <= 0) return;
  if (s != NULL && s->pid == pid && s->parent == out->ppid && s->parent_nspid > 0) {
    out->parent_nspid = s->parent_nspid;
    return;
  }
  int pfresh = 0, pp = 0, pu = -1;
  struct slot *ps = entry(out->ppid, 0, &pfresh, &pp, &pu);
  if (ps != NULL) {
    out->parent_nspid = ps->nspid;
    if (ps->pid == 0) ps->nspid = 0;
  }
  /* The parent's entry may have taken the same slot: look the process's entry up again. */
  struct slot *self = &slots[(unsigned)pid % SLOTS];
  if (self->pid == pid && out->parent_nspid > 0) {
    self->parent = out->ppid;
    self->parent_nspid = out->parent_nspid;
  }
}

/* The slot of `pid` when it holds a directory of that pid: reads through it are that entry's process's.
 * Whether that process still runs is told by the read itself (it fails once the process is gone). */
static struct slot *held(int pid) {
  if (pid <= 0) return NULL;
  struct slot *s = &slots[(unsigned)pid % SLOTS];
  return s->pid == pid && s->dirfd >= 0 ? s : NULL;
}

ssize_t ident_readlink(int pid, const char *name, char *buf, size_t len) {
  if (len < 2) return -1;
  struct slot *s = held(pid);
  ssize_t n = -1;
  if (s != NULL) {
    int k = -1;
    for (unsigned i = 0; keep_links && i < 3; i++)
      if (strcmp(name, LINKS[i]) == 0) k = (int)i;
    /* A link is kept from its second read on: a process seen once costs no more than before. */
    if (k >= 0 && s->links[k] == -1 && (s->seen >> k) & 1) {
      s->links[k] = openat(s->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
      if (s->links[k] < 0) s->links[k] = -2;
    }
    if (k >= 0) s->seen |= 1u << k;
    if (k >= 0 && s->links[k] >= 0) {
      n = readlinkat(s->links[k], "", buf, len - 1);
      if (n >= 0) stats.link_reads++;
    } else {
      n = readlinkat(s->dirfd, name, buf, len - 1);
      if (n >= 0) stats.dir_reads++;
    }
  }
  if (n < 0) {
    /* Not held, or the held process is gone and `pid` now another's (the event's process, which runs). */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    n = readlink(path, buf, len - 1);
  }
  if (n < 0) return -1;
  buf[n] = 0;
  return n;
}

ssize_t ident_read(int pid, const char *name, char *buf, size_t len) {
  if (len < 2) return -1;
  struct slot *s = held(pid);
  int fd = s != NULL ? openat(s->dirfd, name, O_RDONLY | O_CLOEXEC) : -1;
  ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
  if (fd >= 0) close(fd);
  if (n < 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    n = read(fd, buf, len - 1);
    close(fd);
  }
  if (n < 0) return -1;
  buf[n] = 0;
  return n;
}

ssize_t ident_read_syscall(int pid, char *buf, size_t len) {
  if (len < 2) return -1;
  struct slot *s = held(pid);
  ssize_t n = -1;
  if (s != NULL) {
    if (s->sysfd < 0) s->sysfd = openat(s->dirfd, "syscall", O_RDONLY | O_CLOEXEC);
    if (s->sysfd >= 0) n = pread(s->sysfd, buf, len - 1, 0);
  }
  if (n < 0) return ident_read(pid, "syscall", buf, len);
  buf[n] = 0;
  return n;
}
