/* The identity of the process behind a reported fanotify event (docs/enforcer.md "Reports"), with as few
 * /proc reads per event as the kernel allows.
 *
 * What can change while a process lives (its parent on reparenting, its real uid on setuid/exec) is read
 * fresh for every event: from PIDFD_GET_INFO on a pidfd kept for the process (Linux 6.13+, no text to
 * format or parse), else from one read of /proc/<pid>/status. What cannot change while it lives (its pid in
 * its own pid namespace, and its parent's) is cached per process. A cache entry holds a pidfd of the process
 * it describes: a pidfd becomes readable once its process exits, so an entry whose pid was since reused by
 * another process is never taken for the new one. Nothing cached depends on the executable, so an exec in
 * the same pid keeps every cached fact right (the executable itself is read per event by the caller).
 *
 * An entry also keeps its process's /proc/<pid> directory open (O_PATH): the links and files the caller
 * reads per event (exe, cwd, ns/mnt, syscall) are read relative to it, one path component instead of a walk
 * from /proc, and from their second read on the links exe, cwd and ns/mnt through descriptors of the links
 * themselves (ident_keep_links), which the kernel resolves afresh at each read. A read through either is
 * always that process's and fails once it is gone (its pid may then be another's): the read then goes by
 * path, to the process that holds the pid now. */
#ifndef RTCTL_PROC_IDENTITY_H
#define RTCTL_PROC_IDENTITY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_identity {
  int pid;          /* host pid (the helper's namespace) */
  int ppid;         /* parent's host pid; 0 when unknown */
  int nspid;        /* pid in the process's own pid namespace */
  int parent_nspid; /* the parent's pid in its own pid namespace (ppid when unknown) */
  int uid;          /* real uid; -1 when unknown */
};

struct proc_identity_stats {
  uint64_t hits;          /* events answered from a cached entry */
  uint64_t misses;        /* entries (re)built: a new process, or one whose pid was reused */
  uint64_t status_reads;  /* reads of /proc/<pid>/status */
  uint64_t dir_reads;     /* links read through a kept /proc/<pid> directory */
  uint64_t link_reads;    /* links read through a kept descriptor of the link itself */
  int pidfd_info;         /* 1 when PIDFD_GET_INFO works on this kernel */
};

/* Sets up the cache (raises the open-file limit for the pidfds it keeps). */
void ident_init(void);

/* Keeps the links of each entry (exe, cwd, ns/mnt; three more descriptors per entry) when the open-file
 * limit leaves room for every entry's descriptors beside `others` descriptors the caller may hold at once,
 * and RTCTL_FANOTIFY_NO_LINK_FDS is not set. Returns 1 when they are kept. */
int ident_keep_links(long others);

/* The identity of `pid` (a live process, blocked in a permission event), with its parent's nspid when
 * `want_parent` is set. Fields that cannot be read keep their "unknown" values. */
void ident_get(int pid, int want_parent, struct proc_identity *out);

/* The link /proc/<pid>/<name> (`exe`, `cwd`, `ns/mnt`) of the live process `pid`, NUL-terminated: through
 * the entry's directory when one is held for `pid`, else (or when that process is gone) by path. Returns the
 * length, -1 when it cannot be read. */
ssize_t ident_readlink(int pid, const char *name, char *buf, size_t len);

/* The file /proc/<pid>/<name> (`comm`, `stat`, `status`), NUL-terminated, the same way. */
ssize_t ident_read(int pid, const char *name, char *buf, size_t len);

/* /proc/<pid>/syscall, through a descriptor kept with the entry of `pid`, else the same way. */
ssize_t ident_read_syscall(int pid, char *buf, size_t len);

/* Forgets every cached entry (closes their pidfds). */
void ident_reset(void);

struct proc_identity_stats ident_stats(void);

#endif
