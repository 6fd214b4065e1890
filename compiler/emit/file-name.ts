// File names derived from user-chosen names (a policy's metadata.name may be 253 characters): kept as they are
// when they fit a file system's 255-byte name limit with their extension, otherwise cut and suffixed with a
// hash of the whole name, so the result is deterministic and distinct names stay distinct.
import { createHash } from 'node:crypto';

/** Longest file name, in bytes, that the common Linux file systems accept. */
export const FILE_NAME_LIMIT = 255;

/** `stem + extension`, or when that is too long, a prefix of `stem`, `-`, 16 hex digits of its sha256 and the extension. */
export function fitFileName(stem: string, extension: string): string {
  const whole = `${stem}${extension}`;
  if (Buffer.byteLength(whole) <= FILE_NAME_LIMIT) return whole;
  const hash = createHash('sha256').update(stem).digest('hex').slice(0, 16);
  // Names reaching here are DNS-1123 (ASCII); cutting by characters is cutting by bytes.
  const keep = FILE_NAME_LIMIT - Buffer.byteLength(extension) - hash.length - 1;
  return `${stem.slice(0, keep)}-${hash}${extension}`;
}
