// A one-line progress display on a terminal's stderr; silent when stderr is not a terminal or the input is small.
/** Creates a progress callback, or undefined when no progress should be shown. */
export function createProgress(
  label: string,
  total: number,
  stream: NodeJS.WriteStream = process.stderr,
): ((done: number) => void) | undefined {
  if (stream.isTTY !== true || total < 200) return undefined;
  let last = -1;
  return (done) => {
    const pct = Math.floor((done / total) * 100);
    if (pct === last && done !== total) return;
    last = pct;
    const width = 30;
    const filled = Math.round((pct / 100) * width);
    stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
    if (done === total) stream.write('\n');
  };
}
