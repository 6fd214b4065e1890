// Deferred work as an injected dependency: option changes take effect after a delay, and tests decide when.

/** Runs a function later; the returned function cancels it. */
export interface Scheduler {
  schedule(delayMs: number, run: () => void): () => void;
}

/** The real scheduler, on Node timers. Timers do not keep the process alive. */
export const timerScheduler: Scheduler = {
  schedule(delayMs, run) {
    const timer = setTimeout(run, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** A scheduler that runs nothing until `runAll` is called (for tests). */
export interface ManualScheduler extends Scheduler {
  /** Runs every pending job in the order scheduled; returns how many ran. */
  runAll(): number;
  pending(): number;
}

/** Creates a manual scheduler. */
export function createManualScheduler(): ManualScheduler {
  let jobs: { run: () => void; cancelled: boolean }[] = [];
  return {
    schedule(_delayMs, run) {
      const job = { run, cancelled: false };
      jobs.push(job);
      return () => {
        job.cancelled = true;
      };
    },
    runAll() {
      const due = jobs.filter((j) => !j.cancelled);
      jobs = [];
      for (const job of due) job.run();
      return due.length;
    },
    pending: () => jobs.filter((j) => !j.cancelled).length,
  };
}
