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
	"rt_dcache", "rt_epoch", "rt_addr", "rt_addr_wl",
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
static uint64_t last_parse_us;   /* time to parse the request being handled */
static uint64_t last_receive_us; /* from its first bytes read to its newline */
static int no_decision_cache; /* --no-decision-cache: rt_config.cache_off (for measuring) */
static uint32_t decision_cache_slots; /* --decision-cache-slots N: rt_config.cache_slots (tests only; 0: all) */

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

static int read_map_sizes(char *err, size_t errn);

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
			skel->maps.rt_dcache, skel->maps.rt_epoch, skel->maps.rt_addr, skel->maps.rt_addr_wl,
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
		struct rt_config cfg = { .enabled = 1, .cache_off = (uint32_t)no_decision_cache,
					  .cache_slots = decision_cache_slots };
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
	if (read_map_sizes(err, errn))
		return -1;
	rb = ring_buffer__new(map_fd("rt_events"), handle_event, NULL, NULL);
	if (!rb) {
		snprintf(err, errn, "open ring buffer: %s", strerror(errno));
		return -1;
	}
	opened = 1;
	return 0;
}

static signed char hex_digit[256];

static void init_hex(void)
{
	memset(hex_digit, -1, sizeof(hex_digit));
	for (int i = 0; i < 10; i++)
		hex_digit['0' + i] = (signed char)i;
	for (int i = 0; i < 6; i++) {
		hex_digit['a' + i] = (signed char)(10 + i);
		hex_digit['A' + i] = (signed char)(10 + i);
	}
}

/* At most 2n hex digits (an even count) into n bytes, the rest zero: the wire form leaves trailing zero
 * bytes out (docs/bpf-lsm.md "Loader protocol"). -1 on anything else. */
static int hex_decode(const char *hex, void *out, size_t n)
{
	unsigned char *o = out;
	size_t i = 0;
	for (; i < n && hex[2 * i]; i++) {
		int hi = hex_digit[(unsigned char)hex[2 * i]];
		if (hi < 0)
			return -1;
		int lo = hex_digit[(unsigned char)hex[2 * i + 1]];
		if (lo < 0)
			return -1;
		o[i] = (unsigned char)(hi << 4 | lo);
	}
	if (hex[2 * i])
		return -1;
	memset(o + i, 0, n - i);
	return 0;
}

static uint32_t map_key_size[NMAPS], map_value_size[NMAPS], map_types[NMAPS];

/* Key and value sizes of every map, read once after open. */
static int read_map_sizes(char *err, size_t errn)
{
	for (size_t i = 0; i < NMAPS; i++) {
		struct bpf_map_info info = { 0 };
		uint32_t len = sizeof(info);
		if (bpf_obj_get_info_by_fd(map_fds[i], &info, &len)) {
			snprintf(err, errn, "map info %s: %s", map_names[i], strerror(errno));
			return -1;
		}
		map_key_size[i] = info.key_size;
		map_value_size[i] = info.value_size;
		map_types[i] = info.type;
	}
	return 0;
}

static int map_index(const char *name)
{
	for (size_t i = 0; i < NMAPS; i++)
		if (!strcmp(map_names[i], name))
			return (int)i;
	return -1;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The keys this loader wrote into each slot of each map by its last complete apply there: the next
 * apply to that slot deletes exactly those (one batch) instead of reading the whole map. Unknown (after
 * a resume, or an apply that stopped half way) means: read the map. */
struct slot_keys {
	unsigned char *keys;
	size_t n;
	int known;
};
static struct slot_keys written[NMAPS][2];
static uint32_t rules_written[2] = { RT_MAX_RULES, RT_MAX_RULES }; /* rt_rules entries in use per slot */

static void forget_slot(int mi, uint32_t slot)
{
	free(written[mi][slot].keys);
	written[mi][slot].keys = NULL;
	written[mi][slot].n = 0;
	written[mi][slot].known = 0;
}

/* Deletes every entry of a slot-keyed hash map whose key starts with `slot`: the keys the last apply
 * wrote there when known, else the keys read from the map in batches (5.6+), or one system call per key
 * where the kernel has no batches. */
static int clear_slot(int mi, uint32_t slot)
{
	if (written[mi][slot].known) {
		struct slot_keys *w = &written[mi][slot];
		size_t ks = map_key_size[mi];
		uint32_t count = (uint32_t)w->n;
		if (w->n > 0 && !(bpf_map_delete_batch(map_fds[mi], w->keys, &count, NULL) == 0 && count == w->n)) {
			for (size_t i = 0; i < w->n; i++)
				bpf_map_delete_elem(map_fds[mi], w->keys + i * ks);
		}
		forget_slot(mi, slot);
		return 0;
	}
	forget_slot(mi, slot);
	int fd = map_fds[mi];
	size_t ks = map_key_size[mi], vs = map_value_size[mi];
	const uint32_t chunk = 4096;
	unsigned char *keys = malloc(chunk * ks), *vals = malloc((size_t)chunk * vs);
	unsigned char *doomed = NULL;
	size_t n = 0, cap = 0;
	uint64_t token_in = 0, token_out = 0;
	int first = 1, batched = 1;
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (;;) {
		uint32_t count = chunk;
		int r = bpf_map_lookup_batch(fd, first ? NULL : &token_in, &token_out, keys, vals, &count, NULL);
		token_in = token_out;
		int end = r != 0 && errno == ENOENT;
		if (r != 0 && !end) {
			batched = 0;
			break;
		}
		first = 0;
		for (uint32_t i = 0; i < count; i++) {
			uint32_t s;
			memcpy(&s, keys + (size_t)i * ks, sizeof(s));
			if (s != slot)
				continue;
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 1024;
				unsigned char *g = realloc(doomed, ncap * ks);
				if (!g)
					break;
				doomed = g;
				cap = ncap;
			}
			memcpy(doomed + n * ks, keys + (size_t)i * ks, ks);
			n++;
		}
		if (end)
			break;
	}
	free(vals);
	if (!batched) {
		/* No batch operations: walk the keys one by one. */
		n = 0;
		unsigned char *next = malloc(ks);
		int start = 1;
		while (next && bpf_map_get_next_key(fd, start ? NULL : keys, next) == 0) {
			start = 0;
			memcpy(keys, next, ks);
			uint32_t s;
			memcpy(&s, keys, sizeof(s));
			if (s != slot)
				continue;
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 1024;
				unsigned char *g = realloc(doomed, ncap * ks);
				if (!g)
					break;
				doomed = g;
				cap = ncap;
			}
			memcpy(doomed + n * ks, keys, ks);
			n++;
		}
		free(next);
	}
	free(keys);
	uint32_t count = (uint32_t)n;
	if (n > 0 && !(batched && bpf_map_delete_batch(fd, doomed, &count, NULL) == 0 && count == n)) {
		for (size_t i = 0; i < n; i++)
			bpf_map_delete_elem(fd, doomed + i * ks);
	}
	free(doomed);
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
static void zero_range(int mi, uint32_t start, uint32_t count)
{
	int fd = map_fds[mi];
	size_t vs = map_value_size[mi];
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

/* The decoded entries of one map, written with one batch update. */
struct pending {
	unsigned char *keys, *vals;
	size_t *index; /* entry number in the request, for error messages */
	size_t n, cap;
};

static int pending_add(struct pending *p, int mi, const unsigned char *key, const unsigned char *val, size_t index)
{
	size_t ks = map_key_size[mi], vs = map_value_size[mi];
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 256;
		unsigned char *k = realloc(p->keys, ncap * ks);
		if (k)
			p->keys = k;
		unsigned char *v = realloc(p->vals, ncap * vs);
		if (v)
			p->vals = v;
		size_t *ix = realloc(p->index, ncap * sizeof(*ix));
		if (ix)
			p->index = ix;
		if (!k || !v || !ix)
			return -1;
		p->cap = ncap;
	}
	memcpy(p->keys + p->n * ks, key, ks);
	memcpy(p->vals + p->n * vs, val, vs);
	p->index[p->n] = index;
	p->n++;
	return 0;
}

/* Writes one map's entries: one batch, and one by one from where a batch stops (or where the kernel
 * has none), so a failing entry is named. */
static int pending_flush(struct pending *p, int mi, char *err, size_t errn)
{
	size_t ks = map_key_size[mi], vs = map_value_size[mi];
	size_t done = 0;
	if (p->n == 0)
		return 0;
	uint32_t count = (uint32_t)p->n;
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	if (bpf_map_update_batch(map_fds[mi], p->keys, p->vals, &count, &opts) == 0 && count == p->n)
		return 0;
	if (count <= p->n)
		done = count;
	for (size_t i = done; i < p->n; i++) {
		if (bpf_map_update_elem(map_fds[mi], p->keys + i * ks, p->vals + i * vs, BPF_ANY)) {
			snprintf(err, errn, "update %s entry %zu: %s", map_names[mi], p->index[i], strerror(errno));
			return -1;
		}
	}
	return 0;
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
	uint64_t t0 = now_us();
	clear_slot(map_index("rt_index"), slot);
	clear_slot(map_index("rt_sources"), slot);
	clear_slot(map_index("rt_workloads"), slot);
	clear_addr_slot(map_fds[map_index("rt_addr")], slot);
	/* rt_rules: only the entries the last apply there used (all of them when unknown). */
	zero_range(map_index("rt_rules"), slot * RT_MAX_RULES, rules_written[slot]);
	rules_written[slot] = RT_MAX_RULES;
	uint64_t t1 = now_us();
	unsigned char key[1024], val[4096];
	size_t count = 0;
	struct pending pend[NMAPS];
	memset(pend, 0, sizeof(pend));
	char msg[512] = "";
	const char *code = NULL;
	for (const struct jval *e = entries->child; e; e = e->next) {
		const struct jval *m = e->child, *k = m ? m->next : NULL, *v = k ? k->next : NULL;
		if (!m || !k || !v || m->type != J_STR || k->type != J_STR || v->type != J_STR) {
			code = "BPF_BAD_REQUEST";
			snprintf(msg, sizeof(msg), "entry must be [map, keyHex, valueHex]");
			break;
		}
		int mi = map_index(m->str);
		size_t ks = mi >= 0 ? map_key_size[mi] : 0, vs = mi >= 0 ? map_value_size[mi] : 0;
		if (mi < 0 || ks > sizeof(key) || vs > sizeof(val) || hex_decode(k->str, key, ks) ||
		    hex_decode(v->str, val, vs)) {
			code = "BPF_BAD_REQUEST";
			snprintf(msg, sizeof(msg), "entry %zu for map %s has the wrong size or map", count, m->str);
			break;
		}
		if (pending_add(&pend[mi], mi, key, val, count)) {
			code = "BPF_MAP";
			snprintf(msg, sizeof(msg), "out of memory at entry %zu", count);
			break;
		}
		count++;
	}
	uint64_t t2 = now_us();
	for (size_t mi = 0; mi < NMAPS && !code; mi++) {
		if (pending_flush(&pend[mi], (int)mi, msg, sizeof(msg)))
			code = "BPF_MAP";
	}
	for (size_t mi = 0; mi < NMAPS; mi++) {
		/* Remember the hash map keys of this slot for its next clear (only when every write succeeded). */
		if (!code && pend[mi].n > 0 && map_types[mi] == BPF_MAP_TYPE_HASH) {
			written[mi][slot].keys = pend[mi].keys;
			written[mi][slot].n = pend[mi].n;
			written[mi][slot].known = 1;
			pend[mi].keys = NULL;
		}
		free(pend[mi].keys);
		free(pend[mi].vals);
		free(pend[mi].index);
	}
	if (!code) {
		/* Hash maps this apply wrote nothing to hold nothing of this slot now. */
		for (size_t mi = 0; mi < NMAPS; mi++)
			if (map_types[mi] == BPF_MAP_TYPE_HASH && pend[mi].n == 0)
				written[mi][slot].known = 1;
		uint32_t rules = (uint32_t)rulesv->num;
		rules_written[slot] = rules < RT_MAX_RULES ? rules : RT_MAX_RULES;
	}
	if (code) {
		reply_error(code, msg);
		return;
	}
	uint64_t t3 = now_us();
	/* One 32-bit word decides which slot is in force: hooks read it once per decision. */
	cfg.generation[slot] = (uint32_t)genv->num;
	cfg.workloads[slot] = (uint32_t)wv->num;
	cfg.enabled = 1;
	cfg.cache_off = (uint32_t)no_decision_cache;
	cfg.cache_slots = decision_cache_slots;
	cfg.active = slot;
	if (bpf_map_update_elem(map_fd("rt_config"), &zero, &cfg, BPF_ANY)) {
		reply_error("BPF_MAP", "write rt_config");
		return;
	}
	/* After the flip, every cached file_open answer is stale: moving the stamp on drops them all at once
	 * (the hooks read the stamp before the slot, so an answer of the old state never carries the new one). */
	uint64_t epoch = 0;
	bpf_map_lookup_elem(map_fd("rt_epoch"), &zero, &epoch);
	epoch++;
	if (bpf_map_update_elem(map_fd("rt_epoch"), &zero, &epoch, BPF_ANY)) {
		reply_error("BPF_MAP", "write rt_epoch");
		return;
	}
	uint64_t t4 = now_us();
	printf("{\"ok\":true,\"generation\":%u,\"slot\":%u,\"entries\":%zu,\"micros\":{\"parse\":%llu,"
	       "\"clear\":%llu,\"decode\":%llu,\"write\":%llu,\"flip\":%llu,\"receive\":%llu}}\n",
	       cfg.generation[slot], slot, count, (unsigned long long)last_parse_us, (unsigned long long)(t1 - t0),
	       (unsigned long long)(t2 - t1), (unsigned long long)(t3 - t2), (unsigned long long)(t4 - t3),
	       (unsigned long long)last_receive_us);
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
	unsigned long long d = 0, ev = 0, dr = 0, hits = 0;
	if (c && bpf_map_lookup_elem(map_fd("rt_counters"), &zero, c) == 0) {
		for (int i = 0; i < ncpu; i++) {
			d += c[i].decisions;
			ev += c[i].events;
			dr += c[i].dropped;
			hits += c[i].cache_hits;
		}
	}
	free(c);
	printf("{\"ok\":true,\"decisions\":%llu,\"events\":%llu,\"dropped\":%llu,\"cacheHits\":%llu}\n", d, ev,
	       dr, hits);
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
	uint64_t parse_start = now_us();
	struct jval *req = jparse_value(&js, 0);
	last_parse_us = now_us() - parse_start;
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
		else if (!strcmp(argv[i], "--no-decision-cache"))
			no_decision_cache = 1;
		else if (!strcmp(argv[i], "--decision-cache-slots") && i + 1 < argc) {
			/* Fewer slots than RT_DCACHE_SLOTS, so that tests can make keys collide. */
			char *end;
			unsigned long n = strtoul(argv[++i], &end, 10);
			if (*end || n == 0 || n > RT_DCACHE_SLOTS || (n & (n - 1))) {
				fprintf(stderr, "--decision-cache-slots: a power of two from 1 to %d\n", RT_DCACHE_SLOTS);
				return 2;
			}
			decision_cache_slots = (uint32_t)n;
		} else if (!strcmp(argv[i], "--probe")) {
			libbpf_set_print(NULL);
			return probe();
		}
	}
	for (size_t i = 0; i < NMAPS; i++)
		map_fds[i] = -1;
	init_hex();
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	char *buf = malloc(MAX_LINE);
	size_t len = 0;
	if (!buf)
		return 2;
	fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	uint64_t line_started = 0;
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
			if (r > 0) {
				if (len == 0)
					line_started = now_us();
				len += r;
			}
			/* Earlier bytes held no newline: look only at the new ones (a long line arrives in many reads). */
			char *start = buf, *nl;
			char *from = buf + (r > 0 ? len - r : len);
			while ((nl = memchr(from, '\n', buf + len - from))) {
				*nl = 0;
				last_receive_us = now_us() - line_started;
				if (handle_line(start)) {
					free(buf);
					return 0;
				}
				start = nl + 1;
				from = start;
				line_started = now_us();
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
