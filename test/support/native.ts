// The prebuilt native artifacts for tests (`npm run build:native`, run by `pretest`): the path of one, or a
// skip with the reason the build recorded (a failure under CI=true, where every toolchain is installed).
import { NativeArtifact, locateNativeArtifact } from '../../enforcer/io/native-tools.js';
import { requirePrereqs } from './prereq.js';

export { NativeArtifact };

/** The artifact's path; skips the test (fails under CI=true) when it was not built, saying why. */
export function requireNativeArtifact(ctx: Mocha.Context, artifact: NativeArtifact): string {
  const found = locateNativeArtifact(artifact);
  requirePrereqs(ctx, [[found.ok, found.ok ? '' : found.error]]);
  if (!found.ok) throw new Error(found.error);
  return found.path;
}
