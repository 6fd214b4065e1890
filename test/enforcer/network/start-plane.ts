// Test helper: starts the cgroup network plane and stops it again (nothing applied, nothing attached), and
// prints what it warned as a JSON array. Run by host-isolation.test.ts in a pid namespace of its own.
// usage: start-plane.ts <loader> <object> <pin dir> <state dir> <host cgroup>
import { NetworkPlane } from '../../../enforcer/network/network-plane.js';

const [loaderPath = '', objectPath = '', pinDir = '', stateDir = '', hostCgroup = ''] = process.argv.slice(2);
const told: string[] = [];
const plane = new NetworkPlane({
  loaderPath,
  objectPath,
  pinDir,
  stateDir,
  hostCgroup,
  warn: (m) => told.push(m),
});
await plane.start();
await plane.stop({ keepEnforcing: false });
process.stdout.write(`${JSON.stringify(told)}\n`);
