/* rtctl-net-loader: the privileged helper of the cgroup network data plane. Loads the programs of
 * rtctl-net.bpf.c and pins them and their maps under a pin directory (or reopens what an earlier run pinned,
 * so enforcement and its state survive a restart of the enforcer), attaches them to cgroups with
 * BPF_F_ALLOW_OVERRIDE, writes the map entries the TypeScript control plane encodes, and streams ring buffer
 * events. Protocol: one request per line on stdin, one reply per line on stdout (`ok ...` or `error ...`),
 * events as `event <hex>` lines in between (docs/network.md). `ready <resumed> <mounted> <pidns>`: pidns 1 when
 * the programs keep host rules off containers (the kernel lets them call bpf_get_ns_current_pid_tgid).
 * Closing stdin leaves enforcement in force. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include "rtctl-net-maps.h"

static const char *const map_names[] = { "rtn_workloads", "rtn_proto", "rtn_addr", "rtn_events", "rtn_counters",
					 "rtn_config", "rtn_src" };
#define NMAPS 7
static const char *const prog_names[] = { "rtn_sock_create", "rtn_connect4", "rtn_connect6", "rtn_sendmsg4",
					  "rtn_sendmsg6" };
static const enum bpf_attach_type prog_types[] = { BPF_CGROUP_INET_SOCK_CREATE, BPF_CGROUP_INET4_CONNECT,
						   BPF_CGROUP_INET6_CONNECT, BPF_CGROUP_UDP4_SENDMSG,
						   BPF_CGROUP_UDP6_SENDMSG };
#define NPROGS 5

static const char *pin_dir;
static int map_fds[NMAPS];
static int prog_fds[NPROGS];

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

/* Sets the read-only global `rtn_pidns_check` of an opened object (before load). */
static int set_pidns_check(struct bpf_object *obj, __u32 value)
{
	struct bpf_map *ro = bpf_object__find_map_by_name(obj, ".rodata");
	struct btf *btf = bpf_object__btf(obj);
	if (!ro || !btf) return -1;
	int id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0) return -1;
	const struct btf_type *sec = btf__type_by_id(btf, id);
	const struct btf_var_secinfo *v = btf_var_secinfos(sec);
	size_t size = 0;
	const void *initial = bpf_map__initial_value(ro, &size);
	for (int i = 0; initial && i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);
		if (strcmp(btf__name_by_offset(btf, var->name_off), "rtn_pidns_check") || v->offset + 4 > size) continue;
		char *data = malloc(size);
		if (!data) return -1;
		memcpy(data, initial, size);
		memcpy(data + v->offset, &value, 4);
		int r = bpf_map__set_initial_value(ro, data, size);
		free(data);
		return r;
	}
	return -1;
}

/* Opens and loads the programs: with the host pid namespace check where the kernel lets cgroup programs call
 * bpf_get_ns_current_pid_tgid() (6.10+), else without it (*pidns 0: the caller says so). NULL on failure,
 * with errno of the last load. */
static struct bpf_object *load_object(const char *object, int *pidns, char *err, size_t errn)
{
	/* RTCTL_NET_PIDNS_CHECK=0 loads the programs without the check, as a kernel before 6.10 gets them (the
	 * tests show the window that leaves, and that the plane reports it). */
	const char *force = getenv("RTCTL_NET_PIDNS_CHECK");
	for (int check = force && !strcmp(force, "0") ? 0 : 1; check >= 0; check--) {
		struct bpf_object *obj = bpf_object__open_file(object, NULL);
		if (!obj) { snprintf(err, errn, "open %s: %s", object, strerror(errno)); return NULL; }
		if (set_pidns_check(obj, (__u32)check)) {
			snprintf(err, errn, "%s has no rtn_pidns_check", object);
			bpf_object__close(obj);
			return NULL;
		}
		if (bpf_object__load(obj) == 0) {
			*pidns = check;
			return obj;
		}
		int e = errno;
		snprintf(err, errn, "load %s: %s", object, strerror(e));
		bpf_object__close(obj);
		errno = e;
	}
	return NULL;
}

static int open_state(const char *object, int *resumed, int *pidns, char *err, size_t errn)
{
	char path[512];
	mkdir(pin_dir, 0700);
	pin_path(path, sizeof(path), "prog", prog_names[0]);
	if (access(path, F_OK) == 0) {
		for (int i = 0; i < NMAPS; i++) {
			pin_path(path, sizeof(path), "map", map_names[i]);
			map_fds[i] = bpf_obj_get(path);
			if (map_fds[i] < 0 && errno == ENOENT) {
				/* Pins of an older loader, whose programs lack this map: they cannot be resumed. */
				snprintf(err, errn, "%s holds the programs of an older rtctl-net-loader (no %s): release them "
					 "(rtctl enforcer stop, or remove the folder) so that this one loads its own",
					 pin_dir, map_names[i]);
				return -1;
			}
			if (map_fds[i] < 0) { snprintf(err, errn, "open pinned %s: %s", path, strerror(errno)); return -1; }
		}
		for (int i = 0; i < NPROGS; i++) {
			pin_path(path, sizeof(path), "prog", prog_names[i]);
			prog_fds[i] = bpf_obj_get(path);
			if (prog_fds[i] < 0) { snprintf(err, errn, "open pinned %s: %s", path, strerror(errno)); return -1; }
		}
		struct rtn_config config = {};
		__u32 zero = 0;
		*pidns = bpf_map_lookup_elem(map_fds[find_map("rtn_config")], &zero, &config) == 0 && config.pidns_check;
		*resumed = 1;
		return 0;
	}
	struct bpf_object *obj = load_object(object, pidns, err, errn);
	if (!obj) return -1;
	for (int i = 0; i < NMAPS; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(obj, map_names[i]);
		if (!m) { snprintf(err, errn, "no map %s", map_names[i]); return -1; }
		pin_path(path, sizeof(path), "map", map_names[i]);
		if (bpf_map__pin(m, path)) { snprintf(err, errn, "pin %s: %s", path, strerror(errno)); return -1; }
		map_fds[i] = dup(bpf_map__fd(m));
	}
	for (int i = 0; i < NPROGS; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, prog_names[i]);
		if (!p) { snprintf(err, errn, "no program %s", prog_names[i]); return -1; }
		pin_path(path, sizeof(path), "prog", prog_names[i]);
		if (bpf_program__pin(p, path)) { snprintf(err, errn, "pin %s: %s", path, strerror(errno)); return -1; }
		prog_fds[i] = dup(bpf_program__fd(p));
	}
	/* Recorded for a restarted loader (the control plane keeps the field when it writes the entry). */
	struct rtn_config config = { .pidns_check = (__u32)*pidns };
	__u32 zero = 0;
	if (bpf_map_update_elem(map_fds[find_map("rtn_config")], &zero, &config, BPF_ANY)) {
		snprintf(err, errn, "rtn_config: %s", strerror(errno));
		return -1;
	}
	*resumed = 0;
	return 0;
}

static int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	const unsigned char *b = data;
	printf("event ");
	for (size_t i = 0; i < size; i++) printf("%02x", b[i]);
	printf("\n");
	fflush(stdout);
	return 0;
}

static void reply_errno(const char *what)
{
	printf("error %s: %s\n", what, strerror(errno));
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
		if (bpf_obj_get_info_by_fd(map_fds[m], &info, &len)) { reply_errno("map info"); return; }
		unsigned char key[512], value[4096];
		if (info.key_size > sizeof(key) || info.value_size > sizeof(value) ||
		    unhex(argv[2], key, info.key_size) || (update && unhex(argv[3], value, info.value_size))) {
			printf("error %s: key or value is not %u/%u bytes of hex\n", argv[1], info.key_size, info.value_size);
			return;
		}
		if (update ? bpf_map_update_elem(map_fds[m], key, value, BPF_ANY)
			   : (bpf_map_delete_elem(map_fds[m], key) && errno != ENOENT)) {
			reply_errno(argv[1]);
			return;
		}
		printf("ok\n");
	} else if (!strcmp(argv[0], "clear") && argc == 2 && find_map(argv[1]) >= 0) {
		int fd = map_fds[find_map(argv[1])];
		unsigned char key[256], next[256];
		int n = 0;
		while (bpf_map_get_next_key(fd, NULL, next) == 0) {
			memcpy(key, next, sizeof(key));
			if (bpf_map_delete_elem(fd, key)) { reply_errno("clear"); return; }
			n++;
		}
		printf("ok %d\n", n);
	} else if ((!strcmp(argv[0], "attach") || !strcmp(argv[0], "detach")) && argc == 2) {
		int cg = open(argv[1], O_RDONLY | O_DIRECTORY);
		if (cg < 0) { reply_errno(argv[1]); return; }
		int attach = argv[0][0] == 'a';
		for (int i = 0; i < NPROGS; i++) {
			int r = attach ? bpf_prog_attach(prog_fds[i], cg, prog_types[i], BPF_F_ALLOW_OVERRIDE)
				       : bpf_prog_detach2(prog_fds[i], cg, prog_types[i]);
			if (r && !(!attach && errno == ENOENT)) {
				printf("error %s %s %s: %s\n", argv[0], prog_names[i], argv[1], strerror(errno));
				close(cg);
				return;
			}
		}
		close(cg);
		printf("ok\n");
	} else if (!strcmp(argv[0], "query") && argc == 2) {
		/* How many programs of each type are attached to the cgroup (itself, not inherited). */
		int cg = open(argv[1], O_RDONLY | O_DIRECTORY);
		if (cg < 0) { reply_errno(argv[1]); return; }
		printf("ok");
		for (int i = 0; i < NPROGS; i++) {
			__u32 ids[8], cnt = 8, flags = 0;
			if (bpf_prog_query(cg, prog_types[i], 0, &flags, ids, &cnt)) cnt = 0;
			printf(" %u", cnt);
		}
		printf("\n");
		close(cg);
	} else if (!strcmp(argv[0], "stats")) {
		int ncpu = libbpf_num_possible_cpus();
		unsigned long long total[RTN_COUNTERS] = { 0 };
		__u64 *values = calloc(ncpu > 0 ? ncpu : 1, sizeof(__u64));
		for (__u32 k = 0; k < RTN_COUNTERS && values; k++) {
			if (bpf_map_lookup_elem(map_fds[find_map("rtn_counters")], &k, values) == 0)
				for (int c = 0; c < ncpu; c++) total[k] += values[c];
		}
		free(values);
		printf("ok %llu %llu %llu %llu\n", total[0], total[1], total[2], total[3]);
	} else if (!strcmp(argv[0], "unpin")) {
		char path[512];
		for (int i = 0; i < NPROGS; i++) { pin_path(path, sizeof(path), "prog", prog_names[i]); unlink(path); }
		for (int i = 0; i < NMAPS; i++) { pin_path(path, sizeof(path), "map", map_names[i]); unlink(path); }
		rmdir(pin_dir);
		printf("ok\n");
	} else {
		printf("error unknown request %s\n", argv[0]);
	}
}

/* --probe <cgroup2 mount>: a trial load of the programs and an attach of each to a cgroup the probe creates
 * (and removes); one JSON line says whether it worked and, if not, at which step. */
static int probe(const char *object, const char *mount)
{
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/rtctl-probe-network-%d", mount, (int)getpid());
	char why[512];
	int pidns = 0;
	struct bpf_object *obj = load_object(object, &pidns, why, sizeof(why));
	if (!obj) {
		printf("{\"network\":false,\"hostPidNamespace\":false,\"reason\":\"load: %s\"}\n", strerror(errno));
		return 1;
	}
	if (mkdir(dir, 0700)) {
		printf("{\"network\":false,\"reason\":\"create a probe cgroup under %s: %s\"}\n", mount, strerror(errno));
		return 1;
	}
	int cg = open(dir, O_RDONLY | O_DIRECTORY);
	int ok = cg >= 0;
	const char *failed = "";
	int err = 0;
	for (int i = 0; ok && i < NPROGS; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, prog_names[i]);
		if (!p || bpf_prog_attach(bpf_program__fd(p), cg, prog_types[i], BPF_F_ALLOW_OVERRIDE)) {
			ok = 0;
			failed = prog_names[i];
			err = errno;
			break;
		}
		bpf_prog_detach2(bpf_program__fd(p), cg, prog_types[i]);
	}
	if (cg >= 0) close(cg);
	rmdir(dir);
	const char *host = pidns ? "host rules keep to the host pid namespace (bpf_get_ns_current_pid_tgid): a container "
				   "is not decided by them before the enforcer registers it"
				 : "this kernel refuses bpf_get_ns_current_pid_tgid to cgroup programs (allowed from 6.10): "
				   "host rules reach a container until the enforcer registers it";
	const char *process = pidns ? "fromSource and pts on network rules are decided (the programs see the acting executable and its terminal)"
				    : "fromSource and pts on network rules are not enforced (the programs cannot call bpf_get_current_task_btf)";
	if (ok)
		printf("{\"network\":true,\"hostPidNamespace\":%s,\"reason\":\"loaded cgroup sock_create, connect4/6, sendmsg4/6 and attached each to a probe cgroup; denials return EPERM; %s; %s\"}\n",
		       pidns ? "true" : "false", host, process);
	else
		printf("{\"network\":false,\"hostPidNamespace\":%s,\"reason\":\"attach %s: %s\"}\n", pidns ? "true" : "false",
		       failed, strerror(err));
	return ok ? 0 : 1;
}

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/* The pin directory's parent must be on a bpffs (pins elsewhere fail). Where it is not (a node whose init
 * system did not mount /sys/fs/bpf, or a container given an empty host folder), mount one there if this
 * process may (CAP_SYS_ADMIN in the mount namespace's owner); the caller is told (`ready <resumed> 1`). */
static int ensure_bpffs(int *mounted, char *err, size_t errn)
{
	char parent[512];
	struct statfs fs;
	snprintf(parent, sizeof(parent), "%s", pin_dir);
	dirname(parent);
	*mounted = 0;
	if (statfs(parent, &fs)) { snprintf(err, errn, "%s: %s", parent, strerror(errno)); return -1; }
	if ((unsigned long)fs.f_type == BPF_FS_MAGIC) return 0;
	if (mount("bpf", parent, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700")) {
		snprintf(err, errn, "%s is not a bpffs and mounting one there failed: %s", parent, strerror(errno));
		return -1;
	}
	*mounted = 1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--probe")) {
		libbpf_set_print(NULL);
		return probe(argv[2], argv[3]);
	}
	if (argc != 3) {
		fprintf(stderr, "usage: rtctl-net-loader <rtctl-net.bpf.o> <pin directory>\n");
		return 2;
	}
	pin_dir = argv[2];
	char err[1024];
	int resumed = 0, mounted = 0, pidns = 0;
	libbpf_set_print(NULL);
	if (ensure_bpffs(&mounted, err, sizeof(err))) {
		printf("error %s\n", err);
		return 1;
	}
	if (open_state(argv[1], &resumed, &pidns, err, sizeof(err))) {
		printf("error %s\n", err);
		return 1;
	}
	struct ring_buffer *rb = ring_buffer__new(map_fds[find_map("rtn_events")], on_event, NULL, NULL);
	if (!rb) {
		printf("error ring buffer: %s\n", strerror(errno));
		return 1;
	}
	printf("ready %d %d %d\n", resumed, mounted, pidns);
	fflush(stdout);
	static char line[1 << 16];
	size_t used = 0;
	struct pollfd fds[2] = { { .fd = 0, .events = POLLIN }, { .fd = ring_buffer__epoll_fd(rb), .events = POLLIN } };
	for (;;) {
		if (poll(fds, 2, 1000) < 0 && errno != EINTR) break;
		ring_buffer__consume(rb);
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
