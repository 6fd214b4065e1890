// The paths `rtctl imds serve --help` lists: every metadata path and every management operation.

/** Metadata paths (under the metadata address). */
export const METADATA_PATHS: readonly (readonly [string, string])[] = [
  ['PUT  /latest/api/token', 'session token (header X-cloud-metadata-token-ttl-seconds: 1..21600)'],
  ['GET  /, /latest', 'versions; dynamic, meta-data, user-data'],
  ['GET  /latest/user-data', 'user data (a default script; 404 when the config sets userData: null)'],
  ['GET  /latest/meta-data[/<entry>...]', 'the tree: listings end directories with /'],
  ['GET  /latest/meta-data/iam/info', 'role info (JSON)'],
  ['GET  /latest/meta-data/iam/security-credentials/<role>', 'role credentials (JSON)'],
  [
    'GET  /latest/meta-data/identity-credentials/compute/security-credentials/compute-instance',
    'instance identity credentials (JSON)',
  ],
  ['GET  /latest/meta-data/spot/instance-action', 'after a spot-interruption trigger: {"action","time"}'],
  ['GET  /latest/meta-data/spot/termination-time', 'after a spot-interruption trigger with action terminate'],
  ['GET  /latest/meta-data/events/recommendations/rebalance', 'after a rebalance-recommendation trigger'],
  ['GET  /latest/meta-data/events/maintenance/scheduled', 'active maintenance events (JSON array)'],
  ['GET  /latest/meta-data/events/maintenance/history', 'completed and canceled maintenance events'],
  ['GET  /latest/meta-data/autoscaling/target-lifecycle-state', 'Auto Scaling target lifecycle state'],
  ['GET  /latest/dynamic/instance-identity/document', 'instance identity document (JSON, signed)'],
  ['GET  /latest/dynamic/instance-identity/signature', 'base64 RSA-SHA256 signature of the document'],
  ['GET  /latest/dynamic/instance-identity/pkcs7', 'base64 detached PKCS#7 signature of the document'],
  ['GET  /latest/dynamic/instance-identity/rsa2048', 'the same PKCS#7 signature (RSA-2048 key)'],
];

/** Management operations (under the management address; * needs the management token). */
export const MANAGE_PATHS: readonly (readonly [string, string])[] = [
  ['POST /modify-instance-metadata-options *', 'change http-endpoint, http-tokens, hop limit, tags'],
  ['GET  /instances/<id>/metadata-options *', 'describe the options and their State'],
  ['POST /instances/<id>/triggers *', 'spot-interruption, rebalance-recommendation, scheduled-event, ...'],
  ['GET  /identity-certificate', 'PEM certificate that verifies identity documents'],
  ['GET  /', 'console form'],
  ['GET  /healthz', 'ok'],
];

function table(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([p]) => p.length));
  return rows.map(([p, what]) => `  ${p.padEnd(width)}  ${what}`).join('\n');
}

/** The text after the options in `rtctl imds serve --help`. */
export const SERVE_HELP = [
  '',
  'Metadata paths:',
  table(METADATA_PATHS),
  '',
  'Management operations (* needs Authorization: Bearer <the token in --manage-token-file>):',
  table(MANAGE_PATHS),
  '',
].join('\n');
