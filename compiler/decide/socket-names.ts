// The names a socket goes by in network rules (docs/semantics.md, "Socket names"): the name of its type and
// the name of its protocol. One definition for the oracle, its callers and the tests of both kernel planes
// (socket_name() in enforcer/network/rtctl-net.bpf.c and protocol_name() in enforcer/bpf/rtctl-lsm.bpf.c
// implement the same table in C).

/** Address families whose sockets network rules decide (Linux numbers). */
export const SocketFamily = { Inet: 2, Inet6: 10, Packet: 17 } as const;
/** Socket types (Linux numbers; the flags above the low four bits are ignored). */
export const SocketType = { Stream: 1, Dgram: 2, Raw: 3 } as const;
/** IP protocol numbers that give a socket a second name. */
export const SocketProtocol = { Icmp: 1, Icmpv6: 58 } as const;

/** What the kernel says about a socket when it is created: socket(family, type, protocol). */
export interface SocketFacts {
  family: number;
  type: number;
  protocol: number;
}

/**
 * The names of a socket, the type's name first: an inet or inet6 `SOCK_RAW` socket is `raw`, and also `icmp`
 * when its protocol is ICMP or ICMPv6; an ICMP datagram ("ping") socket is `icmp`; other streams `tcp`, other
 * datagrams `udp`; every packet socket `raw`. Empty for sockets no network rule decides (unix, netlink, …).
 */
export function getSocketNames(socket: SocketFacts): string[] {
  if (socket.family === SocketFamily.Packet) return ['raw'];
  if (socket.family !== SocketFamily.Inet && socket.family !== SocketFamily.Inet6) return [];
  const type = socket.type & 0xf;
  const icmp = socket.protocol === SocketProtocol.Icmp || socket.protocol === SocketProtocol.Icmpv6;
  if (type === SocketType.Raw) return icmp ? ['raw', 'icmp'] : ['raw'];
  if (icmp) return ['icmp'];
  if (type === SocketType.Stream) return ['tcp'];
  if (type === SocketType.Dgram) return ['udp'];
  return [];
}

/**
 * The names of a Network operation's socket: its `socketNames` when given, else its `resource` alone (lower
 * case). A protocol rule, or an address rule's `protocol`, matches when it is one of them.
 */
export function getOperationSocketNames(op: {
  resource: string;
  socketNames?: readonly string[] | undefined;
}): string[] {
  const names = op.socketNames === undefined || op.socketNames.length === 0 ? [op.resource] : op.socketNames;
  return names.map((n) => n.toLowerCase());
}
