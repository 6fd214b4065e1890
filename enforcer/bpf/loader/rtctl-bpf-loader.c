/* rtctl-bpf-loader: the privileged helper of the BPF-LSM data plane. Loads and attaches the programs
 * of rtctl-lsm.bpf.c (or finds them pinned under the pin directory from an earlier run), writes the
 * map entries the TypeScript control plane encodes, flips the active slot, and streams ring buffer
 * events. Protocol: one JSON object per line on stdin (requests) and stdout (replies and events);
 * see docs/bpf-lsm.md. Closing stdin leaves enforcement pinned; {"cmd":"detach"} removes it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "json-out.h"
#include "rtctl-maps.h"
#include "rtctl-addr-maps.h"
#include "rtctl-lsm.skel.h"

#define MAX_LINE (64 << 20)

static const char *pin_dir = "/sys/fs/bpf/rtctl";

static const char *const map_names[] = {
	"rt_config", "rt_index", "rt_rules", "rt_patterns", "rt_sources",
	"rt_workloads", "rt_wnames", "rt_events", "rt_counters", "rt_exe_cache",
	"rt_addr", "rt_addr_wl",
};
#define NMAPS (sizeof(map_names) / sizeof(map_names[0]))
static const char *const prog_names[] = {
	"rt_bprm_check", "rt_file_open", "rt_socket_create", "rt_socket_connect", "rt_capable",
	"rt_socket_sendmsg",
};
#define NPROGS (sizeof(prog_names) / sizeof(prog_names[0]))

static int map_fds[NMAPS];
static struct rtctl_lsm *skel;
static struct bpf_link *links[NPROGS];
static struct ring_buffer *rb;
static int opened;
static int resumed;

static void reply_error(const char *code, const char *message)
{
	printf("{\"ok\":false,\"code\":");
	jwrite_str(stdout, code, 64);
	printf(",\"error\":");
	jwrite_str(stdout, message, 1024);
	printf("}\n");
	fflush(stdout);
}

static int map_fd(const char *name)
{
	for (size_t i = 0; i < NMAPS; i++)
		if (!strcmp(map_names[i], name))
			return map_fds[i];
	return -1;
}

static void pin_path(char *buf, size_t n, const char *kind, const char *name)
{
	snprintf(buf, n, "%s/%s_%s", pin_dir, kind, name);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct rt_event *e = data;
	if (size < sizeof(*e))
		return 0;
	struct timespec rt, bt;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	long long offset = (rt.tv_sec - bt.tv_sec) * 1000000000LL + (rt.tv_nsec - bt.tv_nsec);
	unsigned long long wall = e->time_ns + offset;
	printf("{\"event\":{\"timeNs\":\"%llu\",\"wid\":%u,\"generation\":%u,\"pid\":%u,\"ppid\":%u,"
	       "\"nsPid\":%u,\"nsPpid\":%u,\"uid\":%u,\"rule\":%d,\"cls\":%u,\"kind\":%u,\"action\":%u,"
	       "\"write\":%u,\"errno\":%d,\"syscall\":%d,\"arg0\":%d,\"flags\":%u,\"arg2\":%u,\"arg3\":%u,\"resource\":",
	       wall, e->wid, e->generation, e->pid, e->ppid, e->ns_pid, e->ns_ppid, e->uid, e->rule, e->cls,
	       e->kind, e->action, e->write, e->err, (int)e->syscall, (int)e->arg0, e->flags, e->arg2, e->arg3);
	jwrite_str(stdout, e->resource, RT_PATH_MAX);
	printf(",\"exe\":");
	jwrite_str(stdout, e->exe, RT_PATH_MAX);
	printf(",\"parentExe\":");
	jwrite_str(stdout, e->parent_exe, RT_PATH_MAX);
	printf("}}\n");
	return 0; /* flushed once per ring buffer batch */
}

static int pinned_state_exists(void)
{
	char path[512];
	pin_path(path, sizeof(path), "map", "rt_config");
	return access(path, F_OK) == 0;
}

/* Loads, attaches and pins everything; or reopens what an earlier loader pinned. */
static int do_open(char *err, size_t errn)
{
	char path[512];
	if (opened)
		return 0;
	mkdir(pin_dir, 0700);
	if (pinned_state_exists()) {
		for (size_t i = 0; i < NMAPS; i++) {
			pin_path(path, sizeof(path), "map", map_names[i]);
			map_fds[i] = bpf_obj_get(path);
			if (map_fds[i] < 0) {
				snprintf(err, errn, "open pinned map %s: %s", path, strerror(errno));
				return -1;
			}
		}
		resumed = 1;
	} else {
		skel = rtctl_lsm__open_and_load();
		if (!skel) {
			snprintf(err, errn, "load BPF programs: %s", strerror(errno));
			return -1;
		}
		struct bpf_map *maps[NMAPS] = {
			skel->maps.rt_config, skel->maps.rt_index, skel->maps.rt_rules, skel->maps.rt_patterns,
			skel->maps.rt_sources, skel->maps.rt_workloads, skel->maps.rt_wnames, skel->maps.rt_events,
			skel->maps.rt_counters, skel->maps.rt_exe_cache,
			skel->maps.rt_addr, skel->maps.rt_addr_wl,
		};
		for (size_t i = 0; i < NMAPS; i++) {
			map_fds[i] = bpf_map__fd(maps[i]);
			pin_path(path, sizeof(path), "map", map_names[i]);
			if (bpf_map__pin(maps[i], path)) {
				snprintf(err, errn, "pin map %s: %s", path, strerror(errno));
				return -1;
			}
		}
		/* Enabled before attaching; no workload is in the maps yet, so nothing is decided. */
		struct rt_config cfg = { .enabled = 1 };
		uint32_t zero = 0;
		bpf_map_update_elem(map_fd("rt_config"), &zero, &cfg, BPF_ANY);
		struct bpf_program *progs[NPROGS] = {
			skel->progs.rt_bprm_check, skel->progs.rt_file_open, skel->progs.rt_socket_create,
			skel->progs.rt_socket_connect, skel->progs.rt_capable,
			skel->progs.rt_socket_sendmsg,
		};
		for (size_t i = 0; i < NPROGS; i++) {
			links[i] = bpf_program__attach_lsm(progs[i]);
			if (!links[i]) {
				snprintf(err, errn, "attach %s: %s", prog_names[i], strerror(errno));
				return -1;
			}
			pin_path(path, sizeof(path), "link", prog_names[i]);
			if (bpf_link__pin(links[i], path)) {
				snprintf(err, errn, "pin link %s: %s", path, strerror(errno));
				return -1;
			}
		}
	}
	rb = ring_buffer__new(map_fd("rt_events"), handle_event, NULL, NULL);
	if (!rb) {
		snprintf(err, errn, "open ring buffer: %s", strerror(errno));
		return -1;
	}
	opened = 1;
	return 0;
}

static int hex_decode(const char *hex, void *out, size_t n)
{
	if (strlen(hex) != 2 * n)
		return -1;
	unsigned char *o = out;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		o[i] = (unsigned char)v;
	}
	return 0;
}

static size_t key_size(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.key_size;
}

static size_t value_size(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.value_size;
}

/* Deletes every entry of a slot-keyed hash map whose key starts with `slot`. */
static int clear_slot(int fd, uint32_t slot)
{
	size_t ks = key_size(fd);
	unsigned char *key = calloc(1, ks), *next = calloc(1, ks);
	if (!key || !next)
		return -1;
	size_t cap = 1024, n = 0;
	unsigned char *doomed = malloc(cap * ks);
	int first = 1;
	while (doomed && bpf_map_get_next_key(fd, first ? NULL : key, next) == 0) {
		first = 0;
		memcpy(key, next, ks);
		uint32_t s;
		memcpy(&s, key, sizeof(s));
		if (s != slot)
			continue;
		if (n == cap) {
			cap *= 2;
			unsigned char *g = realloc(doomed, cap * ks);
			if (!g) break;
			doomed = g;
		}
		memcpy(doomed + n * ks, key, ks);
		n++;
	}
	for (size_t i = 0; doomed && i < n; i++)
		bpf_map_delete_elem(fd, doomed + i * ks);
	free(doomed);
	free(key);
	free(next);
	return 0;
}

/* Deletes every block of a slot from the address trie (rt_addr: the slot follows the prefix length). */
static int clear_addr_slot(int fd, uint32_t slot)
{
	struct rt_addr_key key, next;
	size_t cap = 256, n = 0;
	struct rt_addr_key *doomed = malloc(cap * sizeof(*doomed));
	int first = 1;
	while (doomed && bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = 0;
		key = next;
		if (key.slot != slot)
			continue;
		if (n == cap) {
			struct rt_addr_key *g = realloc(doomed, 2 * cap * sizeof(*doomed));
			if (!g)
				break;
			doomed = g;
			cap *= 2;
		}
		doomed[n++] = key;
	}
	for (size_t i = 0; doomed && i < n; i++)
		bpf_map_delete_elem(fd, &doomed[i]);
	free(doomed);
	return 0;
}

/* Zeroes `count` consecutive entries of an array map from `start`: one batch system call where the
 * kernel has them (5.6+), else one update per entry. */
static void zero_range(int fd, uint32_t start, uint32_t count)
{
	size_t vs = value_size(fd);
	uint32_t *keys = calloc(count, sizeof(*keys));
	void *zeros = calloc(count, vs);
	if (keys && zeros) {
		for (uint32_t i = 0; i < count; i++)
			keys[i] = start + i;
		uint32_t n = count;
		if (bpf_map_update_batch(fd, keys, zeros, &n, NULL) == 0 && n == count) {
			free(keys);
			free(zeros);
			return;
		}
	}
	free(keys);
	free(zeros);
	void *zero = calloc(1, vs);
	if (!zero)
		return;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t k = start + i;
		bpf_map_update_elem(fd, &k, zero, BPF_ANY);
	}
	free(zero);
}

static void do_apply(const struct jval *req)
{
	const struct jval *slotv = jget(req, "slot"), *genv = jget(req, "generation"), *wv = jget(req, "workloads"),
			  *rulesv = jget(req, "rules"), *entries = jget(req, "entries");
	if (!slotv || !genv || !wv || !rulesv || !entries || entries->type != J_ARR) {
		reply_error("BPF_BAD_REQUEST", "apply needs slot, generation, workloads, rules, entries");
		return;
	}
	uint32_t slot = (uint32_t)slotv->num & 1;
	uint32_t zero = 0;
	struct rt_config cfg;
	if (bpf_map_lookup_elem(map_fd("rt_config"), &zero, &cfg)) {
		reply_error("BPF_MAP", "read rt_config");
		return;
	}
	if (cfg.active == slot && cfg.workloads[slot] > 0) {
		reply_error("BPF_BAD_REQUEST", "refusing to rewrite the active slot");
		return;
	}
	/* The inactive slot: clear what an older state left there, then fill it. */
	clear_slot(map_fd("rt_index"), slot);
	clear_slot(map_fd("rt_sources"), slot);
	clear_slot(map_fd("rt_workloads"), slot);
	clear_addr_slot(map_fd("rt_addr"), slot);
	zero_range(map_fd("rt_rules"), slot * RT_MAX_RULES, RT_MAX_RULES);
	unsigned char key[1024], val[4096];
	size_t count = 0;
	for (const struct jval *e = entries->child; e; e = e->next) {
		const struct jval *m = e->child, *k = m ? m->next : NULL, *v = k ? k->next : NULL;
		if (!m || !k || !v || m->type != J_STR || k->type != J_STR || v->type != J_STR) {
			reply_error("BPF_BAD_REQUEST", "entry must be [map, keyHex, valueHex]");
			return;
		}
		int fd = map_fd(m->str);
		size_t ks = fd >= 0 ? key_size(fd) : 0, vs = fd >= 0 ? value_size(fd) : 0;
		if (fd < 0 || ks > sizeof(key) || vs > sizeof(val) || hex_decode(k->str, key, ks) ||
		    hex_decode(v->str, val, vs)) {
			char msg[256];
			snprintf(msg, sizeof(msg), "entry %zu for map %s has the wrong size or map", count, m->str);
			reply_error("BPF_BAD_REQUEST", msg);
			return;
		}
		if (bpf_map_update_elem(fd, key, val, BPF_ANY)) {
			char msg[256];
			snprintf(msg, sizeof(msg), "update %s entry %zu: %s", m->str, count, strerror(errno));
			reply_error("BPF_MAP", msg);
			return;
		}
		count++;
	}
	/* One 32-bit word decides which slot is in force: hooks read it once per decision. */
	cfg.generation[slot] = (uint32_t)genv->num;
	cfg.workloads[slot] = (uint32_t)wv->num;
	cfg.enabled = 1;
	cfg.active = slot;
	if (bpf_map_update_elem(map_fd("rt_config"), &zero, &cfg, BPF_ANY)) {
		reply_error("BPF_MAP", "write rt_config");
		return;
	}
	printf("{\"ok\":true,\"generation\":%u,\"slot\":%u,\"entries\":%zu}\n", cfg.generation[slot], slot, count);
	fflush(stdout);
}

static void do_enforced(void)
{
	uint32_t zero = 0;
	struct rt_config cfg;
	if (bpf_map_lookup_elem(map_fd("rt_config"), &zero, &cfg)) {
		reply_error("BPF_MAP", "read rt_config");
		return;
	}
	uint32_t slot = cfg.active & 1;
	printf("{\"ok\":true,\"resumed\":%s,\"active\":%u,\"generation\":%u,\"workloads\":[", resumed ? "true" : "false",
	       slot, cfg.generation[slot]);
	for (uint32_t i = 0; i < cfg.workloads[slot] && i < RT_MAX_WORKLOADS; i++) {
		uint32_t k = slot * RT_MAX_WORKLOADS + i;
		struct rt_wname name;
		if (bpf_map_lookup_elem(map_fd("rt_wnames"), &k, &name))
			continue;
		if (i) putchar(',');
		jwrite_str(stdout, name.key, RT_WNAME_MAX);
	}
	printf("]}\n");
	fflush(stdout);
}

static void do_stats(void)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rt_counters *c = calloc(ncpu > 0 ? ncpu : 1, sizeof(*c));
	uint32_t zero = 0;
	unsigned long long d = 0, ev = 0, dr = 0;
	if (c && bpf_map_lookup_elem(map_fd("rt_counters"), &zero, c) == 0) {
		for (int i = 0; i < ncpu; i++) {
			d += c[i].decisions;
			ev += c[i].events;
			dr += c[i].dropped;
		}
	}
	free(c);
	printf("{\"ok\":true,\"decisions\":%llu,\"events\":%llu,\"dropped\":%llu}\n", d, ev, dr);
	fflush(stdout);
}

/* Removes enforcement: unpins links (the kernel detaches a link when its last reference goes) and maps. */
static void do_detach(void)
{
	char path[512];
	for (size_t i = 0; i < NPROGS; i++) {
		pin_path(path, sizeof(path), "link", prog_names[i]);
		unlink(path);
		if (links[i]) {
			bpf_link__destroy(links[i]);
			links[i] = NULL;
		}
	}
	for (size_t i = 0; i < NMAPS; i++) {
		pin_path(path, sizeof(path), "map", map_names[i]);
		unlink(path);
	}
	rmdir(pin_dir);
	printf("{\"ok\":true,\"detached\":true}\n");
	fflush(stdout);
}

static int handle_line(char *line)
{
	struct jparser js = { .p = line };
	struct jval *req = jparse_value(&js, 0);
	if (!req || req->type != J_OBJ) {
		reply_error("BPF_BAD_REQUEST", js.err ? js.err : "request is not a JSON object");
		jfree(req);
		return 0;
	}
	const struct jval *cmd = jget(req, "cmd");
	int quit = 0;
	char err[1024] = "";
	if (!cmd || cmd->type != J_STR) {
		reply_error("BPF_BAD_REQUEST", "missing cmd");
	} else if (!strcmp(cmd->str, "open")) {
		if (do_open(err, sizeof(err)))
			reply_error("BPF_LOAD", err);
		else
			do_enforced();
	} else if (!opened) {
		reply_error("BPF_NOT_OPEN", "send {\"cmd\":\"open\"} first");
	} else if (!strcmp(cmd->str, "apply")) {
		do_apply(req);
	} else if (!strcmp(cmd->str, "enforced")) {
		do_enforced();
	} else if (!strcmp(cmd->str, "stats")) {
		do_stats();
	} else if (!strcmp(cmd->str, "detach")) {
		do_detach();
		quit = 1;
	} else {
		reply_error("BPF_BAD_REQUEST", "unknown cmd");
	}
	jfree(req);
	return quit;
}

/* --probe: a trial load and attach of the programs, detached at once; one JSON line says whether
 * BPF-LSM works on this kernel (an LSM list naming bpf proves nothing: some kernels refuse). */
static int probe(void)
{
	struct rtctl_lsm *p = rtctl_lsm__open_and_load();
	if (!p) {
		int err = errno;
		printf("{\"ok\":false,\"stage\":\"load\",\"errno\":%d,\"error\":", err);
		jwrite_str(stdout, strerror(err), 256);
		printf("}\n");
		return 1;
	}
	struct bpf_link *link = bpf_program__attach_lsm(p->progs.rt_file_open);
	if (!link) {
		int err = errno;
		printf("{\"ok\":false,\"stage\":\"attach\",\"errno\":%d,\"error\":", err);
		jwrite_str(stdout, strerror(err), 256);
		printf("}\n");
		rtctl_lsm__destroy(p);
		return 1;
	}
	bpf_link__destroy(link);
	rtctl_lsm__destroy(p);
	printf("{\"ok\":true}\n");
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pin-dir") && i + 1 < argc)
			pin_dir = argv[++i];
		else if (!strcmp(argv[i], "--probe")) {
			libbpf_set_print(NULL);
			return probe();
		}
	}
	for (size_t i = 0; i < NMAPS; i++)
		map_fds[i] = -1;
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	char *buf = malloc(MAX_LINE);
	size_t len = 0;
	if (!buf)
		return 2;
	fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	for (;;) {
		struct pollfd fds[2] = { { .fd = 0, .events = POLLIN }, { .fd = -1, .events = POLLIN } };
		if (rb)
			fds[1].fd = ring_buffer__epoll_fd(rb);
		int n = poll(fds, 2, 200);
		if (n < 0 && errno != EINTR)
			break;
		if (rb) {
			ring_buffer__consume(rb);
			fflush(stdout);
		}
		if (fds[0].revents & (POLLIN | POLLHUP)) {
			ssize_t r = read(0, buf + len, MAX_LINE - 1 - len);
			if (r == 0)
				break; /* stdin closed: leave enforcement pinned */
			if (r < 0 && errno != EAGAIN && errno != EINTR)
				break;
			if (r > 0)
				len += r;
			char *start = buf, *nl;
			while ((nl = memchr(start, '\n', buf + len - start))) {
				*nl = 0;
				if (handle_line(start)) {
					free(buf);
					return 0;
				}
				start = nl + 1;
			}
			len = buf + len - start;
			memmove(buf, start, len);
			if (len >= MAX_LINE - 1) {
				reply_error("BPF_BAD_REQUEST", "request line too long");
				len = 0;
			}
		}
	}
	if (rb)
		ring_buffer__consume(rb);
	free(buf);
	return 0;
}
