#!/usr/bin/env node
// kubectl-rtctl: rtctl as a kubectl plugin. kubectl runs the `kubectl-rtctl` executable it finds on PATH with
// the arguments after `kubectl rtctl`, so `kubectl rtctl lint policies/` is `rtctl lint policies/`, exit code
// included. Installed beside `rtctl` by npm (package.json `bin`) or krew (plugins/rtctl.yaml).
import { main } from './main.js';

process.exitCode = await main(process.argv);
