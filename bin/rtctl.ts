#!/usr/bin/env node
// rtctl: the composition root. Each component owns its subcommands; this file only wires them.
import { main } from './main.js';

process.exitCode = await main(process.argv);
