// Mocha root hooks, loaded by .mocharc.json. When the run includes the guest test file and the host can boot
// the guest, the one guest boot of the run starts as the run begins, so the guest (two emulated CPUs) works
// while the host runs its other tests; test/enforcer/bpf/guest.test.ts awaits that same run. Set
// RTCTL_GUEST_EARLY=0 to start it only when the guest test file is reached.
import path from 'node:path';
import { locateNativeArtifact, NativeArtifact } from '../../enforcer/io/native-tools.js';
import { listGuestPrereqs, startInGuestSuite } from '../guest/in-guest-suite.js';

const GUEST_TEST_FILE = path.join('test', 'enforcer', 'bpf', 'guest.test.ts');

/** True when the mocha command line filters tests by title (the guest test may then not run at all). */
function isFiltered(argv: readonly string[]): boolean {
  return argv.some((a) => /^(-g|-f|--grep|--fgrep)(=|$)/.test(a));
}

export const mochaHooks = {
  beforeAll(this: Mocha.Context): void {
    // Preparing the guest (kernel package, initramfs) runs synchronously before the boot starts: on a fresh
    // machine under load it takes longer than mocha's default hook timeout.
    this.timeout(10 * 60 * 1000);
    if (process.env['RTCTL_GUEST_EARLY'] === '0' || isFiltered(process.argv)) return;
    const files = this.test?.parent?.suites.map((s) => s.file ?? '') ?? [];
    if (!files.some((f) => f.endsWith(GUEST_TEST_FILE))) return;
    if (listGuestPrereqs().some(([ok]) => !ok)) return;
    if (!locateNativeArtifact(NativeArtifact.bpfLoader).ok) return;
    // Not awaited: the guest test awaits the same promise and reports its failure.
    startInGuestSuite().catch(() => undefined);
  },
};
