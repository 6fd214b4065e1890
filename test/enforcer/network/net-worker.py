# Test helper of the network plane tests: runs inside a network namespace the test creates (only `lo`, down,
# so nothing leaves it) and in a cgroup the test creates. Reads one JSON request per line, does the socket
# operation, and answers the errno of each step (0: done). Steps: socket creation, then connect or sendto.
import errno, json, os, socket, sys

# RTCTL_WORKER_TTY=1: the worker gets a controlling terminal of its own (a new session and a pseudo-terminal
# made its controlling tty), as a process of `kubectl exec -t` has; its stdin and stdout stay the pipes.
if os.environ.get('RTCTL_WORKER_TTY') == '1':
    import fcntl, termios
    os.setsid()
    _master, _slave = os.openpty()
    fcntl.ioctl(_slave, termios.TIOCSCTTY, 0)

# Ping sockets (SOCK_DGRAM, IPPROTO_ICMP) are allowed to every group in this namespace only.
try:
    with open('/proc/sys/net/ipv4/ping_group_range', 'w') as f:
        f.write('0 2147483647')
except OSError:
    # In a user namespace of its own only its mapped groups are accepted (root: 0).
    with open('/proc/sys/net/ipv4/ping_group_range', 'w') as f:
        f.write('0 0')

KINDS = {
    'tcp': (socket.SOCK_STREAM, 0),
    'udp': (socket.SOCK_DGRAM, 0),
    'icmp': (socket.SOCK_DGRAM, None),
    'raw': (socket.SOCK_RAW, None),
    'raw-tcp': (socket.SOCK_RAW, socket.IPPROTO_TCP),
    'packet': (socket.SOCK_RAW, 0),
}

print(json.dumps({'ready': True}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if req.get('op') == 'http':
        # A metadata token request (PUT /latest/api/token), as an SDK would send it.
        import http.client
        try:
            c = http.client.HTTPConnection(req['address'], req['port'], timeout=3)
            c.request('PUT', '/latest/api/token', headers={'X-cloud-metadata-token-ttl-seconds': '300'})
            r = c.getresponse()
            print(json.dumps({'status': r.status, 'body': r.read().decode()}), flush=True)
        except OSError as e:
            print(json.dumps({'error': e.errno if e.errno is not None else errno.ETIMEDOUT}), flush=True)
        continue
    family = socket.AF_INET6 if req.get('family') == 6 else socket.AF_INET
    if req['kind'] == 'packet':
        family = socket.AF_PACKET
    kind, proto = KINDS[req['kind']]
    if proto is None:
        proto = socket.IPPROTO_ICMPV6 if family == socket.AF_INET6 else socket.IPPROTO_ICMP
    out = {'socket': 0, 'send': None}
    try:
        s = socket.socket(family, kind, proto)
    except OSError as e:
        out['socket'] = e.errno
        print(json.dumps(out), flush=True)
        continue
    s.settimeout(2)
    if 'address' in req:
        target = (req['address'], req['port'])
        try:
            if req['op'] == 'sendmsg':
                s.sendto(b'x', target)
            else:
                s.connect(target)
            out['send'] = 0
        except OSError as e:
            out['send'] = e.errno if e.errno is not None else errno.ETIMEDOUT
    s.close()
    print(json.dumps(out), flush=True)
