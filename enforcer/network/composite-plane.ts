// Several data planes behind one DataPlane: the fanotify plane (processes and files) with the cgroup network
// plane (sockets, connects, sends). Every call goes to every plane; events are merged as they come; the first
// plane names the alerts (events of the others carry their own `enforcer`).
import type { DataPlane, DataPlaneEvent, DataPlaneStats, EnforcementState } from '../data-plane.js';

export class CompositePlane implements DataPlane {
  readonly name: string;
  readonly auditName: string;

  constructor(private readonly planes: readonly [DataPlane, ...DataPlane[]]) {
    this.name = planes[0].name;
    this.auditName = planes[0].auditName;
  }

  /** Starts every plane; when one fails, those already started are let go (left as they were) and it throws. */
  async start(): Promise<void> {
    const started: DataPlane[] = [];
    for (const p of this.planes) {
      try {
        await p.start();
      } catch (err) {
        for (const s of started.reverse()) await s.stop({ keepEnforcing: true }).catch(() => undefined);
        throw err;
      }
      started.push(p);
    }
  }

  async apply(state: EnforcementState): Promise<void> {
    for (const p of this.planes) await p.apply(state);
  }

  /** The first plane's generation; the workloads every plane enforces. */
  async enforced(): Promise<{ generation: number; workloads: string[] }> {
    const all = await Promise.all(this.planes.map((p) => p.enforced()));
    const first = all[0] ?? { generation: 0, workloads: [] };
    const workloads = first.workloads.filter((w) => all.every((e) => e.workloads.includes(w)));
    return { generation: Math.min(...all.map((e) => e.generation)), workloads };
  }

  async *events(): AsyncIterable<DataPlaneEvent> {
    const iterators = this.planes.map((p) => p.events()[Symbol.asyncIterator]());
    const next = iterators.map((it, i) => it.next().then((r) => ({ r, i })));
    let open = iterators.length;
    const done = new Set<number>();
    while (open > 0) {
      const { r, i } = await Promise.race(next.filter((_, k) => !done.has(k)));
      if (r.done === true) {
        done.add(i);
        open--;
        continue;
      }
      next[i] = (iterators[i] as AsyncIterator<DataPlaneEvent>).next().then((x) => ({ r: x, i }));
      yield r.value;
    }
  }

  /** Sequence numbers are the first plane's (the others do not buffer across restarts). */
  acknowledge(seq: number): void {
    this.planes[0].acknowledge?.(seq);
  }

  sequenceIdentity(): Promise<string | undefined> {
    return this.planes[0].sequenceIdentity?.() ?? Promise.resolve(undefined);
  }

  async stats(): Promise<DataPlaneStats> {
    const all = await Promise.all(this.planes.map((p) => p.stats()));
    const hostIsolation = all.find((s) => s.hostIsolation !== undefined)?.hostIsolation;
    // Counts only one plane keeps (the fanotify helper's ignore marks) pass through as they are.
    const sumOf = (
      key:
        | 'ignoreMarks'
        | 'ignoreRenamable'
        | 'dirIgnoreMarks'
        | 'dirIgnoreMovable'
        | 'dirIgnoreFailed'
        | 'unnamedExecutables',
    ): { [k: string]: number } => {
      const values = all.map((s) => s[key]).filter((v): v is number => v !== undefined);
      return values.length === 0 ? {} : { [key]: values.reduce((n, v) => n + v, 0) };
    };
    return {
      ...sumOf('ignoreMarks'),
      ...sumOf('ignoreRenamable'),
      ...sumOf('dirIgnoreMarks'),
      ...sumOf('dirIgnoreMovable'),
      ...sumOf('dirIgnoreFailed'),
      ...sumOf('unnamedExecutables'),
      decisions: all.reduce((n, s) => n + s.decisions, 0),
      cacheHits: all.reduce((n, s) => n + s.cacheHits, 0),
      reported: all.reduce((n, s) => n + s.reported, 0),
      dropped: all.reduce((n, s) => n + s.dropped, 0),
      workloads: all[0]?.workloads ?? 0,
      ...(hostIsolation === undefined ? {} : { hostIsolation }),
    };
  }

  async stop(options: { keepEnforcing: boolean }): Promise<void> {
    for (const p of this.planes) await p.stop(options);
  }
}
