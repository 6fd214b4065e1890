/* rtctl-fanotify: the fanotify data plane's native helper (docs/enforcer.md "fanotify data plane").
 *
 * A daemon that outlives the TypeScript enforcer. It marks the mounts of each workload (the container's
 * mount namespace, reached through /proc/<pid>/root; the host's real file systems for the host workload)
 * for FAN_OPEN_EXEC_PERM and FAN_OPEN_PERM, decides every permission event from the rule table
 * (docs/rule-table.md) with a decision cache, denies with FAN_DENY (the caller sees EPERM), and reports
 * each Block, Audit and posture decision as one JSON line.
 *
 * Unix socket protocol (text lines; replies are one JSON object per line):
 *   STATE <n>\n<n bytes>   replace the whole state; payload = state lines then `table <len>\n` + table bytes
 *   STATUS                 {"t":"status",...counters (ignoreMarks: inode ignore marks set; dirIgnoreMarks:
 *                          directory ignore marks set, dirIgnoreMovable: refused as the directory could
 *                          move), generation, readers, workloads}
 *   EVENTS                 this connection becomes the event stream (one JSON object per line, each with a
 *                          "seq"); it starts at the first event not yet acknowledged
 *   ACK <seq>              every event up to <seq> was handled: the helper may forget them
 *   STOP                   exit: all marks go away with the fanotify group
 * State lines: `generation <n>`, `workload <key> <host 0|1> <pid> <postures: 4 chars a|b> <policies: i,j,..|->`.
 *
 * Reader threads, one pinned per CPU (RTCTL_FANOTIFY_READERS; 0 or 1: the main loop reads), take the events;
 * the main thread keeps the socket. One lock, state_mu, guards everything else (see its definition).
 *
 * The helper never opens a file on a marked mount from its event loop (it would wait on itself): the table
 * arrives over the socket, and everything it reads per event is in /proc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "proc-identity.h"
#include "rule-table.h"

#define MAX_WORKLOADS 256
#define MAX_MOUNTS 64
#define MAX_CLIENTS 16
#define DEFAULT_RING_SIZE (16u << 20)
#define CACHE_SIZE 65536u
#define PENDING_EXEC 4096u
#define KEY_MAX 128
#define FAN_READ_BYTES (64 * 1024) /* one read of the fanotify queue */

struct mount_mark {
  int mnt_id;
  dev_t dev; /* the file system's device: another marked mount of it may reach the same inodes */
  char path[PATH_MAX + 32];
};

struct workload {
  char key[KEY_MAX];
  int host;
  int pid;
  char posture[4]; /* 'a' audit, 'b' block, per class code */
  uint64_t *set;
  int allow_mask;
  int scoped_mask; /* rt_scoped_allow_mask() */
  int non_allow_mask; /* rt_non_allow_mask() */
  uint32_t mask; /* fanotify events marked */
  int nmounts;
  struct mount_mark mounts[MAX_MOUNTS];
};

struct state {
  uint64_t generation;
  uint8_t *bytes;
  struct rule_table table;
  int nw;
  struct workload *w;
};

struct cache_entry {
  uint64_t h1, h2;
  uint64_t generation;
  int32_t rule;
  uint8_t action, posture, report, used;
};

struct client {
  int fd;
  int events; /* 1: event stream connection */
  char *in;
  size_t in_len, in_cap;
  char *out;
  size_t out_len;
};

static int fan_fd = -1, listen_fd = -1;
static struct state *cur;
static struct cache_entry *cache;
/* The exec whose own open (FAN_OPEN_PERM, right after FAN_OPEN_EXEC_PERM) is still to come, per pid slot:
 * that open is part of the exec, decided already, when it is of the same file by the same name. */
static struct { int pid; dev_t dev; ino_t ino; uint64_t path_hash; } pending_exec[PENDING_EXEC];
static struct client clients[MAX_CLIENTS];
/* Event ring: [ring_acked, ring_head) is kept until the control plane acknowledges it (ACK <seq>), so events
 * a dying TypeScript process received but never handled are sent again to its successor. ring_tail is the
 * next byte to send. ev_end[s % EV_SLOTS] is the ring position just after event s. */
#define EV_SLOTS 65536u
static char *ring;
static size_t RING_SIZE = DEFAULT_RING_SIZE;
static uint64_t ring_head, ring_tail, ring_acked;
static uint64_t ev_seq, ev_acked_seq;
static uint64_t *ev_end;
static uint64_t n_decisions, n_cache_hits, n_reported, n_dropped, n_denied, last_dropped_sent;
/* Inode ignore marks (docs/enforcer.md "Ignore marks"): set, flushed with every state, failed to set. */
static uint64_t n_ignore_marks, n_ignore_flushes, n_ignore_failed;
/* Marks not set because the file could be renamed or linked to a name decided differently (maybe_ignore). */
static uint64_t n_ignore_renamable;
static int ignore_flags; /* fanotify_mark flags for an ignore mark; 0 when the kernel has none usable */
static pid_t self_pid;
static volatile sig_atomic_t stop_requested;
/* Reader threads (docs/enforcer.md "Reader threads"): 0 when the main thread's poll loop reads the fanotify
 * queue itself. Every decision, every change of the state, the caches, the ring and the counters happens
 * under state_mu; the main thread holds it except while it waits in poll(2), a reader only while it handles
 * one chunk of events (up to ANSWER_CHUNK, see "answers by chunk"). */
#define MAX_READERS 64
static int n_readers;
static int reader_cpus[MAX_READERS];
static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;
/* The main thread's plan for its next poll (set under state_mu before it waits): a reader that appends to the
 * ring or counts a drop wakes it through wake_fd only when that changes the plan, at most once per wait. */
static int wake_fd = -1;
static int wake_sent;
static int plan_stream;     /* an event-stream client is connected */
static int plan_idle;       /* nothing unsent: the first unsent event starts the batch delay */
static int plan_batch_wait; /* waiting out the batch delay: a full batch is sent at once */
static uint64_t plan_dropped;
static const char *socket_path;

static void logf_(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rtctl-fanotify: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* ---------- JSON output ---------- */

struct sbuf {
  char *p;
  size_t len, cap;
};

static void sb_grow(struct sbuf *b, size_t need) {
  if (b->len + need + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->len + need + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (p == NULL) abort();
  b->p = p;
  b->cap = cap;
}

static void sb_add(struct sbuf *b, const char *s, size_t n) {
  sb_grow(b, n);
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[512];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n > 0) sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void sb_json_str(struct sbuf *b, const char *s) {
  sb_add(b, "\"", 1);
  /* Runs of bytes that need no escape are copied at once. */
  const unsigned char *run = (const unsigned char *)s, *p = run;
  for (; *p; p++) {
    if (*p != '"' && *p != '\\' && *p >= 0x20 && *p != 0x7f) continue;
    if (p > run) sb_add(b, (const char *)run, (size_t)(p - run));
    if (*p == '"' || *p == '\\') {
      char e[2] = {'\\', (char)*p};
      sb_add(b, e, 2);
    } else {
      sb_printf(b, "\\u%04x", *p);
    }
    run = p + 1;
  }
  if (p > run) sb_add(b, (const char *)run, (size_t)(p - run));
  sb_add(b, "\"", 1);
}

/* ---------- event ring (survives client reconnects) ---------- */

static int ring_push(const char *line, size_t n) {
  if (ring_head - ring_acked + n > RING_SIZE || ev_seq - ev_acked_seq >= EV_SLOTS - 1) {
    n_dropped++;
    return -1;
  }
  size_t off = ring_head % RING_SIZE, first = n < RING_SIZE - off ? n : RING_SIZE - off;
  memcpy(ring + off, line, first);
  memcpy(ring, line + first, n - first);
  ring_head += n;
  return 0;
}

static void ring_ack(uint64_t seq) {
  if (seq <= ev_acked_seq || seq > ev_seq) return;
  ev_acked_seq = seq;
  ring_acked = ev_end[seq % EV_SLOTS];
}

/* ---------- /proc helpers ---------- */

/* An unlinked file reads as "/x (deleted)"; keep the path. */
static void strip_deleted(char *out, ssize_t n) {
  if (n < 0) n = 0;
  out[n] = 0;
  size_t l = (size_t)n;
  const char *suffix = " (deleted)";
  if (l > strlen(suffix) && strcmp(out + l - strlen(suffix), suffix) == 0) out[l - strlen(suffix)] = 0;
}

/* /proc/self/fd, kept open: the path of an event's file is one readlinkat away. */
static int self_fd_dir = -1;

/* The links /proc/self/fd/<n> themselves (O_PATH | O_NOFOLLOW) for the descriptor numbers events get again
 * and again (the kernel gives each event the lowest free number, and each is closed once answered): a read
 * of one, readlinkat(link, ""), resolves descriptor <n> as it is at that read, whatever file it holds now,
 * without the lookup of its name in /proc/self/fd. Direct-mapped by number; a number's link is opened the
 * second time in a row it lands in its slot. Guarded by state_mu (events are handled under it). */
#define FD_LINKS 64u
static struct { int fd, link, candidate; } fd_links[FD_LINKS];
static int keep_fd_links;

static void fd_links_init(void) {
  for (unsigned i = 0; i < FD_LINKS; i++) fd_links[i].fd = fd_links[i].link = fd_links[i].candidate = -1;
  const char *off = getenv("RTCTL_FANOTIFY_NO_LINK_FDS"); /* for measuring against */
  keep_fd_links = self_fd_dir >= 0 && !(off && *off);
}

/* The kept link of descriptor `fd`, -1 when none. */
static int fd_link_of(int fd, const char *name) {
  if (!keep_fd_links || fd < 0) return -1;
  unsigned i = (unsigned)fd % FD_LINKS;
  if (fd_links[i].fd == fd) return fd_links[i].link;
  if (fd_links[i].candidate != fd) {
    fd_links[i].candidate = fd;
    return -1;
  }
  int link = openat(self_fd_dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (link < 0) return -1;
  if (fd_links[i].link >= 0) close(fd_links[i].link);
  fd_links[i].fd = fd;
  fd_links[i].link = link;
  fd_links[i].candidate = -1;
  return link;
}

/* The path of one of this process's descriptors (an event's file, as the workload sees it). */
static void fd_path(int fd, char *out, size_t len) {
  char name[16];
  snprintf(name, sizeof name, "%d", fd);
  int link = fd_link_of(fd, name);
  ssize_t n = link >= 0 ? readlinkat(link, "", out, len - 1) : -1;
  if (n < 0 && self_fd_dir >= 0) n = readlinkat(self_fd_dir, name, out, len - 1);
  if (n < 0) {
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    n = readlink(p, out, len - 1);
  }
  strip_deleted(out, n);
}

/* A link of a process's /proc directory (exe, cwd), through the identity cache (proc-identity.h). */
static void proc_link(int pid, const char *name, char *out, size_t len) {
  strip_deleted(out, ident_readlink(pid, name, out, len));
}

/* A process outside the container's file system (the container runtime: runc's init stage performs the exec of
 * the container's first process and of every `kubectl exec` command; `runc exec` and the shim parent them) is
 * named "/" + the base name of its executable ("/usr/sbin/runc" -> "/runc"), or of its command name up to the
 * first ':' when the executable has no path ("runc:[2:INIT]" -> "/runc"); never by a host path
 * (docs/alerts.md "Processes outside the container"). */
static void base_name_of(char *path, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path || len < 2) return;
  memmove(path + 1, slash + 1, strlen(slash + 1) + 1);
}

static void proc_comm_name(int pid, char *out, size_t len) {
  char comm[64];
  ssize_t n = ident_read(pid, "comm", comm, sizeof comm);
  if (n <= 0 || len < 2) {
    if (len) out[0] = 0;
    return;
  }
  comm[strcspn(comm, ":\n")] = 0;
  snprintf(out, len, "/%s", comm);
}

static void proc_exe(int pid, char *out, size_t len) {
  proc_link(pid, "exe", out, len);
  /* An executable reached through no path of this view (runc runs a detached read-only bind of itself): "/". */
  if (strcmp(out, "/") == 0) proc_comm_name(pid, out, len);
}

/* The parent's links read for the events of one read of the queue (per thread). Every task whose event one
 * read returned has waited since before that read, and waits until its chunk is answered: what its parent's
 * links said at any moment in between is what they said while it waited, the moment a report describes. So
 * the events of one read with the same parent (the children of one shell in a flood) read its exe and its
 * mount namespace once. The parent itself does not wait (it never did): each event's ppid is read afresh,
 * and the next read starts anew. */
struct parent_reads {
  uint64_t batch; /* read_batch when taken; 0: none */
  int ppid;
  int ns_state; /* 1 read, -1 could not be read (the parent is leaving its namespaces), 0 not read yet */
  char ns[64];
  char exe[PATH_MAX];
};
static _Thread_local uint64_t read_batch; /* this thread's reads of the queue so far */
static _Thread_local struct parent_reads parent_reads;

/* Whether a process and its parent share a mount namespace: 1 or 0, -1 when a link cannot be read (a process
 * exiting has left its namespaces). The links read `mnt:[<inode>]`, formatted from the namespace itself:
 * comparing them compares the namespaces' inodes on nsfs, without the stat(2) that would make (and free) an
 * nsfs inode each time. */
static int same_mnt_ns_as_parent(int pid, struct parent_reads *pr) {
  char own[64];
  if (ident_readlink(pid, "ns/mnt", own, sizeof own) < 0) return -1;
  if (pr->ns_state == 0) pr->ns_state = ident_readlink(pr->ppid, "ns/mnt", pr->ns, sizeof pr->ns) < 0 ? -1 : 1;
  return pr->ns_state < 0 ? -1 : strcmp(own, pr->ns) == 0;
}

struct proc_status {
  int ppid, nspid, uid, fsuid;
};

static void proc_status(int pid, struct proc_status *st) {
  char buf[4096];
  st->ppid = 0;
  st->nspid = pid;
  st->uid = -1;
  st->fsuid = -1;
  if (ident_read(pid, "status", buf, sizeof buf) < 0) return;
  char *line = buf;
  while (line && *line) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    if (strncmp(line, "PPid:", 5) == 0) st->ppid = atoi(line + 5);
    if (strncmp(line, "Uid:", 4) == 0) {
      int r, e, s, f;
      if (sscanf(line + 4, "%d %d %d %d", &r, &e, &s, &f) == 4) {
        st->uid = r;
        st->fsuid = f;
      }
    }
    if (strncmp(line, "NSpid:", 6) == 0) {
      char *last = NULL, *tok = strtok(line + 6, " \t");
      while (tok) {
        last = tok;
        tok = strtok(NULL, " \t");
      }
      if (last) st->nspid = atoi(last);
    }
    line = nl ? nl + 1 : NULL;
  }
}

static int proc_tty(int pid) {
  char buf[1024];
  if (ident_read(pid, "stat", buf, sizeof buf) < 0) return 0;
  char *rp = strrchr(buf, ')');
  if (!rp) return 0;
  int tty = 0;
  char state;
  int ppid, pgrp, session;
  if (sscanf(rp + 2, "%c %d %d %d %d", &state, &ppid, &pgrp, &session, &tty) != 5) return 0;
  return tty != 0;
}

/* Open flags as O_RDONLY|O_CREAT|... */
static void flags_text(long flags, char *out, size_t len) {
  const char *acc = (flags & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : (flags & O_ACCMODE) == O_RDWR ? "O_RDWR" : "O_RDONLY";
  snprintf(out, len, "%s", acc);
  static const struct { long bit; const char *name; } names[] = {
      {O_CREAT, "O_CREAT"}, {O_EXCL, "O_EXCL"}, {O_NOCTTY, "O_NOCTTY"}, {O_TRUNC, "O_TRUNC"},
      {O_APPEND, "O_APPEND"}, {O_NONBLOCK, "O_NONBLOCK"}, {O_DIRECTORY, "O_DIRECTORY"},
      {O_NOFOLLOW, "O_NOFOLLOW"}, {O_CLOEXEC, "O_CLOEXEC"}, {O_PATH, "O_PATH"}, {O_LARGEFILE, "O_LARGEFILE"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (names[i].bit != 0 && (flags & names[i].bit) == names[i].bit) {
      size_t l = strlen(out);
      snprintf(out + l, len - l, "|%s", names[i].name);
    }
  }
}

#if defined(__x86_64__)
enum { NR_OPEN = 2, NR_CREAT = 85, NR_OPENAT = 257, NR_OPENAT2 = 437, NR_EXECVE = 59, NR_EXECVEAT = 322 };
#elif defined(__aarch64__)
enum { NR_OPEN = -2, NR_CREAT = -3, NR_OPENAT = 56, NR_OPENAT2 = 437, NR_EXECVE = 221, NR_EXECVEAT = 281 };
#else
enum { NR_OPEN = -2, NR_CREAT = -3, NR_OPENAT = -4, NR_OPENAT2 = -5, NR_EXECVE = -6, NR_EXECVEAT = -7 };
#endif

static int hexval(char c);

/* /proc/<pid>/syscall: `<nr> 0x<arg0> ... 0x<arg5> 0x<sp> 0x<pc>`, `-1 0x<sp> 0x<pc>` or `running`. The
 * number and up to six arguments into *nr and a[]; returns how many were read (0: no number), as
 * sscanf("%ld %lx %lx %lx %lx %lx %lx") would, without its cost per event. */
static int parse_syscall_line(const char *p, long *nr, unsigned long a[6]) {
  while (*p == ' ') p++;
  int neg = *p == '-';
  if (neg) p++;
  if (*p < '0' || *p > '9') return 0;
  long v = 0;
  for (; *p >= '0' && *p <= '9'; p++) v = v * 10 + (*p - '0');
  *nr = neg ? -v : v;
  int n = 1;
  for (int i = 0; i < 6; i++) {
    while (*p == ' ') p++;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    unsigned long x = 0;
    int digits = 0;
    for (;; p++, digits++) {
      int d = hexval(*p >= 'A' && *p <= 'F' ? (char)(*p - 'A' + 'a') : *p);
      if (d < 0) break;
      x = x << 4 | (unsigned long)d;
    }
    if (digits == 0) break;
    a[i] = x;
    n++;
  }
  return n;
}

/* The system call the task is blocked in (it waits for our answer): name, arguments, and whether it writes. */
static void proc_syscall(int pid, int cls, char *name, size_t nlen, char *args, size_t alen, int *write) {
  char buf[512];
  unsigned long a[6] = {0};
  long nr = -1;
  *write = 0;
  args[0] = 0;
  snprintf(name, nlen, cls == RT_CLASS_PROCESS ? "SYS_EXECVE" : "SYS_OPENAT");
  /* Never for an exec: reading /proc/<pid>/syscall takes the task's exec/trace lock (cred_guard_mutex on
   * older kernels), which execve may hold while it opens a script or ELF interpreter, i.e. while that task
   * waits for our answer. The 6.18 kernel here does not deadlock, but older ones could; the name is known. */
  if (cls == RT_CLASS_PROCESS) return;
  if (ident_read_syscall(pid, buf, sizeof buf) < 0 || parse_syscall_line(buf, &nr, a) < 1) {
    *write = cls == RT_CLASS_FILE; /* unknown: assume the stricter case */
    return;
  }
  char ft[256];
  if (nr == NR_OPENAT) {
    flags_text((long)a[2], ft, sizeof ft);
    snprintf(name, nlen, "SYS_OPENAT");
    snprintf(args, alen, "fd=%d flags=%s", (int)a[0], ft);
    *write = (a[2] & O_ACCMODE) != O_RDONLY;
  } else if (nr == NR_OPEN) {
    flags_text((long)a[1], ft, sizeof ft);
    snprintf(name, nlen, "SYS_OPEN");
    snprintf(args, alen, "flags=%s", ft);
    *write = (a[1] & O_ACCMODE) != O_RDONLY;
  } else if (nr == NR_CREAT) {
    snprintf(name, nlen, "SYS_CREAT");
    snprintf(args, alen, "flags=O_WRONLY|O_CREAT|O_TRUNC");
    *write = 1;
  } else if (nr == NR_OPENAT2) {
    snprintf(name, nlen, "SYS_OPENAT2");
    snprintf(args, alen, "fd=%d", (int)a[0]);
    *write = cls == RT_CLASS_FILE;
  } else if (nr == NR_EXECVE) {
    snprintf(name, nlen, "SYS_EXECVE");
  } else if (nr == NR_EXECVEAT) {
    snprintf(name, nlen, "SYS_EXECVEAT");
    snprintf(args, alen, "fd=%d", (int)a[0]);
  } else {
    snprintf(name, nlen, "SYS_%ld", nr);
    *write = cls == RT_CLASS_FILE;
  }
}

/* ---------- decision cache ---------- */

static void hash2(uint64_t *h1, uint64_t *h2, const void *data, size_t n) {
  const uint8_t *p = data;
  for (size_t i = 0; i < n; i++) {
    *h1 = (*h1 ^ p[i]) * 0x100000001b3ULL;
    *h2 = (*h2 ^ p[i]) * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
  }
  uint8_t sep = 0xff;
  *h1 = (*h1 ^ sep) * 0x100000001b3ULL;
  *h2 = (*h2 ^ sep) * 0x9E3779B97F4A7C15ULL;
}

/* ---------- marking ---------- */

static const char *PSEUDO_FS[] = {"proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2", "devtmpfs", "securityfs",
                                  "debugfs", "tracefs", "bpf", "pstore", "configfs", "fusectl", "binfmt_misc",
                                  "autofs", "hugetlbfs", "nsfs", "efivarfs", "rpc_pipefs", NULL};
static const char *HOST_FS[] = {"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "vfat", "zfs", NULL};

static int in_list(const char **list, const char *s) {
  for (int i = 0; list[i]; i++)
    if (strcmp(list[i], s) == 0) return 1;
  return 0;
}

static void unescape_mount(char *s) {
  char *o = s;
  for (char *p = s; *p; p++) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
      *o++ = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
      p += 3;
    } else {
      *o++ = *p;
    }
  }
  *o = 0;
}

static int under(const char *mp, const char *dir) {
  size_t l = strlen(dir);
  return strncmp(mp, dir, l) == 0 && (mp[l] == 0 || mp[l] == '/');
}

/* Marks the workload's mounts with its mask; fills w->mounts. Returns the number marked, -1 on failure. */
static int mark_workload(struct workload *w) {
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/mountinfo", w->host ? 1 : w->pid);
  FILE *f = fopen(p, "re");
  if (!f) {
    logf_("workload %s: cannot read %s: %s", w->key, p, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t cap = 0;
  w->nmounts = 0;
  while (getline(&line, &cap, f) > 0 && w->nmounts < MAX_MOUNTS) {
    int id, parent;
    char mp[PATH_MAX], root[PATH_MAX];
    if (sscanf(line, "%d %d %*s %4095s %4095s", &id, &parent, root, mp) != 4) continue;
    char *dash = strstr(line, " - ");
    if (!dash) continue;
    char fstype[64];
    if (sscanf(dash + 3, "%63s", fstype) != 1) continue;
    unescape_mount(mp);
    if (in_list(PSEUDO_FS, fstype)) continue;
    if (under(mp, "/proc") || under(mp, "/sys") || under(mp, "/dev")) continue;
    if (w->host && !in_list(HOST_FS, fstype)) continue;
    struct mount_mark *m = &w->mounts[w->nmounts];
    if (w->host)
      snprintf(m->path, sizeof m->path, "%s", mp);
    else
      snprintf(m->path, sizeof m->path, "/proc/%d/root%s", w->pid, mp);
    struct statx sx;
    if (statx(AT_FDCWD, m->path, AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) != 0 || !(sx.stx_mask & STATX_MNT_ID)) continue;
    if (fanotify_mark(fan_fd, FAN_MARK_ADD | FAN_MARK_MOUNT, w->mask, AT_FDCWD, m->path) != 0) {
      logf_("workload %s: mark %s: %s", w->key, m->path, strerror(errno));
      continue;
    }
    m->mnt_id = (int)sx.stx_mnt_id;
    m->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
    w->nmounts++;
  }
  free(line);
  fclose(f);
  return w->nmounts;
}

static void unmark_workload(const struct workload *w, uint32_t bits) {
  for (int i = 0; i < w->nmounts; i++) {
    /* The mount may be gone with its container: then its marks are gone too. */
    struct statx sx;
    if (statx(AT_FDCWD, w->mounts[i].path, AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) != 0) continue;
    if ((int)sx.stx_mnt_id != w->mounts[i].mnt_id) continue;
    fanotify_mark(fan_fd, FAN_MARK_REMOVE | FAN_MARK_MOUNT, bits, AT_FDCWD, w->mounts[i].path);
  }
}

static struct workload *find_workload_by_mount(struct state *s, int mnt_id) {
  if (!s) return NULL;
  for (int i = 0; i < s->nw; i++)
    for (int k = 0; k < s->w[i].nmounts; k++)
      if (s->w[i].mounts[k].mnt_id == mnt_id) return &s->w[i];
  return NULL;
}

static void free_state(struct state *s) {
  if (!s) return;
  for (int i = 0; i < s->nw; i++) free(s->w[i].set);
  free(s->w);
  free(s->bytes);
  free(s);
}

/* Events a workload needs: exec always (Process rules or posture); opens when File rules or File posture apply. */
static uint32_t workload_mask(const struct rule_table *t, const struct workload *w) {
  uint32_t mask = FAN_OPEN_EXEC_PERM;
  if ((w->allow_mask >> RT_CLASS_FILE) & 1) return mask | FAN_OPEN_PERM;
  for (uint32_t r = 0; r < t->rule_count; r++) {
    const uint8_t *rule = rt_rule(t, r);
    uint32_t pol = rt_rule_u32(t, r, RT_OFFSETOF(rt_table_rule, policy));
    if (rule[RT_OFFSETOF(rt_table_rule, cls)] == RT_CLASS_FILE && ((w->set[pol >> 6] >> (pol & 63)) & 1)) return mask | FAN_OPEN_PERM;
    /* An Allow rule scoped by fromSource may put File in least-permissive mode for some sources. */
  }
  return mask;
}

static void dir_marks_forget(void);

/* Parses and applies a STATE payload. Returns NULL on success or an error message. */
static const char *apply_state(const char *payload, size_t len, char *err, size_t errlen) {
  struct state *s = calloc(1, sizeof *s);
  if (!s) return "out of memory";
  s->w = calloc(MAX_WORKLOADS, sizeof *s->w);
  if (!s->w) {
    free(s);
    return "out of memory";
  }
  size_t pos = 0;
  int have_table = 0;
  /* Workload lines reference policies; parse them after the table is known: keep their text. */
  char **wlines = calloc(MAX_WORKLOADS, sizeof(char *));
  int nwl = 0;
  while (pos < len) {
    const char *nl = memchr(payload + pos, '\n', len - pos);
    if (!nl) break;
    size_t ll = (size_t)(nl - (payload + pos));
    char line[8192];
    if (ll >= sizeof line) {
      snprintf(err, errlen, "state line too long");
      goto fail;
    }
    memcpy(line, payload + pos, ll);
    line[ll] = 0;
    pos += ll + 1;
    if (strncmp(line, "generation ", 11) == 0) {
      s->generation = strtoull(line + 11, NULL, 10);
    } else if (strncmp(line, "workload ", 9) == 0) {
      if (nwl >= MAX_WORKLOADS) {
        snprintf(err, errlen, "too many workloads (max %d)", MAX_WORKLOADS);
        goto fail;
      }
      wlines[nwl++] = strdup(line + 9);
    } else if (strncmp(line, "table ", 6) == 0) {
      size_t tl = strtoul(line + 6, NULL, 10);
      if (tl > len - pos || tl > UINT32_MAX) {
        snprintf(err, errlen, "table length %zu exceeds the payload", tl);
        goto fail;
      }
      s->bytes = malloc(tl ? tl : 1);
      memcpy(s->bytes, payload + pos, tl);
      pos += tl;
      if (rt_open(&s->table, s->bytes, (uint32_t)tl, err, errlen) != 0) goto fail;
      have_table = 1;
    } else if (ll > 0) {
      snprintf(err, errlen, "unknown state line: %.60s", line);
      goto fail;
    }
  }
  if (!have_table) {
    snprintf(err, errlen, "state has no table");
    goto fail;
  }
  size_t words = (s->table.policy_count + 63) / 64 + 1;
  for (int i = 0; i < nwl; i++) {
    struct workload *w = &s->w[s->nw];
    char posture[8], policies[6000];
    if (sscanf(wlines[i], "%127s %d %d %7s %5999s", w->key, &w->host, &w->pid, posture, policies) != 5 ||
        strlen(posture) != 4) {
      snprintf(err, errlen, "bad workload line: %.80s", wlines[i]);
      goto fail;
    }
    memcpy(w->posture, posture, 4);
    w->set = calloc(words, sizeof(uint64_t));
    if (strcmp(policies, "-") != 0) {
      for (char *tok = strtok(policies, ","); tok; tok = strtok(NULL, ",")) {
        unsigned long p = strtoul(tok, NULL, 10);
        if (p >= s->table.policy_count) {
          snprintf(err, errlen, "workload %s: policy index %lu out of range", w->key, p);
          s->nw++;
          goto fail;
        }
        w->set[p >> 6] |= 1ULL << (p & 63);
      }
    }
    w->allow_mask = rt_allow_mask(&s->table, w->set);
    w->scoped_mask = rt_scoped_allow_mask(&s->table, w->set);
    w->non_allow_mask = rt_non_allow_mask(&s->table, w->set);
    w->mask = workload_mask(&s->table, w);
    s->nw++;
  }
  /* Mark: reuse marks of workloads that stay (same key and pid), mark new ones, then swap, then unmark. */
  for (int i = 0; i < s->nw; i++) {
    struct workload *w = &s->w[i], *old = NULL;
    for (int k = 0; cur && k < cur->nw; k++)
      if (strcmp(cur->w[k].key, w->key) == 0 && cur->w[k].pid == w->pid && cur->w[k].host == w->host) old = &cur->w[k];
    if (old) {
      uint32_t newmask = w->mask;
      w->nmounts = old->nmounts;
      memcpy(w->mounts, old->mounts, sizeof w->mounts);
      if (newmask & ~old->mask) {
        for (int k = 0; k < w->nmounts; k++)
          fanotify_mark(fan_fd, FAN_MARK_ADD | FAN_MARK_MOUNT, newmask, AT_FDCWD, w->mounts[k].path);
      }
      old->mask &= ~newmask; /* bits to remove below */
      old->nmounts = (old->mask != 0) ? old->nmounts : 0;
    } else if (mark_workload(w) < 0) {
      logf_("workload %s: not marked", w->key);
    }
  }
  struct state *prev = cur;
  cur = s;
  /* Every ignore mark was set under the previous state: drop them all before the next event is decided
   * (every decision is taken under state_mu, which this thread holds, so none falls between the swap and
   * the flush; an event read before the swap is decided after it, under the new state).
   * FAN_MARK_FLUSH without FAN_MARK_MOUNT removes the group's inode marks only; the mount marks stay. */
  if (fanotify_mark(fan_fd, FAN_MARK_FLUSH, 0, AT_FDCWD, NULL) == 0) n_ignore_flushes++;
  else logf_("flush inode marks: %s", strerror(errno));
  /* An exec whose following open was ignored left its entry here; under the new state that open is asked. */
  memset(pending_exec, 0, sizeof pending_exec);
  /* Directories examined under the previous state: their answers and the overlay facts are read again. */
  dir_marks_forget();
  for (int k = 0; prev && k < prev->nw; k++) {
    if (prev->w[k].nmounts > 0 && prev->w[k].mask) unmark_workload(&prev->w[k], prev->w[k].mask);
  }
  free_state(prev);
  for (int i = 0; i < nwl; i++) free(wlines[i]);
  free(wlines);
  return NULL;
fail:
  for (int i = 0; i < nwl; i++) free(wlines[i]);
  free(wlines);
  free_state(s);
  return err;
}

/* ---------- permission events ---------- */

static void respond(int fd, uint32_t verdict) {
  struct fanotify_response r = {.fd = fd, .response = verdict};
  if (write(fan_fd, &r, sizeof r) != (ssize_t)sizeof r) logf_("response: %s", strerror(errno));
}

/* What a report says about the process, read from /proc while it is still blocked in the event: after the
 * answer it runs on and may exec, chdir, change its uid or exit, and its pid may become another's. */
struct facts {
  struct proc_identity id;
  struct timespec now;
  int write_;
  char exe[PATH_MAX], pexe[PATH_MAX], cwd[PATH_MAX], sysname[32], args[512];
};

static void collect_facts(const struct workload *w, int cls, int pid, const char *actor_in, struct facts *f) {
  clock_gettime(CLOCK_REALTIME, &f->now);
  /* Identity from the cache (proc-identity.h): a pidfd query per event, /proc/<pid>/status only for a
   * process not seen before. The parent's NSpid only for a container: a host event has its ppid. */
  ident_get(pid, !w->host, &f->id);
  if (actor_in && actor_in[0])
    snprintf(f->exe, sizeof f->exe, "%s", actor_in);
  else
    proc_exe(pid, f->exe, sizeof f->exe);
  f->pexe[0] = 0;
  if (f->id.ppid > 0) {
    struct parent_reads *pr = &parent_reads;
    if (pr->batch == read_batch && pr->ppid == f->id.ppid) {
      memcpy(f->pexe, pr->exe, strlen(pr->exe) + 1);
    } else {
      proc_exe(f->id.ppid, f->pexe, sizeof f->pexe);
      pr->batch = read_batch;
      pr->ppid = f->id.ppid;
      pr->ns_state = 0;
      memcpy(pr->exe, f->pexe, strlen(f->pexe) + 1);
    }
    /* A container process's parent on the host side (runc exec, the shim): its name, not its host path. A
     * parent that is exiting (runc exec right after the exec it started) has no exe or namespace links left,
     * only its command name: outside the container's pid namespace (its nspid is its host pid), it is named
     * by that. */
    if (!w->host) {
      /* (A host event names its parent by its exe whatever its namespaces: two link reads saved.) */
      int same = same_mnt_ns_as_parent(pid, pr);
      /* A parent that left its namespaces between the two reads is exiting (runc exec right after the exec
       * it started, on another CPU): it let go of its memory, and so of its exe link, before its namespaces,
       * so the exe read just before may be a host path no longer there to check. Read it again: now empty. */
      if (same < 0) proc_exe(f->id.ppid, f->pexe, sizeof f->pexe);
      int outside = same == 0 || (f->pexe[0] == 0 && f->id.parent_nspid == f->id.ppid);
      if (outside) {
        if (f->pexe[0] == '/') base_name_of(f->pexe, sizeof f->pexe);
        else proc_comm_name(f->id.ppid, f->pexe, sizeof f->pexe);
      }
    }
  }
  proc_link(pid, "cwd", f->cwd, sizeof f->cwd);
  proc_syscall(pid, cls, f->sysname, sizeof f->sysname, f->args, sizeof f->args, &f->write_);
}

/* Appends a decimal number. */
static void sb_i64(struct sbuf *b, int64_t v) {
  char tmp[24], *e = tmp + sizeof tmp, *q = e;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    *--q = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) *--q = '-';
  sb_add(b, q, (size_t)(e - q));
}

/* Appends a string constant. */
#define SB_LIT(b, s) sb_add((b), (s), sizeof(s) - 1)

/* Formats the event line from the facts and puts it in the ring (after the answer: nothing here reads the
 * process). */
static void emit_report(const struct workload *w, int cls, const struct decision *d, int pid, const char *path,
                        const struct facts *f) {
  const struct rule_table *t = &cur->table;
  static struct sbuf b; /* reused: one event line at a time */
  b.len = 0;
  SB_LIT(&b, "{\"t\":\"event\",\"seq\":");
  sb_i64(&b, (int64_t)(ev_seq + 1));
  SB_LIT(&b, ",\"workload\":");
  sb_json_str(&b, w->key);
  SB_LIT(&b, ",\"generation\":");
  sb_i64(&b, (int64_t)cur->generation);
  char ns[16];
  snprintf(ns, sizeof ns, "%09ld", f->now.tv_nsec);
  SB_LIT(&b, ",\"timeNs\":\"");
  sb_i64(&b, (int64_t)f->now.tv_sec);
  sb_add(&b, ns, strlen(ns));
  SB_LIT(&b, "\",\"class\":");
  sb_i64(&b, cls);
  SB_LIT(&b, ",\"action\":");
  sb_i64(&b, d->action);
  SB_LIT(&b, ",\"posture\":");
  sb_i64(&b, d->posture);
  SB_LIT(&b, ",\"errno\":");
  sb_i64(&b, d->action == RT_ACTION_BLOCK ? EPERM : 0);
  SB_LIT(&b, ",\"rule\":");
  sb_i64(&b, d->rule);
  if (d->rule >= 0) {
    uint32_t r = (uint32_t)d->rule;
    SB_LIT(&b, ",\"policy\":");
    sb_json_str(&b, rt_policy_name(t, rt_rule_u32(t, r, RT_OFFSETOF(rt_table_rule, policy))));
    SB_LIT(&b, ",\"severity\":");
    sb_i64(&b, rt_rule_u32(t, r, RT_OFFSETOF(rt_table_rule, severity)));
    SB_LIT(&b, ",\"message\":");
    sb_json_str(&b, rt_str(t, rt_rule_u32(t, r, RT_OFFSETOF(rt_table_rule, message))));
    SB_LIT(&b, ",\"tags\":[");
    uint32_t ts = rt_rule_u32(t, r, RT_OFFSETOF(rt_table_rule, tags_start)), tc = rt_rule_u32(t, r, RT_OFFSETOF(rt_table_rule, tags_count));
    for (uint32_t i = 0; i < tc; i++) {
      if (i) SB_LIT(&b, ",");
      sb_json_str(&b, rt_str(t, rt_ref(t, ts + i)));
    }
    SB_LIT(&b, "]");
  } else {
    SB_LIT(&b, ",\"policy\":\"DefaultPosture\",\"severity\":0,\"message\":\"\",\"tags\":[]");
  }
  const struct proc_identity *id = &f->id;
  SB_LIT(&b, ",\"pid\":");
  sb_i64(&b, pid);
  SB_LIT(&b, ",\"ppid\":");
  sb_i64(&b, id->ppid);
  SB_LIT(&b, ",\"nspid\":");
  sb_i64(&b, id->nspid);
  SB_LIT(&b, ",\"nsppid\":");
  sb_i64(&b, w->host ? id->ppid : (id->parent_nspid == id->ppid ? 0 : id->parent_nspid));
  SB_LIT(&b, ",\"uid\":");
  sb_i64(&b, id->uid);
  SB_LIT(&b, ",\"exe\":");
  sb_json_str(&b, f->exe);
  SB_LIT(&b, ",\"pexe\":");
  sb_json_str(&b, f->pexe);
  SB_LIT(&b, ",\"path\":");
  sb_json_str(&b, path);
  SB_LIT(&b, ",\"syscall\":");
  sb_json_str(&b, f->sysname);
  SB_LIT(&b, ",\"args\":");
  sb_json_str(&b, f->args);
  SB_LIT(&b, ",\"cwd\":");
  sb_json_str(&b, f->cwd);
  SB_LIT(&b, "}\n");
  if (ring_push(b.p, b.len) == 0) {
    n_reported++;
    ev_seq++;
    ev_end[ev_seq % EV_SLOTS] = ring_head;
  }
}

/* ---------- answers by chunk ----------
 *
 * The kernel wakes every task waiting on the group's permission events at each answer (they wait on one
 * queue), and the one that was answered may take this thread's CPU at once. Answering each event of a read
 * as soon as it is decided, with the next event's /proc reads in between, makes each waiting task wake,
 * find it is not its answer, and sleep again, once per answer. So the events of a read are taken by chunks
 * (up to ANSWER_CHUNK): each is decided and its facts read while its task waits, then the chunk's answers
 * are written back to back (a task already woken by the first is not woken again), then the descriptors
 * closed, then the reports formatted in order. state_mu is held across a chunk: the reports are formatted
 * under the state they were decided with. RTCTL_FANOTIFY_ANSWER_CHUNK=1 answers each event at once (for
 * measuring against). */
#define ANSWER_CHUNK 16

struct answer {
  int fd;
  uint32_t verdict;
  int report; /* 1: the fields below describe a report */
  const struct workload *w;
  int cls, pid;
  struct decision d;
  char path[PATH_MAX];
  struct facts facts;
};

struct chunk {
  int n;
  struct answer a[ANSWER_CHUNK];
};

static int answer_chunk = ANSWER_CHUNK;
static _Thread_local struct chunk *chunk; /* this thread's, allocated at its first event */

/* Writes the chunk's answers, closes its descriptors, then formats its reports. Under state_mu. */
static void chunk_flush(void) {
  if (chunk == NULL || chunk->n == 0) return;
  for (int i = 0; i < chunk->n; i++) respond(chunk->a[i].fd, chunk->a[i].verdict);
  for (int i = 0; i < chunk->n; i++) close(chunk->a[i].fd);
  for (int i = 0; i < chunk->n; i++) {
    const struct answer *a = &chunk->a[i];
    if (a->report) emit_report(a->w, a->cls, &a->d, a->pid, a->path, &a->facts);
  }
  chunk->n = 0;
}

/* The next answer of the chunk (the caller fills it); NULL when no chunk could be allocated. */
static struct answer *chunk_add(int fd, uint32_t verdict) {
  if (chunk == NULL) {
    chunk = malloc(sizeof *chunk);
    if (chunk == NULL) return NULL;
    chunk->n = 0;
  }
  struct answer *a = &chunk->a[chunk->n++];
  a->fd = fd;
  a->verdict = verdict;
  a->report = 0;
  return a;
}

static int chunk_full(void) {
  return chunk != NULL && chunk->n >= answer_chunk;
}

/* Whether an inode on mount `mnt_id` of file system `dev` is reached through no other marked mount whose
 * workload is asked for `event`: the ignore mark on the inode would silence that mount too. */
static int only_marked_reach(int mnt_id, dev_t dev, uint32_t event) {
  for (int i = 0; i < cur->nw; i++) {
    const struct workload *o = &cur->w[i];
    if (!(o->mask & event)) continue;
    for (int k = 0; k < o->nmounts; k++)
      if (o->mounts[k].mnt_id != mnt_id && o->mounts[k].dev == dev) return 0;
  }
  return 1;
}

/* 1 when the answer for class `cls` is "allow without alert" whatever the file's name: no rule of the class
 * but Allow rules, and the class neither least-permissive nor scoped for some source. */
static int name_free(const struct workload *w, int cls) {
  return !(((w->non_allow_mask | w->allow_mask | w->scoped_mask) >> cls) & 1);
}

/* After an "allow without alert": when no actor, access mode, owner or terminal could change that answer
 * for this workload, and no other marked mount reaches the inode, the kernel stops asking for it until the
 * state changes (the mark is flushed) or the inode leaves the cache (evictable: the mark never pins it).
 * A mark is on the inode, not on the name: a rename or a new hard link would give the file a name the rules
 * may decide differently, and the kernel tells nobody before the next open. So the file must have one name
 * and keep it: either its answer does not depend on the name (name_free), or the mount it is opened through
 * is read-only, where the workload can neither rename nor link it. 1 when the mark was set. */
static int maybe_ignore(int fd, const struct workload *w, int cls, const struct statx *sx, const char *path) {
  if (ignore_flags == 0 || sx->stx_nlink != 1 || !S_ISREG(sx->stx_mode)) return 0;
  uint32_t event = cls == RT_CLASS_PROCESS ? FAN_OPEN_EXEC_PERM : FAN_OPEN_PERM;
  if (!rt_ignorable(&cur->table, w->set, w->allow_mask, w->scoped_mask, cls, path)) return 0;
  /* An exec's mark also silences the File decision of its own open (below): both answers must hold. */
  int file_too = cls == RT_CLASS_PROCESS && (w->mask & FAN_OPEN_PERM);
  if (!name_free(w, cls) || (file_too && !name_free(w, RT_CLASS_FILE))) {
    struct statvfs v;
    if (fstatvfs(fd, &v) != 0 || !(v.f_flag & ST_RDONLY)) {
      n_ignore_renamable++;
      return 0;
    }
  }
  /* An exec's own open (FAN_OPEN_PERM) is told from a plain open only by the exec event just before it
   * (pending_exec); with the exec event silenced it would be decided as a File open, and denied where the
   * File class is least-permissive. So the exec event is silenced only where that File answer is also
   * unconditional. */
  if (cls == RT_CLASS_PROCESS && (w->mask & FAN_OPEN_PERM) &&
      !rt_ignorable(&cur->table, w->set, w->allow_mask, w->scoped_mask, RT_CLASS_FILE, path))
    return 0;
  if (!only_marked_reach((int)sx->stx_mnt_id, makedev(sx->stx_dev_major, sx->stx_dev_minor), event)) return 0;
  if (fanotify_mark(fan_fd, FAN_MARK_ADD | ignore_flags, event, fd, NULL) == 0) {
    n_ignore_marks++;
    return 1;
  }
  n_ignore_failed++;
  return 0;
}

/* The ignore-mark flags this kernel takes: FAN_MARK_IGNORE (6.0) or the ignored mask, surviving modification,
 * evictable (5.19). Tried on a throw-away group so the real one never holds a test mark. */
static int probe_ignore_flags(void) {
#ifndef FAN_MARK_EVICTABLE
#define FAN_MARK_EVICTABLE 0x00000200
#endif
#ifndef FAN_MARK_IGNORE
#define FAN_MARK_IGNORE 0x00000400
#endif
  const int candidates[] = {FAN_MARK_IGNORE | FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_EVICTABLE,
                            FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY | FAN_MARK_EVICTABLE};
  int g = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC);
  if (g < 0) return 0;
  int chosen = 0;
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !chosen; i++)
    if (fanotify_mark(g, FAN_MARK_ADD | candidates[i], FAN_OPEN_PERM, AT_FDCWD, "/proc/self/exe") == 0)
      chosen = candidates[i];
  close(g);
  return chosen;
}

/* ---------- directory ignore marks ---------- */

/* Directory ignore marks (docs/enforcer.md "Directory ignore marks"): an ignore mark with FAN_EVENT_ON_CHILD
 * on a directory D silences the events on the non-directory children whose parent is D at the time of the
 * event. A file renamed or linked out of D is asked where it is then, by its new name: only D itself (or an
 * ancestor) moving could give D's children names the rules decide differently, so D is marked only where it
 * cannot move: on a read-only mount, or an overlay directory that has a lower layer (overlayfs refuses to
 * rename those, EXDEV, unless redirect_dir is on). Set, refused because the directory could move, failed. */
static uint64_t n_dir_marks, n_dir_movable, n_dir_failed;

/* What was found for a directory path of a workload under the current state (cleared with every state):
 * the rules' answer, a refusal, or a mark set (not tried again in this state). Whether the directory can
 * move is never remembered as a "yes": it is checked against the file system before each mark (a refusal
 * or a mark kept too long only costs questions; a "yes" kept too long could mark a new directory at the
 * same path). */
enum { DIR_RULES_YES = 1, DIR_RULES_NO, DIR_MOVABLE, DIR_FAILED, DIR_MARKED };
#define DIR_CACHE 4096u
static struct { uint64_t h1, h2; uint8_t verdict; } dir_cache[DIR_CACHE];

/* An overlay mount's facts, read once per state from the workload's mountinfo. */
#define MAX_LAYERS 128
struct ovl_info {
  int mnt_id;
  int ok; /* 1 when its merged-or-lower directories cannot be moved and its layers were understood */
  int userxattr;
  char prefix[64]; /* where the layers' paths are reached: the root of the runtime that mounted it */
  char mp[PATH_MAX];
  int nlayers; /* layers[0] is the upper layer */
  char *layers[MAX_LAYERS];
};
#define MAX_OVL 64
static struct ovl_info *ovl_infos[MAX_OVL];
static int n_ovl_infos;

/* At every state (the marks themselves go with the flush of the group's inode marks). */
static void dir_marks_forget(void) {
  memset(dir_cache, 0, sizeof dir_cache);
  for (int i = 0; i < n_ovl_infos; i++) {
    for (int k = 0; k < ovl_infos[i]->nlayers; k++) free(ovl_infos[i]->layers[k]);
    free(ovl_infos[i]);
  }
  n_ovl_infos = 0;
}

/* An overlay module parameter (Y/N): 1 Y, 0 N, -1 unreadable. */
static int ovl_param(const char *name) {
  char p[96], v[8] = "";
  snprintf(p, sizeof p, "/sys/module/overlay/parameters/%s", name);
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, v, sizeof v - 1);
  close(fd);
  if (n <= 0) return -1;
  return v[0] == 'Y' ? 1 : v[0] == 'N' ? 0 : -1;
}

/* Parses the super options of an overlay mount into `o` (o->ok stays 0 on anything not understood). */
static void ovl_parse(struct ovl_info *o, char *opts) {
  int redirect_seen = 0, metacopy_seen = 0, have_upper = 0;
  char *upper = NULL, *lower = NULL;
  if (strchr(opts, '\\')) return; /* escaped bytes in a layer path: not worth the risk */
  for (char *save = NULL, *tok = strtok_r(opts, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (strncmp(tok, "lowerdir=", 9) == 0) {
      if (lower) return;
      lower = tok + 9;
    } else if (strncmp(tok, "upperdir=", 9) == 0) {
      upper = tok + 9;
      have_upper = 1;
    } else if (strncmp(tok, "redirect_dir=", 13) == 0) {
      const char *v = tok + 13;
      if (strcmp(v, "off") != 0 && strcmp(v, "nofollow") != 0 && strcmp(v, "follow") != 0) return;
      redirect_seen = 1;
    } else if (strncmp(tok, "metacopy=", 9) == 0) {
      if (strcmp(tok + 9, "off") != 0) return;
      metacopy_seen = 1;
    } else if (strcmp(tok, "userxattr") == 0) {
      o->userxattr = 1;
    } else if (strcmp(tok, "rw") == 0 || strcmp(tok, "ro") == 0 || strncmp(tok, "workdir=", 8) == 0 ||
               strncmp(tok, "index=", 6) == 0 || strncmp(tok, "xino=", 5) == 0 || strncmp(tok, "uuid=", 5) == 0 ||
               strncmp(tok, "nfs_export=", 11) == 0 || strncmp(tok, "verity=", 7) == 0 ||
               strcmp(tok, "default_permissions") == 0 || strcmp(tok, "volatile") == 0) {
      /* no bearing on whether a directory can be renamed */
    } else {
      return; /* an option this reader does not know */
    }
  }
  if (!have_upper || !lower || !*upper || !*lower) return;
  /* Without the option the module's default holds: redirect_dir=on (Y) lets directories move. metacopy=on
   * implies redirects. */
  if (!redirect_seen && ovl_param("redirect_dir") != 0) return;
  if (!metacopy_seen && ovl_param("metacopy") != 0) return;
  o->layers[o->nlayers++] = strdup(upper);
  for (char *p = lower;;) {
    char *colon = strchr(p, ':');
    if (colon) *colon = 0;
    if (!*p || p[0] != '/' || o->nlayers >= MAX_LAYERS) return; /* "::" data-only layers, relative paths */
    o->layers[o->nlayers++] = strdup(p);
    if (!colon) break;
    p = colon + 1;
  }
  o->ok = 1;
}

/* A directory below `at`: a layer's root by its path under the runtime's root (`resolve` RESOLVE_IN_ROOT: the
 * host's own links, e.g. a moved /var/lib/containerd, are followed inside that root), or one name inside a
 * layer, opened without following any link (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): the upper layer is
 * written by the workload, which must not steer the walk elsewhere by turning a directory into a link
 * between two steps. */
static int ovl_open_dir(int at, const char *name, unsigned long long resolve) {
  struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = resolve | RESOLVE_NO_MAGICLINKS};
  if (resolve & RESOLVE_BENEATH) {
    how.flags |= O_NOFOLLOW;
    how.resolve |= RESOLVE_NO_SYMLINKS;
  }
  return (int)syscall(SYS_openat2, at, name, &how, sizeof how);
}

/* The overlay facts of mount `mnt_id` of workload `w`: NULL when it is not an overlay mount one can reason
 * about (not overlay, mounted at a sub-directory of the file system, options not understood). */
static const struct ovl_info *ovl_of(const struct workload *w, int mnt_id) {
  for (int i = 0; i < n_ovl_infos; i++)
    if (ovl_infos[i]->mnt_id == mnt_id) return ovl_infos[i]->ok ? ovl_infos[i] : NULL;
  if (n_ovl_infos >= MAX_OVL) return NULL;
  struct ovl_info *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->mnt_id = mnt_id;
  ovl_infos[n_ovl_infos++] = o;
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/mountinfo", w->host ? 1 : w->pid);
  FILE *f = fopen(p, "re");
  if (!f) return NULL;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    int id;
    char root[PATH_MAX], mp[PATH_MAX];
    if (sscanf(line, "%d %*d %*s %4095s %4095s", &id, root, mp) != 3 || id != mnt_id) continue;
    char *dash = strstr(line, " - ");
    char fstype[64], *opts = NULL;
    if (dash && sscanf(dash + 3, "%63s", fstype) == 1 && strcmp(fstype, "overlay") == 0 && strcmp(root, "/") == 0) {
      /* " - overlay <source> <super options>\n" */
      char *src = strchr(dash + 3, ' ');
      char *sp = src ? strchr(src + 1, ' ') : NULL;
      if (sp) {
        opts = sp + 1;
        opts[strcspn(opts, "\n")] = 0;
        unescape_mount(mp);
        snprintf(o->mp, sizeof o->mp, "%s", mp);
        ovl_parse(o, opts);
      }
    }
    break;
  }
  free(line);
  fclose(f);
  if (!o->ok) return NULL;
  /* The layers' paths are the mounter's: the container runtime (containerd's shim, runc's parent), the
   * parent of the workload's first process, mounted the root file system in its own mount namespace. They
   * are reached under its root, in its namespace, and must all be directories there. */
  o->ok = 0;
  struct proc_status st;
  proc_status(w->pid, &st);
  if (w->host || st.ppid <= 1) return NULL;
  snprintf(o->prefix, sizeof o->prefix, "/proc/%d/root", st.ppid);
  int root = open(o->prefix, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return NULL;
  for (int k = 0; k < o->nlayers; k++) {
    int d = ovl_open_dir(root, o->layers[k], RESOLVE_IN_ROOT);
    if (d < 0) {
      close(root);
      return NULL;
    }
    close(d);
  }
  close(root);
  o->ok = 1;
  return o;
}

/* An xattr of the overlay's namespace on a layer's directory (descriptor): 1 present (value in v), 0 absent,
 * -1 error. */
static int ovl_xattr(const struct ovl_info *o, int fd, const char *name, char *v, size_t vl) {
  char full[64];
  snprintf(full, sizeof full, "%s.overlay.%s", o->userxattr ? "user" : "trusted", name);
  ssize_t n = fgetxattr(fd, full, v, vl - 1);
  if (n >= 0) {
    v[n] = 0;
    return 1;
  }
  return errno == ENODATA || errno == ENOTSUP ? 0 : -1;
}

static void close_all(int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

/* 1 when the directory at `rel` (relative to the overlay's root, "" for the root, components separated by
 * '/', no trailing one) is a merged or lower directory of the overlay: looked up layer by layer as overlayfs
 * does (upper first, then the lower layers in order; an opaque directory, a whiteout or a non-directory hides
 * the layers below it), at least one lower layer holds it as a visible directory. 0 otherwise, and on a
 * redirect anywhere on the way or any error. Each step opens one name below the directories the previous step
 * opened and checked (descriptors, never a path again). */
static int ovl_merged_or_lower(const struct ovl_info *o, const char *rel) {
  if (*rel == 0) return 1; /* the root holds every layer */
  int root = open(o->prefix, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return 0;
  /* The visible directories of the current step, by layer (index into o->layers) and descriptor. */
  int layer[MAX_LAYERS], fds[MAX_LAYERS], na = 0;
  for (int k = 0; k < o->nlayers; k++) {
    fds[na] = ovl_open_dir(root, o->layers[k], RESOLVE_IN_ROOT);
    if (fds[na] < 0) {
      close_all(fds, na);
      close(root);
      return 0;
    }
    layer[na++] = k;
  }
  close(root);
  char name[NAME_MAX + 1];
  for (const char *c = rel; *c;) {
    size_t n = strcspn(c, "/");
    if (n == 0 || n > NAME_MAX || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) {
      close_all(fds, na);
      return 0;
    }
    memcpy(name, c, n);
    name[n] = 0;
    c += n;
    if (*c == '/') c++;
    int nlayer[MAX_LAYERS], nfds[MAX_LAYERS], nn = 0, stop = 0, bad = 0;
    for (int k = 0; k < na && !stop && !bad; k++) {
      struct stat st;
      if (fstatat(fds[k], name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;
        bad = 1;
        break;
      }
      if (!S_ISDIR(st.st_mode)) {
        stop = 1; /* a whiteout, a file or a link hides what is below */
        continue;
      }
      int d = ovl_open_dir(fds[k], name, RESOLVE_BENEATH);
      char v[8];
      int redirect = d >= 0 ? ovl_xattr(o, d, "redirect", v, sizeof v) : -1;
      int opaque = redirect == 0 ? ovl_xattr(o, d, "opaque", v, sizeof v) : -1;
      if (d < 0 || redirect != 0 || opaque < 0 || (opaque == 1 && strcmp(v, "y") != 0)) {
        if (d >= 0) close(d);
        bad = 1;
        break;
      }
      nlayer[nn] = layer[k];
      nfds[nn++] = d;
      if (opaque == 1) stop = 1;
    }
    close_all(fds, na);
    if (bad || nn == 0) {
      close_all(nfds, nn);
      return 0;
    }
    memcpy(layer, nlayer, sizeof(int) * (size_t)nn);
    memcpy(fds, nfds, sizeof(int) * (size_t)nn);
    na = nn;
  }
  close_all(fds, na);
  for (int k = 0; k < na; k++)
    if (layer[k] >= 1) return 1;
  return 0;
}

static void dir_remember(uint64_t h1, uint64_t h2, int verdict) {
  unsigned i = (unsigned)(h1 & (DIR_CACHE - 1));
  dir_cache[i].h1 = h1;
  dir_cache[i].h2 = h2;
  dir_cache[i].verdict = (uint8_t)verdict;
}

/* After an "allow without alert" for the file `path` (descriptor `fd`, facts `sx`) of workload `w`: marks the
 * directory holding it so the kernel stops asking for its children, when all of these hold (otherwise the
 * events go on being asked; see dir_cache for what is remembered):
 *  - every child name of the directory is "allow without alert" for every class the workload is asked for
 *    (exec and open together: a mark for one only would leave an exec's own open to be told from a plain
 *    open, see pending_exec), whatever the actor, mode, owner or terminal (rt_dir_ignorable);
 *  - no other marked mount reaches the file system (only_marked_reach);
 *  - the directory cannot move: the mount is read-only, or an overlay whose merged-or-lower directories
 *    overlayfs refuses to rename, and the directory is one;
 *  - the directory opened by name under the workload's root, through the same mount, holds the event's file
 *    under its base name. */
static int maybe_ignore_dir(int fd, const struct workload *w, const struct statx *sx, const char *path) {
  if (!(ignore_flags & FAN_MARK_IGNORE)) return 0; /* the legacy ignored mask does not follow the parent */
  const char *slash = strrchr(path, '/');
  if (path[0] != '/' || slash == NULL || slash[1] == 0) return 0;
  char dir[PATH_MAX];
  size_t dl = (size_t)(slash - path) + 1;
  memcpy(dir, path, dl);
  dir[dl] = 0;
  uint64_t h1 = 0x6c62272e07bb0142ULL, h2 = 0x1d4b2a5f6e0c9397ULL;
  hash2(&h1, &h2, w->key, strlen(w->key));
  hash2(&h1, &h2, dir, dl);
  unsigned slot = (unsigned)(h1 & (DIR_CACHE - 1));
  int known = dir_cache[slot].h1 == h1 && dir_cache[slot].h2 == h2 ? dir_cache[slot].verdict : 0;
  if (known && known != DIR_RULES_YES) return 0;
  uint32_t events = w->mask & (FAN_OPEN_PERM | FAN_OPEN_EXEC_PERM);
  if (!known) {
    const struct rule_table *t = &cur->table;
    int yes = (!(events & FAN_OPEN_EXEC_PERM) ||
               rt_dir_ignorable(t, w->set, w->allow_mask, w->scoped_mask, RT_CLASS_PROCESS, dir)) &&
              (!(events & FAN_OPEN_PERM) ||
               rt_dir_ignorable(t, w->set, w->allow_mask, w->scoped_mask, RT_CLASS_FILE, dir));
    dir_remember(h1, h2, yes ? DIR_RULES_YES : DIR_RULES_NO);
    if (!yes) return 0;
  }
  dev_t dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
  if (!only_marked_reach((int)sx->stx_mnt_id, dev, events)) {
    n_dir_failed++;
    dir_remember(h1, h2, DIR_FAILED);
    return 0;
  }
  const struct ovl_info *ovl = NULL;
  struct statvfs v;
  if (fstatvfs(fd, &v) != 0) {
    n_dir_failed++;
    dir_remember(h1, h2, DIR_FAILED);
    return 0;
  }
  if (!(v.f_flag & ST_RDONLY)) {
    ovl = ovl_of(w, (int)sx->stx_mnt_id);
    if (ovl == NULL) {
      n_dir_movable++;
      dir_remember(h1, h2, DIR_MOVABLE);
      return 0;
    }
  }
  /* The directory by name, under the workload's root, without following any link. */
  char rootp[64];
  if (w->host)
    snprintf(rootp, sizeof rootp, "/");
  else
    snprintf(rootp, sizeof rootp, "/proc/%d/root", w->pid);
  int root = open(rootp, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) {
    n_dir_failed++;
    dir_remember(h1, h2, DIR_FAILED);
    return 0;
  }
  struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                         .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
  int dfd = (int)syscall(SYS_openat2, root, dir, &how, sizeof how);
  close(root);
  struct statx dx, fx;
  if (dfd < 0 || statx(dfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &dx) != 0 || !(dx.stx_mask & STATX_MNT_ID) ||
      dx.stx_mnt_id != sx->stx_mnt_id || statx(dfd, slash + 1, AT_SYMLINK_NOFOLLOW, STATX_INO, &fx) != 0 ||
      fx.stx_ino != sx->stx_ino || fx.stx_dev_major != sx->stx_dev_major || fx.stx_dev_minor != sx->stx_dev_minor) {
    /* Not (or no longer) the file's directory by that name: not marked in this state (remembered, so a
     * path the workload's root does not resolve costs one look-up per event). */
    if (dfd >= 0) close(dfd);
    n_dir_failed++;
    dir_remember(h1, h2, DIR_FAILED);
    return 0;
  }
  if (ovl) {
    /* The directory relative to the overlay's root: after the mount point in the workload's view. */
    size_t ml = strlen(ovl->mp);
    const char *rel;
    if (strcmp(ovl->mp, "/") == 0)
      rel = dir + 1;
    else if (strncmp(dir, ovl->mp, ml) == 0 && dir[ml] == '/')
      rel = dir + ml + 1;
    else
      rel = NULL;
    char r[PATH_MAX];
    if (rel) {
      snprintf(r, sizeof r, "%s", rel);
      size_t l = strlen(r);
      if (l > 0 && r[l - 1] == '/') r[l - 1] = 0;
    }
    /* After the directory was opened: a directory that is merged now was merged when it was opened (overlayfs
     * never turns a directory at a path back into a merged one once it is gone or pure upper). */
    if (!rel || !ovl_merged_or_lower(ovl, r)) {
      close(dfd);
      n_dir_movable++;
      dir_remember(h1, h2, DIR_MOVABLE);
      return 0;
    }
  }
  int ok = fanotify_mark(fan_fd, FAN_MARK_ADD | ignore_flags, events | FAN_EVENT_ON_CHILD, dfd, NULL) == 0;
  close(dfd);
  if (!ok) {
    n_dir_failed++;
    dir_remember(h1, h2, DIR_FAILED);
    return 0;
  }
  n_dir_marks++;
  dir_remember(h1, h2, DIR_MARKED);
  return 1;
}

static void handle_event(const struct fanotify_event_metadata *md) {
  int fd = md->fd;
  uint32_t verdict = FAN_ALLOW;
  n_decisions++;
  if (md->pid == self_pid || cur == NULL) goto answer;
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID | STATX_BASIC_STATS, &sx) != 0) goto answer;
  struct workload *w = find_workload_by_mount(cur, (int)sx.stx_mnt_id);
  if (!w) goto answer;
  int pid = md->pid;
  int cls = (md->mask & FAN_OPEN_EXEC_PERM) ? RT_CLASS_PROCESS : RT_CLASS_FILE;
  dev_t dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  unsigned slot = (unsigned)pid % PENDING_EXEC;
  char path[PATH_MAX], actor[PATH_MAX] = "";
  int have_path = 0;
  if (cls == RT_CLASS_FILE && pending_exec[slot].pid == pid) {
    /* The open that execve does right after FAN_OPEN_EXEC_PERM is part of the exec, decided already: the
     * same file by the same name (an entry left by an exec whose open was not asked, its directory marked
     * meanwhile, must not pass the file under another name after a rename). */
    int same = pending_exec[slot].dev == dev && pending_exec[slot].ino == sx.stx_ino;
    pending_exec[slot].pid = 0;
    if (same) {
      uint64_t ph1 = 0, ph2 = 0;
      fd_path(fd, path, sizeof path);
      have_path = 1;
      hash2(&ph1, &ph2, path, strlen(path));
      same = ph1 == pending_exec[slot].path_hash;
    }
    if (same) {
      /* Its File decision may be unconditional too: then plain opens of it (a script read by its
       * interpreter, or this open at the next exec) are not asked either. */
      if (ignore_flags && (w->mask & FAN_OPEN_PERM) && sx.stx_nlink == 1 && S_ISREG(sx.stx_mode))
        maybe_ignore(fd, w, RT_CLASS_FILE, &sx, path);
      goto answer;
    }
  }
  if (cls == RT_CLASS_FILE && !(w->mask & FAN_OPEN_PERM)) goto answer;
  if (!have_path) fd_path(fd, path, sizeof path);
  const struct rule_table *t = &cur->table;
  struct lookup in = {.policy_set = w->set, .cls = cls, .resource = path, .actor = actor, .allow_mask = w->allow_mask};
  char pc = w->posture[cls == RT_CLASS_PROCESS ? RT_CLASS_FILE : cls];
  in.posture_block = pc == 'b';
  if (t->has_sources) proc_exe(pid, actor, sizeof actor); /* fromSource rules and scoped Allow rules */
  if (t->has_readonly && cls == RT_CLASS_FILE) {
    char n[32], a[512];
    proc_syscall(pid, cls, n, sizeof n, a, sizeof a, &in.write);
  }
  if (t->has_owneronly) {
    struct proc_status st;
    proc_status(pid, &st);
    in.owner = st.fsuid >= 0 && (uint32_t)st.fsuid == sx.stx_uid;
  }
  if (t->has_pts) in.tty = proc_tty(pid);

  uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
  uint8_t facts[4] = {(uint8_t)cls, (uint8_t)in.write, (uint8_t)in.owner, (uint8_t)in.tty};
  hash2(&h1, &h2, w->key, strlen(w->key));
  hash2(&h1, &h2, facts, sizeof facts);
  hash2(&h1, &h2, path, strlen(path));
  hash2(&h1, &h2, actor, strlen(actor));
  struct cache_entry *ce = &cache[h1 & (CACHE_SIZE - 1)];
  struct decision d;
  if (ce->used && ce->h1 == h1 && ce->h2 == h2 && ce->generation == cur->generation) {
    n_cache_hits++;
    d.rule = ce->rule;
    d.action = ce->action;
    d.posture = ce->posture;
    d.report = ce->report;
  } else {
    rt_decide(t, &in, &d);
    *ce = (struct cache_entry){.h1 = h1, .h2 = h2, .generation = cur->generation, .rule = d.rule,
                               .action = (uint8_t)d.action, .posture = (uint8_t)d.posture,
                               .report = (uint8_t)d.report, .used = 1};
  }
  int dir_marked = 0;
  if (d.action == RT_ACTION_ALLOW && !d.report) {
    /* The file's own mark where it can have one; its directory's otherwise (a directory mark makes the kernel
     * look at the parent's marks at every open of a child: not paid where the inode mark serves). */
    if (!maybe_ignore(fd, w, cls, &sx, path)) dir_marked = maybe_ignore_dir(fd, w, &sx, path);
  }
  if (d.action == RT_ACTION_BLOCK) {
    verdict = FAN_DENY;
    n_denied++;
  } else if (cls == RT_CLASS_PROCESS && !(dir_marked && (w->mask & FAN_OPEN_PERM))) {
    /* (With the directory just marked for opens too, the exec's own open is not asked: no entry.) */
    uint64_t ph1 = 0, ph2 = 0;
    hash2(&ph1, &ph2, path, strlen(path));
    pending_exec[slot].pid = pid;
    pending_exec[slot].dev = dev;
    pending_exec[slot].ino = sx.stx_ino;
    pending_exec[slot].path_hash = ph1;
  }
  if (d.report) {
    /* Read while the task waits for the answer (it is there to read, and still the one that asked), then
     * answered, then formatted: the task does not wait for the formatting. */
    struct answer *a = chunk_add(fd, verdict);
    if (a == NULL) {
      static struct facts facts;
      collect_facts(w, cls, pid, actor, &facts);
      respond(fd, verdict);
      close(fd);
      emit_report(w, cls, &d, pid, path, &facts);
      return;
    }
    collect_facts(w, cls, pid, actor, &a->facts);
    a->report = 1;
    a->w = w;
    a->cls = cls;
    a->pid = pid;
    a->d = d;
    memcpy(a->path, path, strlen(path) + 1);
    return;
  }
answer:
  if (chunk_add(fd, verdict) == NULL) {
    respond(fd, verdict);
    close(fd);
  }
}

/* ---------- socket ---------- */

static void client_close(struct client *c) {
  if (c->events) ring_tail = ring_acked; /* resend what was not acknowledged */
  close(c->fd);
  free(c->in);
  free(c->out);
  memset(c, 0, sizeof *c);
  c->fd = -1;
}

static void client_send(struct client *c, const char *s, size_t n) {
  char *p = realloc(c->out, c->out_len + n);
  if (!p) return;
  c->out = p;
  memcpy(c->out + c->out_len, s, n);
  c->out_len += n;
}

static void send_status(struct client *c) {
  struct sbuf b = {0};
  sb_printf(&b,
            "{\"t\":\"status\",\"generation\":%" PRIu64 ",\"decisions\":%" PRIu64 ",\"cacheHits\":%" PRIu64
            ",\"reported\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"denied\":%" PRIu64 ",\"ignoreMarks\":%" PRIu64
            ",\"ignoreFlushes\":%" PRIu64 ",\"ignoreFailed\":%" PRIu64 ",\"ignoreRenamable\":%" PRIu64
            ",\"ignoreSupported\":%s,\"dirIgnoreMarks\":%" PRIu64 ",\"dirIgnoreMovable\":%" PRIu64
            ",\"dirIgnoreFailed\":%" PRIu64 ",\"pid\":%d,\"readers\":%d,\"workloads\":[",
            cur ? cur->generation : 0, n_decisions, n_cache_hits, n_reported, n_dropped, n_denied, n_ignore_marks,
            n_ignore_flushes, n_ignore_failed, n_ignore_renamable, ignore_flags ? "true" : "false", n_dir_marks,
            n_dir_movable, n_dir_failed, (int)self_pid, n_readers);
  for (int i = 0; cur && i < cur->nw; i++) {
    if (i) sb_add(&b, ",", 1);
    sb_printf(&b, "{\"key\":");
    sb_json_str(&b, cur->w[i].key);
    sb_printf(&b, ",\"mounts\":%d}", cur->w[i].nmounts);
  }
  sb_add(&b, "]}\n", 3);
  client_send(c, b.p, b.len);
  free(b.p);
}

static void send_error(struct client *c, const char *message) {
  struct sbuf b = {0};
  sb_add(&b, "{\"t\":\"error\",\"message\":", 23);
  sb_json_str(&b, message);
  sb_add(&b, "}\n", 2);
  client_send(c, b.p, b.len);
  free(b.p);
}

/* A decimal sequence number: digits only, no sign, no overflow. */
static int parse_seq(const char *s, uint64_t *out) {
  if (*s == 0) return -1;
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    uint64_t d = (uint64_t)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* Handles complete commands in the input buffer. */
static void client_input(struct client *c) {
  for (;;) {
    char *nl = memchr(c->in, '\n', c->in_len);
    if (!nl) return;
    size_t ll = (size_t)(nl - c->in);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "%.*s", (int)(ll < 127 ? ll : 127), c->in);
    size_t consumed = ll + 1;
    if (strncmp(cmd, "STATE ", 6) == 0) {
      size_t n = strtoul(cmd + 6, NULL, 10);
      if (c->in_len - consumed < n) return; /* wait for the payload */
      char err[256] = "";
      const char *e = apply_state(c->in + consumed, n, err, sizeof err);
      struct sbuf b = {0};
      if (e) {
        sb_add(&b, "{\"t\":\"error\",\"message\":", 23);
        sb_json_str(&b, e);
        sb_add(&b, "}\n", 2);
      } else {
        sb_printf(&b, "{\"t\":\"applied\",\"generation\":%" PRIu64 "}\n", cur->generation);
      }
      client_send(c, b.p, b.len);
      free(b.p);
      consumed += n;
    } else if (strcmp(cmd, "STATUS") == 0) {
      send_status(c);
    } else if (strcmp(cmd, "EVENTS") == 0) {
      for (int i = 0; i < MAX_CLIENTS; i++)
        if (&clients[i] != c && clients[i].fd >= 0 && clients[i].events) client_close(&clients[i]);
      c->events = 1;
      ring_tail = ring_acked;
    } else if (strncmp(cmd, "ACK ", 4) == 0) {
      uint64_t seq;
      if (parse_seq(cmd + 4, &seq) != 0 || seq > ev_seq ||
          (seq > ev_acked_seq && ev_end[seq % EV_SLOTS] > ring_tail)) {
        /* `ACK -1`, `ACK x`, or an event not (wholly) sent yet: acknowledging it could discard events no one
         * has handled. Refuse it; the events stay kept. */
        send_error(c, "ACK takes the sequence number of an event sent on this stream");
      } else {
        ring_ack(seq);
      }
    } else if (strcmp(cmd, "STOP") == 0) {
      stop_requested = 1;
    } else {
      send_error(c, "unknown command");
    }
    memmove(c->in, c->in + consumed, c->in_len - consumed);
    c->in_len -= consumed;
  }
}

static void client_read(struct client *c) {
  if (c->in_cap - c->in_len < 65536) {
    size_t cap = c->in_cap ? c->in_cap * 2 : 131072;
    if (cap > (256u << 20)) {
      client_close(c);
      return;
    }
    char *p = realloc(c->in, cap);
    if (!p) return;
    c->in = p;
    c->in_cap = cap;
  }
  ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
  if (n <= 0) {
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    client_close(c);
    return;
  }
  c->in_len += (size_t)n;
  client_input(c);
}

/* The event stream is a sequence of whole lines. Only one event connection exists, and ring_tail is where it
 * stands in the ring; every event starts right after the previous one's '\n' (JSON escapes every control
 * byte), so the stream is at a line boundary exactly when the byte before ring_tail is '\n' (or nothing was
 * sent since the last acknowledged event). Anything else sent on that connection (dropped notices, error
 * replies) waits for a boundary, so it can never land inside an event whose write was cut short. */
static int ring_at_line_boundary(void) {
  return ring_tail == ring_acked || ring_tail == ring_head || ring[(ring_tail - 1) % RING_SIZE] == '\n';
}

/* Writes c->out; returns 1 when it is empty afterwards, 0 when the socket is full, -1 when closed. */
static int flush_out(struct client *c) {
  while (c->out_len > 0) {
    ssize_t n = write(c->fd, c->out, c->out_len);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return 0;
      client_close(c);
      return -1;
    }
    memmove(c->out, c->out + n, c->out_len - (size_t)n);
    c->out_len -= (size_t)n;
  }
  return 1;
}

static void client_write(struct client *c) {
  if (!c->events) {
    flush_out(c);
    return;
  }
  for (;;) {
    /* Mid-line: finish the event line first (c->out holds only whole lines, queued at a boundary). */
    if (!ring_at_line_boundary()) {
      size_t off = ring_tail % RING_SIZE;
      size_t n = ring_head - ring_tail;
      if (n > RING_SIZE - off) n = RING_SIZE - off;
      /* Up to the end of the current line only, so the boundary is reached before anything else is sent. */
      const char *nl = memchr(ring + off, '\n', n);
      if (nl != NULL) n = (size_t)(nl - (ring + off)) + 1;
      ssize_t w = write(c->fd, ring + off, n);
      if (w < 0) {
        if (errno != EAGAIN && errno != EINTR) client_close(c);
        return;
      }
      ring_tail += (uint64_t)w;
      continue;
    }
    if (c->out_len > 0) {
      if (flush_out(c) <= 0) return;
      continue;
    }
    if (n_dropped != last_dropped_sent) {
      char line[96];
      int l = snprintf(line, sizeof line, "{\"t\":\"dropped\",\"dropped\":%" PRIu64 "}\n", n_dropped);
      last_dropped_sent = n_dropped;
      client_send(c, line, (size_t)l);
      continue;
    }
    if (ring_tail >= ring_head) return;
    size_t off = ring_tail % RING_SIZE;
    size_t n = ring_head - ring_tail;
    if (n > RING_SIZE - off) n = RING_SIZE - off;
    ssize_t w = write(c->fd, ring + off, n);
    if (w < 0) {
      if (errno != EAGAIN && errno != EINTR) client_close(c);
      return;
    }
    ring_tail += (uint64_t)w;
    if ((size_t)w < n) return; /* the socket is full; POLLOUT brings us back */
  }
}

/* 4 ms: each batch costs the control plane a wake-up, a read, a log write and an acknowledgement whatever its
 * size, so at a few thousand events a second a 1 ms delay made batches of a few events, and that fixed cost
 * (then ~25 µs of its CPU per event) took the CPU the blocked tasks and this helper needed. */
#define SEND_BATCH_BYTES (64u << 10)
#define SEND_DELAY_MS 4u

static uint64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Called under state_mu after a reader answered a chunk: wakes the main thread when the ring or the drop
 * count changed what it waits for (the first unsent event starts the batch delay; a full batch or a new drop
 * is sent at once). One write per wait at most: the main thread clears wake_sent when it drains wake_fd. */
static void notify_main(void) {
  if (wake_fd < 0 || wake_sent || !plan_stream) return;
  uint64_t unsent = ring_head - ring_tail;
  if ((plan_idle && unsent > 0) || (plan_batch_wait && unsent >= SEND_BATCH_BYTES) || n_dropped != plan_dropped) {
    uint64_t one = 1;
    if (write(wake_fd, &one, sizeof one) == (ssize_t)sizeof one) wake_sent = 1;
  }
}

/* Decides the events of one read by chunks, each chunk under state_mu (so the main thread and the other
 * readers interleave between chunks). With `held`, the caller holds state_mu and answers the last chunk. */
static void handle_batch(const char *buf, ssize_t len, int held) {
  const struct fanotify_event_metadata *md = (const void *)buf;
  read_batch++; /* the parents' links read for an earlier read are not this read's (parent_reads) */
  int locked = held; /* state_mu is held for the chunk being gathered */
  while (FAN_EVENT_OK(md, len)) {
    if (md->vers != FANOTIFY_METADATA_VERSION) {
      logf_("fanotify metadata version mismatch");
      exit(1);
    }
    if (md->fd >= 0 && md->pid == self_pid) {
      /* The helper's own access, allowed at once, before the lock is taken: the thread that holds it may be
       * the one waiting for this answer (a reader answers the other threads; the single loop never waits on
       * itself as it opens nothing on a marked mount). */
      respond(md->fd, FAN_ALLOW);
      close(md->fd);
      if (!locked) pthread_mutex_lock(&state_mu);
      n_decisions++;
      if (!locked) pthread_mutex_unlock(&state_mu);
      md = FAN_EVENT_NEXT(md, len);
      continue;
    }
    if (!locked) {
      pthread_mutex_lock(&state_mu);
      locked = 1;
    }
    if (md->fd >= 0) handle_event(md);
    else n_dropped++; /* queue overflow */
    if (chunk_full()) {
      chunk_flush();
      notify_main();
      if (!held) {
        pthread_mutex_unlock(&state_mu);
        locked = 0;
      }
    }
    md = FAN_EVENT_NEXT(md, len);
  }
  if (locked && !held) {
    chunk_flush();
    notify_main();
    pthread_mutex_unlock(&state_mu);
  }
}

/* The single loop: reads what the (non-blocking) queue holds once poll said it holds something. Called
 * without state_mu; takes it for the whole call (no reader thread exists to wait for it). */
static void read_fanotify(char *buf, size_t size) {
  pthread_mutex_lock(&state_mu);
  for (;;) {
    ssize_t len = read(fan_fd, buf, size);
    if (len <= 0) break;
    handle_batch(buf, len, 1);
    /* Room for more was left: the queue was empty at the read; poll (not one more read) waits for more. (A
     * read more before answering, to gather the events queued while a chunk's facts were read, woke fewer
     * tasks in some runs and more in others, and costs every reported event a system call.) */
    if ((size_t)len + sizeof(struct fanotify_event_metadata) + 64 <= size) break;
  }
  chunk_flush();
  notify_main();
  pthread_mutex_unlock(&state_mu);
}

/* One reader, pinned to one CPU: a task that opens a file on that CPU is answered by the reader on the same
 * CPU, without the cross-CPU wake-ups (of the reader, then of the task) a single thread elsewhere costs. With
 * readers the queue's descriptor is blocking: every reader is woken by every event (the queue has one wait
 * queue), and one that finds it empty goes back to sleep inside read(2), without returning to user space
 * (no poll, no empty read). */
static void *reader_main(void *arg) {
  int cpu = (int)(intptr_t)arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  int e = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (e != 0) logf_("reader on CPU %d: pin: %s", cpu, strerror(e));
  static _Thread_local char buf[FAN_READ_BYTES] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
  for (;;) {
    ssize_t len = read(fan_fd, buf, sizeof buf);
    if (len < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      logf_("reader on CPU %d: read: %s", cpu, strerror(errno));
      exit(1);
    }
    handle_batch(buf, len, 0);
  }
  return NULL;
}

/* The reader count: RTCTL_FANOTIFY_READERS=<n> runs one reader per CPU the helper may run on, at most n; unset,
 * 0 or 1: the main thread reads, as a single loop (the default: on this project's measurements the readers did
 * not make an open faster, idle or loaded; docs/enforcer.md "Reader threads"). Returns -1 on a bad value. */
static int choose_readers(void) {
  cpu_set_t set;
  int cpus[MAX_READERS], ncpu = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE && ncpu < MAX_READERS; c++)
      if (CPU_ISSET(c, &set)) cpus[ncpu++] = c;
  }
  const char *env = getenv("RTCTL_FANOTIFY_READERS");
  long want;
  if (env && *env) {
    char *end;
    errno = 0;
    want = strtol(env, &end, 10);
    if (errno || *end || env[0] < '0' || env[0] > '9' || want < 0 || want > MAX_READERS) {
      logf_("RTCTL_FANOTIFY_READERS must be a count from 0 to %d, not \"%s\"", MAX_READERS, env);
      return -1;
    }
    if (want > ncpu) want = ncpu; /* one per CPU at most: two on one CPU only add wake-ups */
  } else {
    want = 1;
  }
  if (want <= 1) return 0;
  for (int i = 0; i < want; i++) reader_cpus[i] = cpus[i];
  return (int)want;
}

static int start_readers(void) {
  wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) {
    logf_("eventfd: %s", strerror(errno));
    return -1;
  }
  /* Signals go to the main thread only: the readers start with them blocked. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  for (int i = 0; i < n_readers; i++) {
    pthread_t t;
    int e = pthread_create(&t, NULL, reader_main, (void *)(intptr_t)reader_cpus[i]);
    if (e != 0) {
      logf_("reader thread: %s", strerror(e));
      pthread_sigmask(SIG_SETMASK, &old, NULL);
      return -1;
    }
    pthread_detach(t);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return 0;
}

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static int probe(void) {
  int fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
  if (fd < 0) {
    printf("{\"fanotify\":false,\"reason\":\"fanotify_init: %s\"}\n", strerror(errno));
    return 1;
  }
  if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_EXEC_PERM | FAN_OPEN_PERM, AT_FDCWD, "/proc/self/root/") != 0) {
    printf("{\"fanotify\":false,\"reason\":\"fanotify_mark FAN_OPEN_EXEC_PERM: %s\"}\n", strerror(errno));
    close(fd);
    return 1;
  }
  close(fd);
  printf("{\"fanotify\":true,\"reason\":\"fanotify_init(FAN_CLASS_CONTENT) and a FAN_OPEN_EXEC_PERM mount mark succeeded\"}\n");
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static void unhex(const char *in, char *out, size_t len) {
  size_t o = 0;
  if (strcmp(in, "-") != 0) {
    for (size_t i = 0; in[i] && in[i + 1] && o + 1 < len; i += 2) {
      int hi = hexval(in[i]), lo = hexval(in[i + 1]);
      if (hi < 0 || lo < 0) break;
      out[o++] = (char)(hi * 16 + lo);
    }
  }
  out[o] = 0;
}

/* --decide: the lookup walk on stdin queries, for testing it against the oracle. Input lines:
 *   table <len>\n<bytes>      load a table
 *   Q <class> <write> <owner> <tty> <a|b> <policies|-> <resource hex|-> <actor hex|->
 *   I <class> <policies|-> <resource hex|->
 *   J <class> <policies|-> <directory hex, ending in '/'>
 * Output per Q: `D <rule> <action> <posture> <report>`; per I: `I <1 when rt_ignorable>`; per J:
 * `J <1 when rt_dir_ignorable>`; or `E <message>`. */
static int decide_mode(void) {
  static char line[65536];
  struct rule_table t;
  uint8_t *bytes = NULL;
  int have = 0;
  while (fgets(line, sizeof line, stdin)) {
    if (strncmp(line, "table ", 6) == 0) {
      size_t n = strtoul(line + 6, NULL, 10);
      free(bytes);
      bytes = malloc(n ? n : 1);
      if (!bytes || fread(bytes, 1, n, stdin) != n) return 1;
      char err[256];
      have = rt_open(&t, bytes, (uint32_t)n, err, sizeof err) == 0;
      if (!have) printf("E %s\n", err);
      continue;
    }
    if ((line[0] == 'I' || line[0] == 'J') && have) {
      /* I <class> <policies|-> <resource hex|->: `I <0|1>` from rt_ignorable; J the same for a directory
       * from rt_dir_ignorable. */
      int cls;
      char pols[32768], rhex[8192], res[4096];
      if (sscanf(line + 1, " %d %32767s %8191s", &cls, pols, rhex) != 3) {
        printf("E bad query\n");
        continue;
      }
      uint64_t *set = calloc((t.policy_count + 63) / 64 + 1, sizeof(uint64_t));
      if (strcmp(pols, "-") != 0)
        for (char *tok = strtok(pols, ","); tok; tok = strtok(NULL, ",")) {
          unsigned long p = strtoul(tok, NULL, 10);
          if (p < t.policy_count) set[p >> 6] |= 1ULL << (p & 63);
        }
      unhex(rhex, res, sizeof res);
      if (line[0] == 'I')
        printf("I %d\n", rt_ignorable(&t, set, rt_allow_mask(&t, set), rt_scoped_allow_mask(&t, set), cls, res));
      else
        printf("J %d\n", rt_dir_ignorable(&t, set, rt_allow_mask(&t, set), rt_scoped_allow_mask(&t, set), cls, res));
      free(set);
      continue;
    }
    if (line[0] != 'Q' || !have) continue;
    int cls, wr, ow, tty;
    char posture[4], pols[32768], rhex[8192], ahex[8192];
    if (sscanf(line, "Q %d %d %d %d %3s %32767s %8191s %8191s", &cls, &wr, &ow, &tty, posture, pols, rhex, ahex) != 8) {
      printf("E bad query\n");
      continue;
    }
    size_t words = (t.policy_count + 63) / 64 + 1;
    uint64_t *set = calloc(words, sizeof(uint64_t));
    if (strcmp(pols, "-") != 0)
      for (char *tok = strtok(pols, ","); tok; tok = strtok(NULL, ",")) {
        unsigned long p = strtoul(tok, NULL, 10);
        if (p < t.policy_count) set[p >> 6] |= 1ULL << (p & 63);
      }
    char res[4096], actor[4096];
    unhex(rhex, res, sizeof res);
    unhex(ahex, actor, sizeof actor);
    struct lookup in = {.policy_set = set, .cls = cls, .resource = res, .actor = actor, .write = wr, .owner = ow,
                        .tty = tty, .posture_block = posture[0] == 'b', .allow_mask = rt_allow_mask(&t, set)};
    struct decision d;
    rt_decide(&t, &in, &d);
    printf("D %d %d %d %d\n", d.rule, d.action, d.posture, d.report);
    free(set);
  }
  free(bytes);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--probe") == 0) return probe();
  if (argc == 2 && strcmp(argv[1], "--decide") == 0) return decide_mode();
  if ((argc != 3 && argc != 5) || strcmp(argv[1], "--socket") != 0 ||
      (argc == 5 && strcmp(argv[3], "--ring-bytes") != 0)) {
    fprintf(stderr, "usage: rtctl-fanotify --socket <path> [--ring-bytes <n>] | --probe | --decide\n");
    return 2;
  }
  if (argc == 5) {
    unsigned long long n = strtoull(argv[4], NULL, 10);
    if (n < 1024 || n > (1ull << 30)) {
      fprintf(stderr, "rtctl-fanotify: --ring-bytes must be between 1024 and 2^30\n");
      return 2;
    }
    RING_SIZE = (size_t)n;
  }
  socket_path = argv[2];
  self_pid = getpid();
  ident_init();
  self_fd_dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
  fd_links_init();
  const char *chunk_env = getenv("RTCTL_FANOTIFY_ANSWER_CHUNK"); /* for measuring against */
  if (chunk_env && *chunk_env) {
    long v = strtol(chunk_env, NULL, 10);
    answer_chunk = v < 1 ? 1 : v > ANSWER_CHUNK ? ANSWER_CHUNK : (int)v;
  }
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  ring = malloc(RING_SIZE);
  cache = calloc(CACHE_SIZE, sizeof *cache);
  ev_end = calloc(EV_SLOTS, sizeof *ev_end);
  if (!ring || !cache || !ev_end) return 1;
  n_readers = choose_readers();
  if (n_readers < 0) return 2;
  /* The kernel gives each event of a read a descriptor, and denies an event it cannot give one: a full read
   * per reader (or of the single loop) must always find room beside the identity cache's descriptors, the
   * kept event-path links and a margin for the sockets. The cache keeps its links only then. */
  long per_read = FAN_READ_BYTES / (long)sizeof(struct fanotify_event_metadata);
  if (!ident_keep_links(per_read * (n_readers > 0 ? n_readers : 1) + (long)FD_LINKS + 1024))
    logf_("per-process /proc links read by name, not kept (RTCTL_FANOTIFY_NO_LINK_FDS, or too low a limit "
          "of open files)");
  /* Non-blocking for the single loop's poll; blocking for readers (see reader_main). */
  fan_fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC | (n_readers > 0 ? 0 : FAN_NONBLOCK),
                         O_RDONLY | O_LARGEFILE | O_CLOEXEC);
  if (fan_fd < 0) {
    logf_("fanotify_init: %s", strerror(errno));
    return 1;
  }
  const char *no_ignore = getenv("RTCTL_FANOTIFY_NO_IGNORE_MARKS"); /* for measuring against */
  ignore_flags = no_ignore && *no_ignore ? 0 : probe_ignore_flags();
  if (!ignore_flags) logf_("inode ignore marks off: every permission event is asked");
  listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(socket_path) >= sizeof addr.sun_path) {
    logf_("socket path too long");
    return 2;
  }
  strcpy(addr.sun_path, socket_path);
  unlink(socket_path);
  if (bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(listen_fd, 8) != 0) {
    logf_("bind %s: %s", socket_path, strerror(errno));
    return 1;
  }
  chmod(socket_path, 0600);
  for (int i = 0; i < MAX_CLIENTS; i++) clients[i].fd = -1;
  pthread_mutex_lock(&state_mu); /* held by this thread except while it waits in poll */
  if (n_readers > 0 && start_readers() != 0) return 1;
  logf_("listening on %s (pid %d, %d reader thread%s)", socket_path, (int)self_pid, n_readers,
        n_readers == 1 ? "" : "s");
  char buf[FAN_READ_BYTES] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
  /* Events go to the control plane in batches: the event connection is written once SEND_BATCH_BYTES are
   * waiting or the oldest unsent event is SEND_DELAY_MS old, so a flood costs one write (and one wake-up of
   * the reader) per batch instead of one per event. */
  uint64_t unsent_since = 0; /* monotonic ms + 1 when the oldest unsent event was seen waiting; 0: none */
  while (!stop_requested) {
    struct pollfd pfd[2 + MAX_CLIENTS];
    int idx[2 + MAX_CLIENTS];
    int n = 0;
    int timeout = 1000;
    uint64_t now_ms = mono_ms();
    int send_events = 1;
    if (ring_tail >= ring_head) {
      unsent_since = 0;
    } else {
      if (unsent_since == 0) unsent_since = now_ms + 1;
      uint64_t waited = now_ms + 1 - unsent_since;
      if (ring_head - ring_tail < SEND_BATCH_BYTES && waited < SEND_DELAY_MS) {
        send_events = 0;
        timeout = (int)(SEND_DELAY_MS - waited);
      }
    }
    /* The first descriptor: the fanotify queue when this thread reads it, else the readers' wake-ups. */
    pfd[n++] = (struct pollfd){.fd = n_readers > 0 ? wake_fd : fan_fd, .events = POLLIN};
    pfd[n++] = (struct pollfd){.fd = listen_fd, .events = POLLIN};
    plan_stream = 0;
    for (int i = 0; i < MAX_CLIENTS; i++) {
      if (clients[i].fd < 0) continue;
      if (clients[i].events) plan_stream = 1;
      short ev = POLLIN;
      if (clients[i].out_len > 0 ||
          (clients[i].events && ((send_events && ring_tail < ring_head) || n_dropped != last_dropped_sent)))
        ev |= POLLOUT;
      idx[n] = i;
      pfd[n++] = (struct pollfd){.fd = clients[i].fd, .events = ev};
    }
    plan_idle = ring_tail >= ring_head;
    plan_batch_wait = !plan_idle && !send_events;
    plan_dropped = n_dropped;
    pthread_mutex_unlock(&state_mu);
    int polled = poll(pfd, (nfds_t)n, timeout);
    int poll_errno = errno;
    pthread_mutex_lock(&state_mu);
    if (polled < 0) {
      if (poll_errno == EINTR) continue;
      logf_("poll: %s", strerror(poll_errno));
      break;
    }
    if (n_readers > 0 && (pfd[0].revents & POLLIN)) {
      uint64_t count;
      if (read(wake_fd, &count, sizeof count) < 0 && errno != EAGAIN) logf_("wake: %s", strerror(errno));
      wake_sent = 0;
    }
    if (n_readers == 0 && (pfd[0].revents & POLLIN)) {
      /* The single loop: this thread reads and decides (read_fanotify takes state_mu per event). */
      pthread_mutex_unlock(&state_mu);
      read_fanotify(buf, sizeof buf);
      pthread_mutex_lock(&state_mu);
    }
    if (pfd[1].revents & POLLIN) {
      int cfd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      int placed = 0;
      for (int i = 0; cfd >= 0 && i < MAX_CLIENTS; i++) {
        if (clients[i].fd < 0) {
          memset(&clients[i], 0, sizeof clients[i]);
          clients[i].fd = cfd;
          placed = 1;
          break;
        }
      }
      if (cfd >= 0 && !placed) close(cfd);
    }
    for (int k = 2; k < n; k++) {
      struct client *c = &clients[idx[k]];
      if (c->fd != pfd[k].fd) continue;
      if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) client_read(c);
      if (c->fd >= 0 && (pfd[k].revents & POLLOUT)) client_write(c);
    }
  }
  logf_("stopping; %" PRIu64 " decisions, %" PRIu64 " reported, %" PRIu64 " dropped", n_decisions, n_reported, n_dropped);
  unlink(socket_path);
  /* With readers, the group goes away at exit (this thread holds state_mu: no reader is deciding); closing
   * it here would leave them polling a closed descriptor. Unanswered events are allowed by the kernel. */
  if (n_readers == 0) close(fan_fd);
  return 0;
}
