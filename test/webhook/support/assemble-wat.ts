// Assembles the hand-written OPA-ABI test modules (WAT) into wasm with the wabt npm package, at test time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import createWabt from 'wabt';

/** Where the WAT sources live. */
export const OPA_FIXTURES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../fixtures/webhook/opa',
);

/** Assembles `test/fixtures/webhook/opa/<name>.wat` and returns the wasm bytes. */
export async function assembleOpaTestModule(name: string): Promise<Uint8Array> {
  const wabt = await createWabt();
  const file = path.join(OPA_FIXTURES, `${name}.wat`);
  const module = wabt.parseWat(file, readFileSync(file, 'utf8'));
  try {
    module.validate();
    return module.toBinary({}).buffer;
  } finally {
    module.destroy();
  }
}
