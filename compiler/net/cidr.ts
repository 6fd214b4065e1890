// IP addresses and CIDR blocks of `network.matchAddresses` rules and of network operations: parsed as data
// (a bad block is an error value naming what is wrong), canonicalised (IPv4 dotted quad, IPv6 in RFC 5952
// form, host bits cleared), and compared byte-wise. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is the
// IPv4 address it maps: that is what a dual-stack socket connects to.
import { isIPv4, isIPv6 } from 'node:net';

/** Address family: 4 or 6. */
export type IpFamily = 4 | 6;

/** A parsed address: family and network-order bytes (4 or 16). */
export interface IpAddress {
  family: IpFamily;
  bytes: Uint8Array;
}

/** A parsed CIDR block. */
export interface CidrBlock extends IpAddress {
  /** Prefix length, 0..32 (IPv4) or 0..128 (IPv6). */
  prefix: number;
  /** Canonical text: the network address (host bits cleared) `/` prefix. */
  canonical: string;
  /** True when the text had host bits set (`10.0.0.1/8`): the block is read as its network. */
  hostBitsSet: boolean;
}

/** Result of a parse: the value, or what is wrong. */
export type ParsedIp<T> = { ok: true; value: T } | { ok: false; error: string };

function parseIpv4Bytes(text: string): Uint8Array | undefined {
  if (!isIPv4(text)) return undefined;
  const parts = text.split('.');
  // node accepts only four decimal parts without leading zeros; keep the check explicit.
  if (parts.length !== 4) return undefined;
  return Uint8Array.from(parts.map((p) => Number(p)));
}

function parseIpv6Bytes(text: string): Uint8Array | undefined {
  if (!isIPv6(text) || text.includes('%')) return undefined;
  let head = text;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIpv4Bytes(last);
    if (v4 === undefined) return undefined;
    const words = [((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0)];
    tail.push(...words);
    // Keep a `::` that ends right before the IPv4 part; drop a single separating `:`.
    head = text.slice(0, lastColon + 1);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const words = (s: string | undefined): number[] =>
    s === undefined || s === '' ? [] : s.split(':').map((w) => parseInt(w, 16));
  const l = words(left);
  const r = [...words(right), ...tail];
  const fill = 8 - l.length - r.length;
  if (fill < 0 || (right === undefined && fill !== 0)) return undefined;
  const all = [...l, ...new Array<number>(fill).fill(0), ...r];
  const out = new Uint8Array(16);
  all.forEach((w, i) => {
    out[2 * i] = (w >> 8) & 0xff;
    out[2 * i + 1] = w & 0xff;
  });
  return out;
}

const V4_MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];

/** True when 16 bytes are an IPv4-mapped IPv6 address (`::ffff:0:0/96`). */
export function isV4Mapped(bytes: Uint8Array): boolean {
  return bytes.length === 16 && V4_MAPPED_PREFIX.every((b, i) => bytes[i] === b);
}

/** Parses an IP address (IPv4 dotted quad or IPv6, no zone); an IPv4-mapped IPv6 address reads as IPv4. */
export function parseIpAddress(text: string): ParsedIp<IpAddress> {
  const v4 = parseIpv4Bytes(text);
  if (v4 !== undefined) return { ok: true, value: { family: 4, bytes: v4 } };
  const v6 = parseIpv6Bytes(text);
  if (v6 === undefined) return { ok: false, error: `${JSON.stringify(text)} is not an IPv4 or IPv6 address` };
  if (isV4Mapped(v6)) return { ok: true, value: { family: 4, bytes: v6.slice(12) } };
  return { ok: true, value: { family: 6, bytes: v6 } };
}

/** The canonical text of an address: dotted quad, or RFC 5952 (lower case, longest zero run as `::`). */
export function formatIpAddress(address: IpAddress): string {
  const b = address.bytes;
  if (address.family === 4) return Array.from(b).join('.');
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((b[i] ?? 0) << 8) | (b[i + 1] ?? 0));
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8;) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLength && j - i >= 2) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (ws: number[]): string => ws.map((w) => w.toString(16)).join(':');
  if (bestStart === -1) return hex(words);
  return `${hex(words.slice(0, bestStart))}::${hex(words.slice(bestStart + bestLength))}`;
}

/** The canonical text of an address given as text, or undefined when it is not an address. */
export function canonicalizeIpAddress(text: string): string | undefined {
  const parsed = parseIpAddress(text);
  return parsed.ok ? formatIpAddress(parsed.value) : undefined;
}

/** `bytes` with every bit after the first `prefix` cleared. */
export function maskAddress(bytes: Uint8Array, prefix: number): Uint8Array {
  const out = Uint8Array.from(bytes);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - 8 * i));
    out[i] = (out[i] ?? 0) & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/**
 * Parses a CIDR block `address/prefix`. A bare address is a single host (`/32` or `/128`). An IPv4-mapped
 * IPv6 block with a prefix of at least 96 reads as the IPv4 block it maps.
 */
export function parseCidr(text: string): ParsedIp<CidrBlock> {
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const prefixText = slash === -1 ? undefined : text.slice(slash + 1);
  const v4 = parseIpv4Bytes(addressText);
  let family: IpFamily;
  let bytes: Uint8Array;
  if (v4 !== undefined) {
    family = 4;
    bytes = v4;
  } else {
    const v6 = parseIpv6Bytes(addressText);
    if (v6 === undefined)
      return {
        ok: false,
        error: `${JSON.stringify(addressText)} is not an IPv4 or IPv6 address (write a block as 10.0.0.0/8 or fd00::/8)`,
      };
    family = 6;
    bytes = v6;
  }
  const max = family === 4 ? 32 : 128;
  let prefix = max;
  if (prefixText !== undefined) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > max)
      return {
        ok: false,
        error: `prefix length ${JSON.stringify(prefixText)} is not an integer from 0 to ${max} (IPv${family})`,
      };
    prefix = Number(prefixText);
  }
  if (family === 6 && isV4Mapped(bytes) && prefix >= 96) {
    family = 4;
    bytes = bytes.slice(12);
    prefix -= 96;
  }
  const network = maskAddress(bytes, prefix);
  const hostBitsSet = network.some((b, i) => b !== bytes[i]);
  return {
    ok: true,
    value: {
      family,
      bytes: network,
      prefix,
      hostBitsSet,
      canonical: `${formatIpAddress({ family, bytes: network })}/${prefix}`,
    },
  };
}

/** True when the address lies in the block (same family, first `prefix` bits equal). */
export function isAddressInCidr(address: IpAddress, block: CidrBlock): boolean {
  if (address.family !== block.family) return false;
  const masked = maskAddress(address.bytes, block.prefix);
  return masked.every((b, i) => b === block.bytes[i]);
}
