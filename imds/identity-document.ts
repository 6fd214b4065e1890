// The instance identity document served under /latest/dynamic/instance-identity/document: the real
// service's fields in its order, written as it writes them (`"key" : value`, two-space indent). The text is
// what gets signed, so it is rendered once per instance and served byte for byte.
import { formatIsoSeconds } from './clock.js';
import type { InstanceConfig } from './config.js';

/** The document's schema version, as on the real service. */
export const IDENTITY_DOCUMENT_VERSION = '2017-09-30';

/** Renders the identity document of an instance launched at `pendingTimeMs`. */
export function renderIdentityDocument(config: InstanceConfig, pendingTimeMs: number): string {
  const fields: [string, string | null][] = [
    ['accountId', config.accountId],
    ['architecture', config.architecture],
    ['availabilityZone', config.placement.availabilityZone],
    ['billingProducts', null],
    ['devpayProductCodes', null],
    ['marketplaceProductCodes', null],
    ['imageId', config.imageId],
    ['instanceId', config.instanceId],
    ['instanceType', config.instanceType],
    ['kernelId', null],
    ['pendingTime', formatIsoSeconds(pendingTimeMs)],
    ['privateIp', config.localIpv4],
    ['ramdiskId', null],
    ['region', config.placement.region],
    ['version', IDENTITY_DOCUMENT_VERSION],
  ];
  const lines = fields.map(([k, v]) => `  ${JSON.stringify(k)} : ${JSON.stringify(v)}`);
  return `{\n${lines.join(',\n')}\n}`;
}
