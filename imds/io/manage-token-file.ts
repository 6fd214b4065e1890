// The management token on disk: `rtctl imds serve` writes a fresh one at start, readable by its owner only
// (0600, in a 0700 folder it creates), and removes it on exit; the CLI client reads it. Written to a
// temporary name with O_EXCL and renamed into place, so no other user can pre-create or swap the file.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

/** Where the token goes unless `--manage-token-file` says otherwise. */
export function defaultManageTokenFile(env: { XDG_RUNTIME_DIR?: string | undefined }): string {
  const base =
    env.XDG_RUNTIME_DIR !== undefined && env.XDG_RUNTIME_DIR !== ''
      ? env.XDG_RUNTIME_DIR
      : path.join(homedir(), '.rtctl');
  return path.join(base, 'rtctl-imds', 'manage-token');
}

/** A new random token (32 bytes, base64url). */
export function createManageToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Writes `token` to `file` with mode 0600. */
export async function writeManageTokenFile(file: string, token: string): Promise<void> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}`);
  await writeFile(tmp, `${token}\n`, { flag: 'wx', mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

/** Removes the file when it still holds `token` (another server may have replaced it since). */
export async function removeManageTokenFile(file: string, token: string): Promise<void> {
  try {
    if ((await readFile(file, 'utf8')).trim() === token) await unlink(file);
  } catch {
    // already gone
  }
}

/** Reads a token file. */
export async function readManageTokenFile(
  file: string,
): Promise<{ ok: true; token: string } | { ok: false; error: string }> {
  try {
    const token = (await readFile(file, 'utf8')).trim();
    if (!/^[A-Za-z0-9_-]{1,256}$/.test(token))
      return { ok: false, error: `${file} does not hold a management token` };
    return { ok: true, token };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
