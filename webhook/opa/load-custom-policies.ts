// Loads every `*.wasm` of a directory as an OPA policy (built with `opa build -t wasm -e <pkg>/deny`) through
// @open-policy-agent/opa-wasm, and finds its deny entrypoint. I/O at the edge: the rule itself is pure.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadPolicy } from '@open-policy-agent/opa-wasm';
import type { CustomPolicy } from '../rules/opa-rule.js';
import { messageOf } from '../error-value.js';

/** A policy file that could not be used, and why. */
export class CustomPolicyLoadError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'CustomPolicyLoadError';
  }
}

/** The name of the deny entrypoint among `entrypoints`: `deny`, or exactly one `<package path>/deny`. */
export function findDenyEntrypoint(entrypoints: Record<string, unknown>): string | undefined {
  const names = Object.keys(entrypoints);
  if (names.includes('deny')) return 'deny';
  const nested = names.filter((n) => n.endsWith('/deny'));
  return nested.length === 1 ? nested[0] : undefined;
}

/** Loads one compiled policy from its bytes. */
export async function loadCustomPolicy(name: string, bytes: Uint8Array): Promise<CustomPolicy> {
  let loaded;
  try {
    loaded = await loadPolicy(bytes);
  } catch (err) {
    throw new CustomPolicyLoadError(name, `not an OPA wasm module: ${messageOf(err)}`);
  }
  const entrypoints: unknown = loaded.entrypoints;
  const table =
    typeof entrypoints === 'object' && entrypoints !== null ? (entrypoints as Record<string, unknown>) : {};
  const entrypoint = findDenyEntrypoint(table);
  if (entrypoint === undefined) {
    throw new CustomPolicyLoadError(
      name,
      `no deny entrypoint (found: ${Object.keys(table).join(', ') || 'none'}); build it with opa build -t wasm -e <package>/deny`,
    );
  }
  return {
    name,
    evaluateDeny(input: unknown): unknown {
      try {
        return loaded.evaluate(input, entrypoint) as unknown;
      } catch (err) {
        // opa-wasm throws strings on abort; give the caller an Error either way.
        throw err instanceof Error ? err : new Error(`${name}: ${messageOf(err)}`);
      }
    },
  };
}

/** Loads every `*.wasm` in `dir`, in name order. Throws CustomPolicyLoadError for the first unusable file. */
export async function loadCustomPolicies(dir: string): Promise<CustomPolicy[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.wasm')).sort();
  const out: CustomPolicy[] = [];
  for (const file of files) {
    const bytes = await readFile(path.join(dir, file));
    out.push(await loadCustomPolicy(file, bytes));
  }
  return out;
}
