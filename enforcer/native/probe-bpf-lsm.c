/* rtctl-probe-bpf-lsm: decides whether this kernel runs BPF-LSM programs, by trial rather than by reading
 * the LSM list: finds `bpf_lsm_file_open` in the kernel's BTF, loads a two-instruction LSM program that
 * allows everything (r0 = 0; exit), attaches it, and detaches it at once. Prints one JSON object:
 * {"btf":bool,"load":bool,"attach":bool,"reason":"..."}. Exit 0 when BPF-LSM works, 1 when not. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void print(int btf, int load, int attach, const char *reason) {
  printf("{\"btf\":%s,\"load\":%s,\"attach\":%s,\"reason\":\"", btf ? "true" : "false", load ? "true" : "false",
         attach ? "true" : "false");
  for (const char *p = reason; *p; p++) {
    if (*p == '"' || *p == '\\') putchar('\\');
    if ((unsigned char)*p >= 0x20) putchar(*p);
  }
  printf("\"}\n");
}

/* Returns the BTF type id of the FUNC named `name` in vmlinux BTF, 0 if absent, -1 when BTF is unreadable. */
static long find_func(const char *name) {
  FILE *f = fopen("/sys/kernel/btf/vmlinux", "rb");
  if (!f) return -1;
  size_t cap = 1 << 20, len = 0;
  uint8_t *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
    len += n;
    if (len == cap) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
  }
  fclose(f);
  if (!buf || len < sizeof(struct btf_header)) return -1;
  struct btf_header *h = (struct btf_header *)buf;
  if (h->magic != 0xeB9F || (size_t)h->hdr_len + h->type_off + h->type_len > len ||
      (size_t)h->hdr_len + h->str_off + h->str_len > len) {
    free(buf);
    return -1;
  }
  const uint8_t *types = buf + h->hdr_len + h->type_off, *end = types + h->type_len;
  const char *strs = (const char *)(buf + h->hdr_len + h->str_off);
  long id = 1, found = 0;
  for (const uint8_t *p = types; p + sizeof(struct btf_type) <= end; id++) {
    const struct btf_type *t = (const void *)p;
    uint32_t kind = BTF_INFO_KIND(t->info), vlen = BTF_INFO_VLEN(t->info);
    size_t extra = 0;
    switch (kind) {
      case BTF_KIND_INT: extra = 4; break;
      case BTF_KIND_ARRAY: extra = 12; break;
      case BTF_KIND_STRUCT:
      case BTF_KIND_UNION: extra = (size_t)vlen * 12; break;
      case BTF_KIND_ENUM: extra = (size_t)vlen * 8; break;
      case BTF_KIND_FUNC_PROTO: extra = (size_t)vlen * 8; break;
      case BTF_KIND_VAR: extra = 4; break;
      case BTF_KIND_DATASEC: extra = (size_t)vlen * 12; break;
      case 17: extra = 4; break;             /* DECL_TAG */
      case 19: extra = (size_t)vlen * 12; break; /* ENUM64 */
      default: extra = 0;
    }
    if (kind == BTF_KIND_FUNC && t->name_off < h->str_len && strcmp(strs + t->name_off, name) == 0) {
      found = id;
      break;
    }
    p += sizeof(struct btf_type) + extra;
  }
  free(buf);
  return found;
}

int main(void) {
  long btf_id = find_func("bpf_lsm_file_open");
  if (btf_id < 0) {
    print(0, 0, 0, "kernel BTF (/sys/kernel/btf/vmlinux) is missing or unreadable");
    return 1;
  }
  if (btf_id == 0) {
    print(1, 0, 0, "kernel BTF has no bpf_lsm_file_open: built without CONFIG_BPF_LSM");
    return 1;
  }
  struct bpf_insn insns[2] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT},
  };
  char log[4096] = "";
  union bpf_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_LSM;
  attr.expected_attach_type = BPF_LSM_MAC;
  attr.attach_btf_id = (uint32_t)btf_id;
  attr.insns = (uint64_t)(uintptr_t)insns;
  attr.insn_cnt = 2;
  attr.license = (uint64_t)(uintptr_t) "GPL";
  attr.log_buf = (uint64_t)(uintptr_t)log;
  attr.log_size = sizeof log;
  attr.log_level = 1;
  int prog = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof attr);
  if (prog < 0) {
    char reason[512];
    snprintf(reason, sizeof reason, "BPF_PROG_LOAD of an LSM program failed: %s", strerror(errno));
    print(1, 0, 0, reason);
    return 1;
  }
  memset(&attr, 0, sizeof attr);
  attr.link_create.prog_fd = (uint32_t)prog;
  attr.link_create.attach_type = BPF_LSM_MAC;
  int link = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof attr);
  if (link < 0) {
    char reason[512];
    snprintf(reason, sizeof reason,
             "LSM program loaded but attaching it failed: %s (bpf is likely not among the active LSMs)",
             strerror(errno));
    print(1, 1, 0, reason);
    close(prog);
    return 1;
  }
  close(link);
  close(prog);
  print(1, 1, 1, "an LSM program on file_open loaded and attached");
  return 0;
}
