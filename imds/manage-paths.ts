// Paths of the management endpoint, shared by the server, the console form and the CLI client.

/** Path of the modify-instance-metadata-options operation. */
export const MODIFY_PATH = '/modify-instance-metadata-options';

/** Path of the identity certificate (public: it only verifies signatures). */
export const CERTIFICATE_PATH = '/identity-certificate';

/** Path of the triggers of an instance (spot interruption, rebalance, maintenance events, Auto Scaling state). */
export function triggersPath(instanceId: string): string {
  return `/instances/${encodeURIComponent(instanceId)}/triggers`;
}

/** The console form's field that carries the management token. */
export const MANAGE_TOKEN_FIELD = 'manage-token';
