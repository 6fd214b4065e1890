/* Rule table reader and the documented lookup walk (docs/rule-table.md). Sizes, offsets and codes come from
 * rule-table-layout.h. Every offset read from the table is bounds-checked: a bad table is refused at load,
 * never a crash. */
#include "rule-table.h"

#include <stdio.h>
#include <string.h>

#define HEADER_SIZE RT_TABLE_HEADER_SIZE
#define POLICY_SIZE RT_TABLE_POLICY_SIZE
#define LABEL_SIZE RT_TABLE_LABEL_SIZE
#define RULE_SIZE RT_TABLE_RULE_SIZE
#define SOURCE_SIZE RT_TABLE_SOURCE_SIZE
#define NODE_SIZE RT_TABLE_NODE_SIZE

/* Field offsets inside a record. */
#define HDR(f) RT_OFFSETOF(rt_table_header, f)
#define POL(f) RT_OFFSETOF(rt_table_policy, f)
#define RUL(f) RT_OFFSETOF(rt_table_rule, f)
#define SRC(f) RT_OFFSETOF(rt_table_source, f)
#define NOD(f) RT_OFFSETOF(rt_table_node, f)

static uint16_t u16at(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t u32at(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t u64at(const uint8_t *p) { return (uint64_t)u32at(p) | ((uint64_t)u32at(p + 4) << 32); }

static int section_ok(uint32_t size, uint32_t off, uint32_t count, uint32_t rec) {
  uint64_t end = (uint64_t)off + (uint64_t)count * rec;
  return off <= size && end <= size;
}

/* String by reference: pointer to its bytes and its length; 0 when the reference is out of range. */
static int str_at(const struct rule_table *t, uint32_t ref, const char **s, uint32_t *len) {
  if ((uint64_t)ref + 4 > t->string_size) return 0;
  uint32_t n = u32at(t->data + t->string_offset + ref);
  if ((uint64_t)ref + 4 + n + 1 > t->string_size) return 0;
  *s = (const char *)(t->data + t->string_offset + ref + 4);
  *len = n;
  return 1;
}

const char *rt_str(const struct rule_table *t, uint32_t ref) {
  const char *s;
  uint32_t n;
  return str_at(t, ref, &s, &n) ? s : "";
}

const uint8_t *rt_rule(const struct rule_table *t, uint32_t rule) {
  return t->data + t->rule_offset + (size_t)rule * RULE_SIZE;
}

uint32_t rt_rule_u32(const struct rule_table *t, uint32_t rule, uint32_t off) {
  return u32at(rt_rule(t, rule) + off);
}

uint32_t rt_ref(const struct rule_table *t, uint32_t i) {
  return i < t->ref_count ? u32at(t->data + t->ref_offset + (size_t)i * 4) : 0;
}

const char *rt_policy_name(const struct rule_table *t, uint32_t policy) {
  if (policy >= t->policy_count) return "";
  return rt_str(t, u32at(t->data + t->policy_offset + (size_t)policy * POLICY_SIZE + POL(name)));
}

int rt_open(struct rule_table *t, const uint8_t *data, uint32_t size, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  if (size < HEADER_SIZE || memcmp(data, RT_TABLE_MAGIC, RT_TABLE_MAGIC_SIZE) != 0) {
    snprintf(err, errlen, "not a rule table (bad magic or short header)");
    return -1;
  }
  if (u16at(data + HDR(version_major)) != RT_TABLE_VERSION_MAJOR) {
    snprintf(err, errlen, "unsupported rule table version %u.x (this reader reads %u.x)", u16at(data + HDR(version_major)),
             (unsigned)RT_TABLE_VERSION_MAJOR);
    return -1;
  }
  if (u32at(data + HDR(file_size)) != size) {
    snprintf(err, errlen, "rule table file_size %u does not match %u bytes received", u32at(data + HDR(file_size)), size);
    return -1;
  }
  t->data = data;
  t->size = size;
  t->string_offset = u32at(data + HDR(string_offset));
  t->string_size = u32at(data + HDR(string_size));
  t->policy_offset = u32at(data + HDR(policy_offset));
  t->policy_count = u32at(data + HDR(policy_count));
  t->label_offset = u32at(data + HDR(label_offset));
  t->label_count = u32at(data + HDR(label_count));
  t->rule_offset = u32at(data + HDR(rule_offset));
  t->rule_count = u32at(data + HDR(rule_count));
  t->source_offset = u32at(data + HDR(source_offset));
  t->source_count = u32at(data + HDR(source_count));
  t->ref_offset = u32at(data + HDR(ref_offset));
  t->ref_count = u32at(data + HDR(ref_count));
  t->node_offset = u32at(data + HDR(node_offset));
  t->node_count = u32at(data + HDR(node_count));
  t->bucket_offset = u32at(data + HDR(bucket_offset));
  t->bucket_count = u32at(data + HDR(bucket_count));
  if (!section_ok(size, t->string_offset, t->string_size, 1) ||
      !section_ok(size, t->policy_offset, t->policy_count, POLICY_SIZE) ||
      !section_ok(size, t->label_offset, t->label_count, LABEL_SIZE) ||
      !section_ok(size, t->rule_offset, t->rule_count, RULE_SIZE) ||
      !section_ok(size, t->source_offset, t->source_count, SOURCE_SIZE) ||
      !section_ok(size, t->ref_offset, t->ref_count, 4) ||
      !section_ok(size, t->node_offset, t->node_count, NODE_SIZE) ||
      !section_ok(size, t->bucket_offset, t->bucket_count, 4)) {
    snprintf(err, errlen, "rule table section out of bounds");
    return -1;
  }
  if (t->bucket_count == 0 || (t->bucket_count & (t->bucket_count - 1)) != 0 ||
      t->bucket_count < 2u * t->node_count) {
    snprintf(err, errlen, "rule table bucket_count %u is not a power of two >= 2 x nodes", t->bucket_count);
    return -1;
  }
  for (uint32_t i = 0; i < t->bucket_count; i++) {
    uint32_t b = u32at(data + t->bucket_offset + (size_t)i * 4);
    if (b > t->node_count) {
      snprintf(err, errlen, "rule table bucket %u points past the nodes", i);
      return -1;
    }
  }
  for (uint32_t n = 0; n < t->node_count; n++) {
    const uint8_t *node = data + t->node_offset + (size_t)n * NODE_SIZE;
    uint64_t end = (uint64_t)u32at(node + NOD(refs_start)) + u32at(node + NOD(refs_count));
    if (end > t->ref_count) {
      snprintf(err, errlen, "rule table node %u lists references out of bounds", n);
      return -1;
    }
    for (uint32_t i = 0; i < u32at(node + NOD(refs_count)); i++) {
      if (rt_ref(t, u32at(node + NOD(refs_start)) + i) >= t->rule_count) {
        snprintf(err, errlen, "rule table node %u lists a rule out of bounds", n);
        return -1;
      }
    }
  }
  for (uint32_t r = 0; r < t->rule_count; r++) {
    const uint8_t *rule = rt_rule(t, r);
    const char *s;
    uint32_t len;
    if (u32at(rule + RUL(policy)) >= t->policy_count || !str_at(t, u32at(rule + RUL(value)), &s, &len) ||
        (uint64_t)u32at(rule + RUL(source_start)) + u32at(rule + RUL(source_count)) > t->source_count ||
        (uint64_t)u32at(rule + RUL(tags_start)) + u32at(rule + RUL(tags_count)) > t->ref_count ||
        (uint64_t)u32at(rule + RUL(args_start)) + u32at(rule + RUL(args_count)) > t->ref_count) {
      snprintf(err, errlen, "rule table rule %u has a reference out of bounds", r);
      return -1;
    }
    for (uint32_t i = 0; i < u32at(rule + RUL(source_count)); i++) {
      const uint8_t *src = t->data + t->source_offset + (size_t)(u32at(rule + RUL(source_start)) + i) * SOURCE_SIZE;
      if (!str_at(t, u32at(src + SRC(value)), &s, &len)) {
        snprintf(err, errlen, "rule table rule %u has a source string out of bounds", r);
        return -1;
      }
    }
    if (u32at(rule + RUL(source_count)) > 0) t->has_sources = 1;
    if (rule[RUL(flags)] & RT_FLAG_READONLY) t->has_readonly = 1;
    if (rule[RUL(flags)] & RT_FLAG_OWNERONLY) t->has_owneronly = 1;
    if (rule[RUL(flags)] & RT_FLAG_PTS) t->has_pts = 1;
  }
  return 0;
}

static uint64_t fnv_key(int cls, int kind, const char *key, size_t len) {
  uint64_t h = RT_FNV_OFFSET;
  h ^= (uint8_t)cls;
  h *= RT_FNV_PRIME;
  h ^= (uint8_t)kind;
  h *= RT_FNV_PRIME;
  for (size_t i = 0; i < len; i++) {
    h ^= (uint8_t)key[i];
    h *= RT_FNV_PRIME;
  }
  return h;
}

/* The node for (class, kind, key), or NULL. */
static const uint8_t *find_node(const struct rule_table *t, int cls, int kind, const char *key, size_t len) {
  uint64_t h = fnv_key(cls, kind, key, len);
  uint32_t mask = t->bucket_count - 1;
  uint32_t i = (uint32_t)h & mask;
  for (uint32_t probes = 0; probes < t->bucket_count; probes++) {
    uint32_t b = u32at(t->data + t->bucket_offset + (size_t)i * 4);
    if (b == 0) return NULL;
    const uint8_t *node = t->data + t->node_offset + (size_t)(b - 1) * NODE_SIZE;
    if (u64at(node + NOD(hash)) == h && node[NOD(cls)] == cls && node[NOD(kind)] == kind) {
      const char *s;
      uint32_t n;
      if (str_at(t, u32at(node + NOD(key)), &s, &n) && n == len && memcmp(s, key, len) == 0) return node;
    }
    i = (i + 1) & mask;
  }
  return NULL;
}

static int in_set(const uint64_t *set, uint32_t p) { return (set[p >> 6] >> (p & 63)) & 1; }

/* Whole-string glob: `**` any bytes, `*` any bytes but '/', `?` one byte but '/'. A dynamic programme over
 * (pattern token, path byte): O(pattern x path), whatever the glob. */
#define GLOB_MAX 8192
static int glob_match(const char *g, size_t gl, const char *s, size_t sl) {
  static uint8_t a[GLOB_MAX + 1], b[GLOB_MAX + 1];
  if (sl > GLOB_MAX) return 0;
  uint8_t *cur = a, *next = b;
  memset(cur, 0, sl + 1);
  cur[0] = 1;
  size_t gi = 0;
  while (gi < gl) {
    if (g[gi] == '*') {
      size_t stars = 0;
      while (gi < gl && g[gi] == '*') {
        gi++;
        stars++;
      }
      if (stars >= 2) {
        next[0] = cur[0];
        for (size_t j = 1; j <= sl; j++) next[j] = (uint8_t)(cur[j] || next[j - 1]);
      } else {
        next[0] = cur[0];
        for (size_t j = 1; j <= sl; j++) next[j] = (uint8_t)(cur[j] || (next[j - 1] && s[j - 1] != '/'));
      }
    } else {
      char c = g[gi++];
      next[0] = 0;
      for (size_t j = 1; j <= sl; j++)
        next[j] = (uint8_t)(cur[j - 1] && (c == '?' ? s[j - 1] != '/' : s[j - 1] == c));
    }
    uint8_t *t = cur;
    cur = next;
    next = t;
  }
  return cur[sl];
}

/* `dir` (ends in '/') is the parent of `path`, or (recursive) any ancestor of it. */
static int dir_covers(const char *dir, size_t dl, const char *path, int recursive) {
  size_t pl = strlen(path);
  if (dl == 0 || pl <= dl || memcmp(dir, path, dl) != 0) return 0;
  if (recursive) return 1;
  return memchr(path + dl, '/', pl - dl) == NULL;
}

static int source_matches(const struct rule_table *t, const uint8_t *rule, const char *actor) {
  uint32_t start = u32at(rule + RUL(source_start)), count = u32at(rule + RUL(source_count));
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *src = t->data + t->source_offset + (size_t)(start + i) * SOURCE_SIZE;
    const char *s;
    uint32_t n;
    if (!str_at(t, u32at(src + SRC(value)), &s, &n)) continue;
    if (src[SRC(kind)] == RT_SOURCE_PATH) {
      if (strlen(actor) == n && memcmp(actor, s, n) == 0) return 1;
    } else if (src[SRC(kind)] == RT_SOURCE_DIRECTORY) {
      if (dir_covers(s, n, actor, src[SRC(recursive)] != 0)) return 1;
    }
  }
  return 0;
}

static int applies(const uint8_t *rule, const struct lookup *in) {
  int ro = (rule[RUL(flags)] & RT_FLAG_READONLY) != 0, oo = (rule[RUL(flags)] & RT_FLAG_OWNERONLY) != 0;
  int exempt = ro || oo;
  int write = in->cls == RT_CLASS_FILE && in->write; /* only opens write; exec counts as a read */
  int acceptable = (!ro || !write) && (!oo || in->owner);
  if (rule[RUL(action)] == RT_ACTION_ALLOW) return !exempt || acceptable;
  return !(exempt && acceptable);
}

/* Walks one candidate list; `parent_dir` non-NULL for DIR lists (the directory key), `pattern` for PATTERN_DIR. */
static void walk_list(const struct rule_table *t, const uint8_t *node, const struct lookup *in, int kind,
                      int is_parent, uint32_t *best) {
  if (node == NULL) return;
  uint32_t start = u32at(node + NOD(refs_start)), count = u32at(node + NOD(refs_count));
  for (uint32_t i = 0; i < count; i++) {
    uint32_t r = rt_ref(t, start + i);
    if (r >= *best) return;
    const uint8_t *rule = rt_rule(t, r);
    if (!in_set(in->policy_set, u32at(rule + RUL(policy)))) continue;
    if (kind == RT_NODE_DIR && !(rule[RUL(flags)] & RT_FLAG_RECURSIVE) && !is_parent) continue;
    if (kind == RT_NODE_PATTERN_DIR) {
      const char *g;
      uint32_t gl;
      if (!str_at(t, u32at(rule + RUL(value)), &g, &gl) || !glob_match(g, gl, in->resource, strlen(in->resource))) continue;
    }
    if (u32at(rule + RUL(source_count)) > 0 && !source_matches(t, rule, in->actor)) continue;
    if ((rule[RUL(flags)] & RT_FLAG_PTS) && !in->tty) continue;
    /* allowedArgs: the argument list is unknown to this data plane (empty), so no argument is outside. */
    if (!applies(rule, in)) continue;
    *best = r;
  }
}

/* Least-permissive through Allow rules scoped by fromSource (conditions 2 and 3 of the walk). */
static int scoped_allow(const struct rule_table *t, const struct lookup *in) {
  const char *actor = in->actor;
  size_t al = strlen(actor);
  if (al == 0) return 0;
  const uint8_t *node = find_node(t, in->cls, RT_NODE_ALLOW_SOURCE_PATH, actor, al);
  if (node != NULL) {
    for (uint32_t i = 0; i < u32at(node + NOD(refs_count)); i++) {
      if (in_set(in->policy_set, rt_rule_u32(t, rt_ref(t, u32at(node + NOD(refs_start)) + i), 0))) return 1;
    }
  }
  for (size_t i = 0; i + 1 < al; i++) {
    if (actor[i] != '/') continue;
    size_t dl = i + 1;
    node = find_node(t, in->cls, RT_NODE_ALLOW_SOURCE_DIR, actor, dl);
    if (node == NULL) continue;
    int is_parent = memchr(actor + dl, '/', al - dl) == NULL;
    for (uint32_t k = 0; k < u32at(node + NOD(refs_count)); k++) {
      uint32_t r = rt_ref(t, u32at(node + NOD(refs_start)) + k);
      const uint8_t *rule = rt_rule(t, r);
      if (!in_set(in->policy_set, u32at(rule + RUL(policy)))) continue;
      for (uint32_t s = 0; s < u32at(rule + RUL(source_count)); s++) {
        const uint8_t *src = t->data + t->source_offset + (size_t)(u32at(rule + RUL(source_start)) + s) * SOURCE_SIZE;
        const char *v;
        uint32_t vl;
        if (src[SRC(kind)] != RT_SOURCE_DIRECTORY || !str_at(t, u32at(src + SRC(value)), &v, &vl)) continue;
        if (vl == dl && memcmp(v, actor, dl) == 0 && (is_parent || src[SRC(recursive)])) return 1;
      }
    }
  }
  return 0;
}

int rt_allow_mask(const struct rule_table *t, const uint64_t *set) {
  int mask = 0;
  for (uint32_t p = 0; p < t->policy_count; p++) {
    if (in_set(set, p)) mask |= t->data[t->policy_offset + (size_t)p * POLICY_SIZE + POL(allow_unscoped)];
  }
  return mask;
}

void rt_decide(const struct rule_table *t, const struct lookup *in, struct decision *out) {
  uint32_t best = UINT32_MAX;
  const char *res = in->resource;
  size_t rl = strlen(res);
  memset(out, 0, sizeof *out);
  out->rule = -1;
  if (in->cls == RT_CLASS_PROCESS || in->cls == RT_CLASS_FILE) {
    walk_list(t, find_node(t, in->cls, RT_NODE_PATH, res, rl), in, RT_NODE_PATH, 0, &best);
    const char *slash = strrchr(res, '/');
    const char *base = slash ? slash + 1 : res;
    walk_list(t, find_node(t, in->cls, RT_NODE_EXECNAME, base, strlen(base)), in, RT_NODE_EXECNAME, 0, &best);
    size_t parent_len = 0;
    for (size_t i = 0; i + 1 < rl; i++)
      if (res[i] == '/') parent_len = i + 1;
    for (size_t i = 0; i + 1 < rl; i++) {
      if (res[i] != '/') continue;
      walk_list(t, find_node(t, in->cls, RT_NODE_DIR, res, i + 1), in, RT_NODE_DIR, i + 1 == parent_len, &best);
      walk_list(t, find_node(t, in->cls, RT_NODE_PATTERN_DIR, res, i + 1), in, RT_NODE_PATTERN_DIR, 0, &best);
    }
  } else if (in->cls == RT_CLASS_NETWORK) {
    walk_list(t, find_node(t, in->cls, RT_NODE_PROTOCOL, res, rl), in, RT_NODE_PROTOCOL, 0, &best);
    walk_list(t, find_node(t, in->cls, RT_NODE_PROTOCOL, "all", 3), in, RT_NODE_PROTOCOL, 0, &best);
  } else {
    walk_list(t, find_node(t, in->cls, RT_NODE_CAPABILITY, res, rl), in, RT_NODE_CAPABILITY, 0, &best);
  }
  if (best != UINT32_MAX) {
    out->rule = (int32_t)best;
    out->action = rt_rule(t, best)[RUL(action)];
    out->report = out->action != RT_ACTION_ALLOW;
    return;
  }
  if (((in->allow_mask >> in->cls) & 1) || scoped_allow(t, in)) {
    out->posture = 1;
    out->report = 1;
    out->action = in->posture_block ? RT_ACTION_BLOCK : RT_ACTION_AUDIT;
    return;
  }
  out->action = RT_ACTION_ALLOW;
}

int rt_scoped_allow_mask(const struct rule_table *t, const uint64_t *set) {
  int mask = 0;
  for (uint32_t r = 0; r < t->rule_count; r++) {
    const uint8_t *rule = rt_rule(t, r);
    if (rule[RUL(action)] != RT_ACTION_ALLOW || u32at(rule + RUL(source_count)) == 0) continue;
    if (!in_set(set, u32at(rule + RUL(policy)))) continue;
    if (rule[RUL(cls)] < 8) mask |= 1 << rule[RUL(cls)];
  }
  return mask;
}

int rt_non_allow_mask(const struct rule_table *t, const uint64_t *set) {
  int mask = 0;
  for (uint32_t r = 0; r < t->rule_count; r++) {
    const uint8_t *rule = rt_rule(t, r);
    if (rule[RUL(action)] == RT_ACTION_ALLOW || !in_set(set, u32at(rule + RUL(policy)))) continue;
    if (rule[RUL(cls)] < 8) mask |= 1 << rule[RUL(cls)];
  }
  return mask;
}

/* Any candidate rule of the set on this list that matches the path (whatever the facts) and is not an Allow
 * rule: the decision may then differ between actors, modes or owners. */
static int list_has_non_allow(const struct rule_table *t, const uint8_t *node, const uint64_t *set, int kind,
                              int is_parent, const char *resource) {
  if (node == NULL) return 0;
  uint32_t start = u32at(node + NOD(refs_start)), count = u32at(node + NOD(refs_count));
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t *rule = rt_rule(t, rt_ref(t, start + i));
    if (!in_set(set, u32at(rule + RUL(policy)))) continue;
    if (kind == RT_NODE_DIR && !(rule[RUL(flags)] & RT_FLAG_RECURSIVE) && !is_parent) continue;
    if (kind == RT_NODE_PATTERN_DIR) {
      const char *g;
      uint32_t gl;
      if (!str_at(t, u32at(rule + RUL(value)), &g, &gl) || !glob_match(g, gl, resource, strlen(resource))) continue;
    }
    if (rule[RUL(action)] != RT_ACTION_ALLOW) return 1;
  }
  return 0;
}

int rt_ignorable(const struct rule_table *t, const uint64_t *set, int allow_mask, int scoped_mask, int cls,
                 const char *res) {
  if (cls != RT_CLASS_PROCESS && cls != RT_CLASS_FILE) return 0;
  if (((allow_mask >> cls) & 1) || ((scoped_mask >> cls) & 1)) return 0;
  size_t rl = strlen(res);
  if (list_has_non_allow(t, find_node(t, cls, RT_NODE_PATH, res, rl), set, RT_NODE_PATH, 0, res)) return 0;
  const char *slash = strrchr(res, '/');
  const char *base = slash ? slash + 1 : res;
  if (list_has_non_allow(t, find_node(t, cls, RT_NODE_EXECNAME, base, strlen(base)), set, RT_NODE_EXECNAME, 0, res))
    return 0;
  size_t parent_len = 0;
  for (size_t i = 0; i + 1 < rl; i++)
    if (res[i] == '/') parent_len = i + 1;
  for (size_t i = 0; i + 1 < rl; i++) {
    if (res[i] != '/') continue;
    if (list_has_non_allow(t, find_node(t, cls, RT_NODE_DIR, res, i + 1), set, RT_NODE_DIR, i + 1 == parent_len, res) ||
        list_has_non_allow(t, find_node(t, cls, RT_NODE_PATTERN_DIR, res, i + 1), set, RT_NODE_PATTERN_DIR, 0, res))
      return 0;
  }
  return 1;
}

/* The literal directory a glob starts with (getGlobPrefixDirectory in compiler/decide/path-match.ts): up to
 * the last '/' before the first '*' or '?'; "/" when there is none. Its length, the slash included. */
static size_t glob_prefix_len(const char *g, size_t gl) {
  size_t head = gl, slash = 0;
  int found = 0;
  for (size_t i = 0; i < gl; i++)
    if (g[i] == '*' || g[i] == '?') {
      head = i;
      break;
    }
  for (size_t i = 0; i < head; i++)
    if (g[i] == '/') {
      slash = i + 1;
      found = 1;
    }
  return found ? slash : 0; /* 0: the prefix is "/", which every directory starts with */
}

int rt_dir_ignorable(const struct rule_table *t, const uint64_t *set, int allow_mask, int scoped_mask, int cls,
                     const char *dir) {
  if (cls != RT_CLASS_PROCESS && cls != RT_CLASS_FILE) return 0;
  if (((allow_mask >> cls) & 1) || ((scoped_mask >> cls) & 1)) return 0;
  size_t dl = strlen(dir);
  if (dl == 0 || dir[0] != '/' || dir[dl - 1] != '/') return 0;
  /* One pass over the rules: the helper asks once per directory and state (its directory cache). */
  for (uint32_t r = 0; r < t->rule_count; r++) {
    const uint8_t *rule = rt_rule(t, r);
    if (rule[RUL(cls)] != cls || rule[RUL(action)] == RT_ACTION_ALLOW) continue;
    if (!in_set(set, u32at(rule + RUL(policy)))) continue;
    const char *v;
    uint32_t vl;
    if (!str_at(t, u32at(rule + RUL(value)), &v, &vl)) return 0;
    switch (rule[RUL(matcher)]) {
    case RT_MATCH_PATH:
      /* D/x exactly (a trailing '/' tolerated, to stay on the safe side). */
      if (vl > dl && memcmp(v, dir, dl) == 0) {
        size_t end = vl;
        while (end > dl && v[end - 1] == '/') end--;
        if (memchr(v + dl, '/', end - dl) == NULL) return 0;
      }
      break;
    case RT_MATCH_EXECNAME:
      return 0; /* a base name: some child of any directory may have it */
    case RT_MATCH_DIRECTORY:
      /* Listed under its directory: a non-recursive one matches the children of exactly that directory, a
       * recursive one everything below it. */
      if (vl == dl && memcmp(v, dir, dl) == 0) return 0;
      if ((rule[RUL(flags)] & RT_FLAG_RECURSIVE) && vl <= dl && memcmp(v, dir, vl) == 0) return 0;
      break;
    case RT_MATCH_PATTERN: {
      /* Every path the glob matches starts with its literal prefix directory K. A child D/x has no '/' after
       * D, so K must be D or an ancestor of D (a prefix of it); a longer K, or one that is not a prefix, puts
       * a '/' where D/x has none or a different byte. */
      size_t kl = glob_prefix_len(v, vl);
      if (kl <= dl && memcmp(v, dir, kl) == 0) return 0;
      break;
    }
    default:
      return 0; /* not a path matcher: never expected in these classes; refuse */
    }
  }
  return 1;
}
