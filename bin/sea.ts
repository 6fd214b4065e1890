// Entry of the single executable (npm run build:sea): the same program as bin/rtctl.ts, without top-level await,
// because the executable runs one CommonJS file. Answers to the name it is run by (rtctl or kubectl-rtctl).
import { main } from './main.js';

void main(process.argv).then((code) => {
  process.exitCode = code;
});
