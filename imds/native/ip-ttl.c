/*
 * ip-ttl: a tiny N-API addon that reads and sets the IP time-to-live (IPv4) or unicast hop limit (IPv6) of a
 * connected socket, given its file descriptor. Node exposes no such option for TCP sockets; the metadata
 * service needs it so that token responses leave with TTL = http-put-response-hop-limit.
 *
 *   setTtl(fd: number, ttl: number): void   throws Error with errno text on failure
 *   getTtl(fd: number): number
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <node_api.h>

static int socket_family(int fd) {
  struct sockaddr_storage addr;
  socklen_t len = sizeof(addr);
  if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0) return -1;
  return addr.ss_family;
}

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char message[160];
  snprintf(message, sizeof(message), "%s: %s", what, strerror(err));
  napi_throw_error(env, NULL, message);
  return NULL;
}

static int read_int_args(napi_env env, napi_callback_info info, size_t want, int32_t *out) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    napi_throw_type_error(env, NULL, "expected integer arguments");
    return 0;
  }
  for (size_t i = 0; i < want; i++) {
    napi_valuetype type;
    if (napi_typeof(env, argv[i], &type) != napi_ok || type != napi_number ||
        napi_get_value_int32(env, argv[i], &out[i]) != napi_ok) {
      napi_throw_type_error(env, NULL, "expected integer arguments");
      return 0;
    }
  }
  return 1;
}

static napi_value set_ttl(napi_env env, napi_callback_info info) {
  int32_t args[2];
  if (!read_int_args(env, info, 2, args)) return NULL;
  int fd = args[0];
  int ttl = args[1];
  if (ttl < 1 || ttl > 255) {
    napi_throw_range_error(env, NULL, "ttl must be between 1 and 255");
    return NULL;
  }
  int family = socket_family(fd);
  if (family < 0) return throw_errno(env, "getsockname", errno);
  if (family == AF_INET6) {
    if (setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl, sizeof(ttl)) != 0)
      return throw_errno(env, "setsockopt(IPV6_UNICAST_HOPS)", errno);
    /* IPv4-mapped peers on a dual-stack socket take the IPv4 option; ignore kernels that refuse it. */
    (void)setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
  } else if (family == AF_INET) {
    if (setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) != 0)
      return throw_errno(env, "setsockopt(IP_TTL)", errno);
  } else {
    napi_throw_error(env, NULL, "not an IP socket");
    return NULL;
  }
  return NULL;
}

static napi_value get_ttl(napi_env env, napi_callback_info info) {
  int32_t args[1];
  if (!read_int_args(env, info, 1, args)) return NULL;
  int fd = args[0];
  int family = socket_family(fd);
  if (family < 0) return throw_errno(env, "getsockname", errno);
  int ttl = 0;
  socklen_t len = sizeof(ttl);
  int rc = family == AF_INET6 ? getsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl, &len)
                              : getsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, &len);
  if (rc != 0) return throw_errno(env, "getsockopt", errno);
  napi_value result;
  napi_create_int32(env, ttl, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "setTtl", NAPI_AUTO_LENGTH, set_ttl, NULL, &fn);
  napi_set_named_property(env, exports, "setTtl", fn);
  napi_create_function(env, "getTtl", NAPI_AUTO_LENGTH, get_ttl, NULL, &fn);
  napi_set_named_property(env, exports, "getTtl", fn);
  return exports;
}
