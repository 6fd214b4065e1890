// What the AppArmor and SELinux backends cannot express of a rule, read from the enforcement table: the
// backends write, drop and warn exactly as the table's cells say, so the two cannot disagree.
import {
  BackendEffect,
  ENFORCEMENT_TARGETS,
  EnforcementLevel,
  findEnforcementRow,
  getEnforcementCell,
  isKindCarried,
  type EnforcementTarget,
} from './enforcement-table.js';
import type { PolicyKind } from '../ir/rule-set.js';

/** One form of a rule that a backend cannot express. */
export interface BackendGap {
  form: string;
  title: string;
  reason: string;
  /** The backend's diagnostic code for it. */
  code: string;
  effect: BackendEffect;
}

/** The forms of a rule the backend of `target` cannot express, in the rule's form order. */
export function listBackendGaps(forms: readonly string[], target: EnforcementTarget): BackendGap[] {
  const gaps: BackendGap[] = [];
  for (const form of forms) {
    const cell = getEnforcementCell(form, target);
    if (cell.level === EnforcementLevel.Enforced) continue;
    if (cell.backend === undefined) {
      throw new Error(`enforcement table: ${target} cell of ${form} has no backend code`);
    }
    gaps.push({
      form,
      title: findEnforcementRow(form)?.title ?? form,
      reason: cell.reason ?? '',
      code: cell.backend.code,
      effect: cell.backend.effect,
    });
  }
  return gaps;
}

/** True when the gaps leave the whole rule out. */
export function isLeftOut(gaps: readonly BackendGap[]): boolean {
  return gaps.some((g) => g.effect === BackendEffect.LeftOut);
}

/** True when the gaps drop the rule's directory sources. */
export function dropsSourceDirectories(gaps: readonly BackendGap[]): boolean {
  return gaps.some((g) => g.effect === BackendEffect.SourcesDropped);
}

const EFFECT_TEXT: Record<BackendEffect, string> = {
  'left-out': 'left out of',
  'condition-dropped': 'written without it in',
  'sources-dropped': 'directory sources left out of',
  narrowed: 'written as it is, and read narrower, in',
};

/** The gaps grouped by diagnostic code, each with its message (`artifact`: `profile rtctl-x`, `module rtctl_y`). */
export function describeBackendGaps(
  gaps: readonly BackendGap[],
  target: EnforcementTarget,
  artifact: string,
  kind: PolicyKind,
): { code: string; message: string }[] {
  // A rule left out is not written at all: what else it could not express does not matter there.
  const shown = isLeftOut(gaps) ? gaps.filter((g) => g.effect === BackendEffect.LeftOut) : gaps;
  const codes = [...new Set(shown.map((g) => g.code))];
  return codes.map((code) => {
    const mine = shown.filter((g) => g.code === code);
    const first = mine[0];
    const effect = first === undefined ? '' : EFFECT_TEXT[first.effect];
    const others = ENFORCEMENT_TARGETS.map((t) => t.target).filter(
      (t) =>
        t !== target &&
        isKindCarried(t, kind) &&
        mine.every((g) => getEnforcementCell(g.form, t).level === EnforcementLevel.Enforced),
    );
    const reasons = mine.map((g) => `${g.title}: ${g.reason}`).join('; ');
    return {
      code,
      message: `${reasons}; ${effect} ${artifact} (${others.length > 0 ? `enforced on ${others.join(', ')}` : 'no target enforces it'})`,
    };
  });
}
