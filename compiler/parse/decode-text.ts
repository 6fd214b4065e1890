// Turns a file's bytes into text: strict UTF-8, a UTF-8 byte-order mark dropped, UTF-16/32 refused, size bounded.
import { Code } from '../diagnostics/codes/code.js';
import type { Finding } from '../diagnostics/finding.js';

/** Default bound on one file's size: far above any policy file, far below what would exhaust memory. */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

/** The text of a file, or the reason there is none. */
export type DecodeResult = { ok: true; text: string } | { ok: false; finding: Finding; offset: number };

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Decodes bytes as strict UTF-8 within the size bound. */
export function decodeText(bytes: Uint8Array, maxBytes: number = DEFAULT_MAX_FILE_BYTES): DecodeResult {
  if (bytes.length > maxBytes) {
    return fail(
      Code.fileTooLarge,
      `file is ${bytes.length} bytes; the limit is ${maxBytes} bytes (--max-file-size)`,
      0,
    );
  }
  const b0 = bytes[0];
  const b1 = bytes[1];
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0xfe && b1 === 0xff) || (b0 === 0 && b1 === 0)) {
    return fail(Code.notUtf8, 'file starts with a UTF-16 or UTF-32 byte-order mark; expected UTF-8 text', 0);
  }
  // YAML admits no NUL; one here is UTF-16 or UTF-32 text that lost its byte-order mark (or binary).
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    return fail(
      Code.notUtf8,
      `byte ${nul} is a NUL byte: the file looks like UTF-16 or UTF-32 text without a byte-order mark, or binary; expected UTF-8 text`,
      nul,
    );
  }
  try {
    return { ok: true, text: decoder.decode(bytes) };
  } catch {
    const offset = findInvalidUtf8(bytes);
    return fail(
      Code.notUtf8,
      `byte ${offset} is not valid UTF-8 (found 0x${hex(bytes[offset])}); expected UTF-8 text`,
      offset,
    );
  }
}

function fail(code: string, message: string, offset: number): DecodeResult {
  return { ok: false, finding: { code, severity: 'error', message, pointer: '' }, offset };
}

function hex(b: number | undefined): string {
  return (b ?? 0).toString(16).padStart(2, '0');
}

/** Offset of the first byte that starts an invalid UTF-8 sequence. */
function findInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    const n =
      b < 0x80
        ? 0
        : b >= 0xc2 && b <= 0xdf
          ? 1
          : b >= 0xe0 && b <= 0xef
            ? 2
            : b >= 0xf0 && b <= 0xf4
              ? 3
              : -1;
    if (n < 0) return i;
    for (let k = 1; k <= n; k++) if (((bytes[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return Math.max(0, bytes.length - 1);
}
