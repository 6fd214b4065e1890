// Every compiler backend, in one array; `rtctl compile --target <name>` selects among them.
import type { Backend } from './backend.js';
import { crdBackend } from './crd/crd-backend.js';
import { RULES_BACKEND } from './rules/rules-backend.js';
import { APPARMOR_BACKEND } from './apparmor/apparmor-backend.js';
import { SELINUX_BACKEND } from './selinux/selinux-backend.js';

/** All backends. Add a backend here to add a target. */
export const BACKENDS: readonly Backend[] = [crdBackend, RULES_BACKEND, APPARMOR_BACKEND, SELINUX_BACKEND];

/** The backend with this target name, if any. */
export function findBackend(name: string): Backend | undefined {
  return BACKENDS.find((b) => b.name === name);
}
