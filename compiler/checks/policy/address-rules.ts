// RT3019, RT3020, RT3021: what the schema cannot say about `network.matchAddresses`: the CIDR block parses
// (IPv4 or IPv6, prefix in range), it has no host bits set (it is read as its network, and the warning says
// which), and ports are given only with a protocol that has ports (or none).
import { Code } from '../../diagnostics/codes/code.js';
import type { Finding } from '../../diagnostics/finding.js';
import { isRecord } from '../../model/json-value.js';
import { parseCidr } from '../../net/cidr.js';
import { PORT_PROTOCOL_NAMES } from '../../schema/policy-schema.js';
import type { DocumentRule } from './document-rules.js';

/** Checks every `network.matchAddresses` rule of a policy. */
export const checkAddressRules: DocumentRule = (p) => {
  const out: Finding[] = [];
  const network = p.spec['network'];
  if (!isRecord(network)) return out;
  const list = network['matchAddresses'];
  if (!Array.isArray(list)) return out;
  list.forEach((rule: unknown, i) => {
    if (!isRecord(rule)) return;
    const at = `spec.network.matchAddresses[${i}]`;
    const cidr = rule['cidr'];
    if (typeof cidr === 'string') {
      const parsed = parseCidr(cidr);
      if (!parsed.ok) {
        out.push({
          code: Code.invalidCidr,
          severity: 'error',
          pointer: `/spec/network/matchAddresses/${i}/cidr`,
          message: `${at}.cidr: ${JSON.stringify(cidr)} is not a CIDR block: ${parsed.error}`,
        });
      } else if (parsed.value.hostBitsSet) {
        out.push({
          code: Code.cidrHostBitsSet,
          severity: 'warning',
          pointer: `/spec/network/matchAddresses/${i}/cidr`,
          message: `${at}.cidr: ${JSON.stringify(cidr)} has host bits set; it is read as ${parsed.value.canonical} (write that, or /${parsed.value.family === 4 ? 32 : 128} for one host)`,
        });
      }
    }
    const ports = rule['ports'];
    const protocol = typeof rule['protocol'] === 'string' ? rule['protocol'].toLowerCase() : '';
    if (
      Array.isArray(ports) &&
      ports.length > 0 &&
      protocol !== '' &&
      !(PORT_PROTOCOL_NAMES as readonly string[]).includes(protocol)
    ) {
      out.push({
        code: Code.portsWithoutPortProtocol,
        severity: 'error',
        pointer: `/spec/network/matchAddresses/${i}/ports`,
        message: `${at}.ports: protocol ${protocol} has no ports, so the rule would never match; remove ports or use ${PORT_PROTOCOL_NAMES.join(', ')}`,
      });
    }
  });
  return out;
};
