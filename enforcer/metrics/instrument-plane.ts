// A data plane that reports how long each apply takes (rtctl_enforcer_apply_duration_seconds) and otherwise
// passes everything through to the plane it wraps.
import { delegatePlane, type DataPlane } from '../data-plane.js';

/** Wraps a plane so that every apply is timed. */
export function instrumentDataPlane(
  plane: DataPlane,
  observeApply: (seconds: number, ok: boolean) => void,
): DataPlane {
  return delegatePlane(plane, {
    async apply(state) {
      const started = process.hrtime.bigint();
      let ok = false;
      try {
        await plane.apply(state);
        ok = true;
      } finally {
        observeApply(Number(process.hrtime.bigint() - started) / 1e9, ok);
      }
    },
  });
}
