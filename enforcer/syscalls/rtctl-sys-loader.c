/* rtctl-sys-loader: the privileged helper of the system call audit plane. Loads the programs of rtctl-sys.bpf.c,
 * attaches them to their BTF tracepoints and pins the links and maps under a pin directory (or reopens what an
 * earlier run pinned, so the audit outlives a restart of the enforcer), writes the map entries the TypeScript
 * control plane encodes, and streams ring buffer events. Protocol (as the network loader's): one request per
 * line on stdin, one reply per line on stdout (`ok ...` or `error ...`), events as `event <hex>` lines in
 * between. Closing stdin leaves the programs attached.
 *
 * The deny part (the rts_lsm_* programs on LSM hooks) is loaded only where the kernel takes LSM programs: a
 * trial load and attach; where it fails (no BPF LSM active: EPERM or EINVAL) the audit part runs alone and
 * `lsm` says why. A hook the kernel does not have is left out (its bit stays clear). */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include "rtctl-sys-maps.h"

static const char *const map_names[] = { "rts_nrs",	   "rts_workloads", "rts_watch",  "rts_exe",
					 "rts_events",	   "rts_counters",  "rts_decide", "rts_kpaths",
					 "rts_deny",	   "rts_config",    "rts_compat" };
#define NMAPS 11
/* The LSM hooks of the deny part, in RTS_HOOK_* order; the program of hook h is rts_lsm_<h>. */
static const char *const lsm_hooks[RTS_HOOKS] = {
	"file_open",	     "path_unlink",	 "path_rmdir",	     "path_mkdir",	 "path_rename",
	"path_chmod",	     "path_chown",	 "path_link",	     "path_symlink",	 "path_mknod",
	"path_truncate",     "path_chroot",	 "sb_mount",	     "sb_umount",	 "sb_pivotroot",
	"ptrace_access_check", "ptrace_traceme", "kernel_read_file", "kernel_load_data", "task_fix_setuid",
	"task_fix_setgid",   "task_kill",	 "socket_create",    "socket_connect",	 "socket_bind",
	"socket_listen",     "settime",		 "bpf",		     "bprm_check_security",
};
/* Hooks whose program is attached (RTS_HOOK_* bits), and why the deny part is not there when it is not. */
static unsigned long long lsm_attached;
static char lsm_reason[1024] = "not tried";
static const char *const prog_names[] = { "rts_sys_enter", "rts_sys_exit", "rts_exec", "rts_fork", "rts_exit" };
#define NPROGS 5
/* rts_sys_enter and rts_sys_exit (prog_names[0], [1]) run for every system call of the node once attached: they
 * are attached only while some workload watches a call (`enable`/`disable`); the others are attached at load. */
#define NDEMAND 2

static const char *pin_dir;
static int map_fds[NMAPS];
static int demand_fds[NDEMAND] = { -1, -1 };

static void pin_path(char *buf, size_t n, const char *kind, const char *name)
{
	snprintf(buf, n, "%s/%s_%s", pin_dir, kind, name);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	return -1;
}

static int unhex(const char *s, unsigned char *out, size_t n)
{
	if (strlen(s) != 2 * n) return -1;
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0) return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

static int find_map(const char *name)
{
	for (int i = 0; i < NMAPS; i++)
		if (!strcmp(map_names[i], name)) return i;
	return -1;
}

static struct bpf_program *lsm_program(struct bpf_object *obj, int h)
{
	char name[64];
	snprintf(name, sizeof(name), "rts_lsm_%s", lsm_hooks[h]);
	return bpf_object__find_program_by_name(obj, name);
}

/* Opens the object with the deny part (with_lsm: the programs of hooks the kernel has) or without it. */
static struct bpf_object *open_object(const char *object, int with_lsm, unsigned long long *wanted)
{
	struct bpf_object *obj = bpf_object__open_file(object, NULL);
	if (!obj) return NULL;
	*wanted = 0;
	for (int h = 0; h < RTS_HOOKS; h++) {
		struct bpf_program *p = lsm_program(obj, h);
		if (!p) continue;
		int have = with_lsm && libbpf_find_vmlinux_btf_id(lsm_hooks[h], BPF_LSM_MAC) > 0;
		bpf_program__set_autoload(p, have);
		if (have) *wanted |= 1ULL << h;
	}
	return obj;
}

/* Attaches the loaded LSM programs (pinning their links with `pin`); on a failure, none stays attached. */
static void attach_lsm(struct bpf_object *obj, unsigned long long wanted, int pin)
{
	char path[512];
	struct bpf_link *links[RTS_HOOKS] = { 0 };
	lsm_attached = 0;
	if (!wanted) return;
	for (int h = 0; h < RTS_HOOKS; h++) {
		if (!(wanted & (1ULL << h))) continue;
		links[h] = bpf_program__attach(lsm_program(obj, h));
		if (!links[h]) {
			snprintf(lsm_reason, sizeof(lsm_reason), "attach lsm/%s: %s", lsm_hooks[h], strerror(errno));
			for (int k = 0; k < h; k++) if (links[k]) bpf_link__destroy(links[k]);
			return;
		}
	}
	for (int h = 0; h < RTS_HOOKS; h++) {
		if (!links[h]) continue;
		if (pin) {
			snprintf(path, sizeof(path), "%s/link_rts_lsm_%s", pin_dir, lsm_hooks[h]);
			if (bpf_link__pin(links[h], path)) {
				snprintf(lsm_reason, sizeof(lsm_reason), "pin %s: %s", path, strerror(errno));
				for (int k = 0; k < RTS_HOOKS; k++) {
					if (!links[k]) continue;
					if (k < h) bpf_link__unpin(links[k]);
					bpf_link__destroy(links[k]);
				}
				lsm_attached = 0;
				return;
			}
		}
		lsm_attached |= 1ULL << h;
	}
	snprintf(lsm_reason, sizeof(lsm_reason), "lsm programs loaded and attached");
}

/* Loads and attaches the programs; with `pin`, pins maps and links under pin_dir. The deny part by trial. */
static int load(const char *object, int pin, char *err, size_t errn)
{
	char path[512];
	unsigned long long wanted = 0;
	struct bpf_object *obj = open_object(object, 1, &wanted);
	if (!obj) { snprintf(err, errn, "open %s: %s", object, strerror(errno)); return -1; }
	if (bpf_object__load(obj)) {
		if (!wanted) { snprintf(err, errn, "load %s: %s", object, strerror(errno)); return -1; }
		snprintf(lsm_reason, sizeof(lsm_reason), "lsm programs do not load: %s", strerror(errno));
		bpf_object__close(obj);
		obj = open_object(object, 0, &wanted);
		if (!obj) { snprintf(err, errn, "open %s: %s", object, strerror(errno)); return -1; }
		if (bpf_object__load(obj)) { snprintf(err, errn, "load %s: %s", object, strerror(errno)); return -1; }
	} else if (!wanted) {
		snprintf(lsm_reason, sizeof(lsm_reason), "the kernel has none of the lsm hooks");
	}
	for (int i = 0; i < NPROGS; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, prog_names[i]);
		if (!p) { snprintf(err, errn, "no program %s", prog_names[i]); return -1; }
		if (i < NDEMAND) {
			demand_fds[i] = dup(bpf_program__fd(p));
			if (pin) {
				pin_path(path, sizeof(path), "prog", prog_names[i]);
				if (bpf_program__pin(p, path)) { snprintf(err, errn, "pin %s: %s", path, strerror(errno)); return -1; }
			}
			continue;
		}
		struct bpf_link *link = bpf_program__attach(p);
		if (!link) { snprintf(err, errn, "attach %s: %s", prog_names[i], strerror(errno)); return -1; }
		if (pin) {
			pin_path(path, sizeof(path), "link", prog_names[i]);
			if (bpf_link__pin(link, path)) { snprintf(err, errn, "pin %s: %s", path, strerror(errno)); return -1; }
		}
	}
	for (int i = 0; i < NMAPS; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, map_names[i]);
		if (!m) { snprintf(err, errn, "no map %s", map_names[i]); return -1; }
		if (pin) {
			pin_path(path, sizeof(path), "map", map_names[i]);
			if (bpf_map__pin(m, path)) { snprintf(err, errn, "pin %s: %s", path, strerror(errno)); return -1; }
		}
		map_fds[i] = dup(bpf_map__fd(m));
	}
	attach_lsm(obj, wanted, pin);
	return 0;
}

static int open_state(const char *object, int *resumed, char *err, size_t errn)
{
	char path[512];
	mkdir(pin_dir, 0700);
	pin_path(path, sizeof(path), "prog", prog_names[0]);
	if (access(path, F_OK) == 0) {
		for (int i = 0; i < NDEMAND; i++) {
			pin_path(path, sizeof(path), "prog", prog_names[i]);
			demand_fds[i] = bpf_obj_get(path);
			if (demand_fds[i] < 0) {
				snprintf(err, errn, "open pinned %s: %s (pinned by an older loader: stop the enforcer first)",
					 path, strerror(errno));
				return -1;
			}
		}
		for (int i = 0; i < NMAPS; i++) {
			pin_path(path, sizeof(path), "map", map_names[i]);
			map_fds[i] = bpf_obj_get(path);
			if (map_fds[i] < 0) { snprintf(err, errn, "open pinned %s: %s", path, strerror(errno)); return -1; }
		}
		*resumed = 1;
		lsm_attached = 0;
		for (int h = 0; h < RTS_HOOKS; h++) {
			snprintf(path, sizeof(path), "%s/link_rts_lsm_%s", pin_dir, lsm_hooks[h]);
			if (access(path, F_OK) == 0) lsm_attached |= 1ULL << h;
		}
		snprintf(lsm_reason, sizeof(lsm_reason), lsm_attached ? "lsm programs pinned by an earlier run"
								       : "an earlier run pinned no lsm programs");
		return 0;
	}
	*resumed = 0;
	return load(object, 1, err, errn);
}

/* One `event <hex>` line per event, written in one call (the stream is flushed after each ring buffer batch). */
static int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	static const char digits[] = "0123456789abcdef";
	static char line[8 + 2 * sizeof(struct rts_event) + 2];
	const unsigned char *b = data;
	if (size > sizeof(struct rts_event)) size = sizeof(struct rts_event);
	memcpy(line, "event ", 6);
	size_t n = 6;
	for (size_t i = 0; i < size; i++) {
		line[n++] = digits[b[i] >> 4];
		line[n++] = digits[b[i] & 15];
	}
	line[n++] = '\n';
	fwrite(line, 1, n, stdout);
	return 0;
}

static void handle(char *line)
{
	char *argv[4] = { 0 };
	int argc = 0;
	for (char *tok = strtok(line, " \n"); tok && argc < 4; tok = strtok(NULL, " \n")) argv[argc++] = tok;
	if (argc == 0) return;
	if (!strcmp(argv[0], "update") || !strcmp(argv[0], "delete")) {
		int update = argv[0][0] == 'u';
		int m = argc >= 3 ? find_map(argv[1]) : -1;
		if (m < 0 || (update && argc < 4)) { printf("error usage: update <map> <key> <value> | delete <map> <key>\n"); return; }
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		if (bpf_obj_get_info_by_fd(map_fds[m], &info, &len)) { printf("error map info: %s\n", strerror(errno)); return; }
		unsigned char key[512], value[1024];
		if (info.key_size > sizeof(key) || info.value_size > sizeof(value) ||
		    unhex(argv[2], key, info.key_size) || (update && unhex(argv[3], value, info.value_size))) {
			printf("error %s: key or value is not %u/%u bytes of hex\n", argv[1], info.key_size, info.value_size);
			return;
		}
		if (update ? bpf_map_update_elem(map_fds[m], key, value, BPF_ANY)
			   : (bpf_map_delete_elem(map_fds[m], key) && errno != ENOENT)) {
			printf("error %s: %s\n", argv[1], strerror(errno));
			return;
		}
		printf("ok\n");
	} else if (!strcmp(argv[0], "stats")) {
		int ncpu = libbpf_num_possible_cpus();
		unsigned long long total[RTS_COUNTERS] = { 0 };
		__u64 *values = calloc(ncpu > 0 ? ncpu : 1, sizeof(__u64));
		for (__u32 k = 0; k < RTS_COUNTERS && values; k++) {
			if (bpf_map_lookup_elem(map_fds[find_map("rts_counters")], &k, values) == 0)
				for (int c = 0; c < ncpu; c++) total[k] += values[c];
		}
		free(values);
		printf("ok %llu %llu %llu %llu\n", total[0], total[1], total[2], total[3]);
	} else if (!strcmp(argv[0], "lsm")) {
		/* The hooks the deny part has attached (RTS_HOOK_* bits, decimal), and what happened. */
		printf("ok %llu %s\n", lsm_attached, lsm_reason);
	} else if (!strcmp(argv[0], "enable") || !strcmp(argv[0], "disable") || !strcmp(argv[0], "enabled")) {
		/* `enable [exit]` attaches (pins the link of) rts_sys_enter, and rts_sys_exit too with `exit` (first: a
		 * call sys_enter leaves to its hooks is reported at its exit; it stays attached until `disable`);
		 * `disable` detaches both; `enabled` says whether sys_enter is attached. */
		char path[512];
		pin_path(path, sizeof(path), "link", prog_names[0]);
		int attached = access(path, F_OK) == 0;
		if (!strcmp(argv[0], "enabled")) {
			printf("ok %d\n", attached);
		} else if (argv[0][0] == 'e') {
			int with_exit = argc >= 2 && !strcmp(argv[1], "exit");
			for (int i = NDEMAND - 1; i >= 0; i--) {
				if (i == 1 && !with_exit) continue;
				pin_path(path, sizeof(path), "link", prog_names[i]);
				if (access(path, F_OK) == 0) continue;
				int fd = bpf_raw_tracepoint_open(NULL, demand_fds[i]);
				if (fd < 0) { printf("error attach %s: %s\n", prog_names[i], strerror(errno)); return; }
				if (bpf_obj_pin(fd, path)) { printf("error pin %s: %s\n", path, strerror(errno)); close(fd); return; }
				close(fd);
			}
			printf("ok\n");
		} else {
			for (int i = 0; i < NDEMAND; i++) {
				pin_path(path, sizeof(path), "link", prog_names[i]);
				if (access(path, F_OK) == 0 && unlink(path)) {
					printf("error unpin %s: %s\n", path, strerror(errno));
					return;
				}
			}
			printf("ok\n");
		}
	} else if (!strcmp(argv[0], "unpin")) {
		char path[512];
		for (int i = 0; i < NPROGS; i++) { pin_path(path, sizeof(path), "link", prog_names[i]); unlink(path); }
		for (int h = 0; h < RTS_HOOKS; h++) {
			snprintf(path, sizeof(path), "%s/link_rts_lsm_%s", pin_dir, lsm_hooks[h]);
			unlink(path);
		}
		for (int i = 0; i < NDEMAND; i++) { pin_path(path, sizeof(path), "prog", prog_names[i]); unlink(path); }
		for (int i = 0; i < NMAPS; i++) { pin_path(path, sizeof(path), "map", map_names[i]); unlink(path); }
		rmdir(pin_dir);
		printf("ok\n");
	} else {
		printf("error unknown request %s\n", argv[0]);
	}
}

/* --probe: a trial load of the programs and an attach of each to its tracepoint (detached again on exit); one
 * JSON line says whether it worked and, if not, at which step. */
static int probe(const char *object)
{
	char err[1024];
	int fd = -1, fd2 = -1;
	if (load(object, 0, err, sizeof(err)) ||
	    ((fd = bpf_raw_tracepoint_open(NULL, demand_fds[0])) < 0 &&
	     snprintf(err, sizeof(err), "attach %s: %s", prog_names[0], strerror(errno)) > 0) ||
	    ((fd2 = bpf_raw_tracepoint_open(NULL, demand_fds[1])) < 0 &&
	     snprintf(err, sizeof(err), "attach %s: %s", prog_names[1], strerror(errno)) > 0)) {
		printf("{\"syscalls\":false,\"reason\":\"");
		for (const char *c = err; *c; c++) if (*c != '"' && *c != '\\') putchar(*c);
		printf("\"}\n");
		return 1;
	}
	int hooks = 0;
	for (int h = 0; h < RTS_HOOKS; h++) hooks += (lsm_attached >> h) & 1;
	printf("{\"syscalls\":true,\"reason\":\"loaded and attached tp_btf sys_enter, sys_exit, sched_process_exec, sched_process_fork and sched_process_exit\",\"deny\":%s,\"hooks\":%d,\"lsm\":\"",
	       lsm_attached ? "true" : "false", hooks);
	for (const char *c = lsm_reason; *c; c++) if (*c != '"' && *c != '\\') putchar(*c);
	printf("\"}\n");
	return 0;
}

/* RTCTL_SYS_LOADER_DEBUG=1: libbpf's messages (the verifier's log of a program that does not load) on stderr. */
static int print_stderr(enum libbpf_print_level level, const char *format, va_list args)
{
	(void)level;
	return vfprintf(stderr, format, args);
}

int main(int argc, char **argv)
{
	libbpf_set_print(getenv("RTCTL_SYS_LOADER_DEBUG") ? print_stderr : NULL);
	if (argc == 3 && !strcmp(argv[1], "--probe")) return probe(argv[2]);
	if (argc != 3) {
		fprintf(stderr, "usage: rtctl-sys-loader <rtctl-sys.bpf.o> <pin directory> | --probe <rtctl-sys.bpf.o>\n");
		return 2;
	}
	pin_dir = argv[2];
	char err[1024];
	int resumed = 0;
	if (open_state(argv[1], &resumed, err, sizeof(err))) {
		printf("error %s\n", err);
		return 1;
	}
	struct ring_buffer *rb = ring_buffer__new(map_fds[find_map("rts_events")], on_event, NULL, NULL);
	if (!rb) {
		printf("error ring buffer: %s\n", strerror(errno));
		return 1;
	}
	printf("ready %d\n", resumed);
	fflush(stdout);
	static char line[1 << 16];
	size_t used = 0;
	struct pollfd fds[2] = { { .fd = 0, .events = POLLIN }, { .fd = ring_buffer__epoll_fd(rb), .events = POLLIN } };
	for (;;) {
		if (poll(fds, 2, 1000) < 0 && errno != EINTR) break;
		ring_buffer__consume(rb);
		fflush(stdout);
		if (fds[0].revents & (POLLIN | POLLHUP)) {
			ssize_t n = read(0, line + used, sizeof(line) - 1 - used);
			if (n <= 0) break;
			used += (size_t)n;
			line[used] = 0;
			char *start = line, *nl;
			while ((nl = strchr(start, '\n'))) {
				*nl = 0;
				handle(start);
				fflush(stdout);
				start = nl + 1;
			}
			used = strlen(start);
			memmove(line, start, used);
			if (used == sizeof(line) - 1) { printf("error line too long\n"); fflush(stdout); used = 0; }
		}
	}
	ring_buffer__consume(rb);
	return 0;
}
