// Fixed seed for every fast-check property test: importing this module (every test file that uses fast-check
// does, a test checks it) sets fast-check's global configuration, so a run is the same on every machine and
// every time. A failure names the seed and the path of the counterexample (fast-check's report); to replay it,
// or to explore other inputs, set RTCTL_PROPERTY_SEED=<integer>.
import fc from 'fast-check';

/** The seed of this run: RTCTL_PROPERTY_SEED, or a fixed default. */
export const PROPERTY_SEED = parsePropertySeed(process.env['RTCTL_PROPERTY_SEED']);

function parsePropertySeed(text: string | undefined): number {
  if (text === undefined || text === '') return 20_261_123;
  const seed = Number(text);
  if (!Number.isSafeInteger(seed))
    throw new Error(`RTCTL_PROPERTY_SEED must be an integer, got ${JSON.stringify(text)}`);
  return seed;
}

fc.configureGlobal({
  ...fc.readConfigureGlobal(),
  seed: PROPERTY_SEED,
  // The report of a failure carries the seed; say where it came from.
  reporter: (details) => {
    if (!details.failed) return;
    throw new Error(
      `${fc.defaultReportMessage(details) ?? 'property failed'}\n(property seed ${PROPERTY_SEED}; replay with RTCTL_PROPERTY_SEED=${PROPERTY_SEED})`,
      { cause: details.errorInstance },
    );
  },
});
