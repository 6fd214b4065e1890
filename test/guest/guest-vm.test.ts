// Unit tests of the guest harness's qemu command line: the default boot is unchanged, and instruction
// counting (-icount, single-threaded TCG) appears only when a job asks for it.
import assert from 'node:assert/strict';
import { guestQemuArgs, MAX_ICOUNT_SHIFT, type GuestQemuInput } from './guest-vm.js';

const INPUT: GuestQemuInput = {
  kernel: '/k/vmlinuz',
  initrd: '/k/initrd.img',
  stage2: '/repo/test/guest/guest-stage2.sh',
  outDir: '/k/run-1-2',
  repoRoot: '/repo',
};

// The command line runInGuest built before the arguments were factored out, word for word.
const DEFAULT_ARGS = [
  '-accel',
  'tcg',
  '-cpu',
  'max',
  '-m',
  '2048M',
  '-smp',
  '2',
  '-display',
  'none',
  '-monitor',
  'none',
  '-serial',
  'stdio',
  '-no-reboot',
  '-nic',
  'none',
  '-kernel',
  '/k/vmlinuz',
  '-initrd',
  '/k/initrd.img',
  '-append',
  'console=ttyS0 panic=-1 loglevel=4 lsm=landlock,lockdown,yama,integrity,apparmor,bpf rtctl.stage2=/repo/test/guest/guest-stage2.sh',
  '-virtfs',
  'local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap',
  '-virtfs',
  'local,path=/k/run-1-2,mount_tag=guestout,security_model=none,multidevs=remap',
  '-virtfs',
  'local,path=/repo,mount_tag=repo,security_model=none,readonly=on,multidevs=remap',
];

/** The word after `flag` (flags that occur once). */
function after(args: readonly string[], flag: string): string | undefined {
  assert.equal(args.filter((a) => a === flag).length, 1, `${flag} once`);
  return args[args.indexOf(flag) + 1];
}

describe('guest harness: qemu arguments', () => {
  it('builds the default boot word for word, with no instruction counting', () => {
    const args = guestQemuArgs(INPUT);
    assert.deepEqual(args, DEFAULT_ARGS);
    assert.ok(!args.some((a) => a.includes('icount') || a.includes('thread=single')));
  });

  it('keeps memory and vCPU count from the job in the default boot', () => {
    const args = guestQemuArgs({ ...INPUT, memoryMiB: 3072, cpus: 4 });
    assert.equal(after(args, '-m'), '3072M');
    assert.equal(after(args, '-smp'), '4');
    assert.equal(after(args, '-accel'), 'tcg');
  });

  it('adds -icount with the shift, single-threaded TCG and one vCPU when asked', () => {
    const args = guestQemuArgs({ ...INPUT, icount: { shift: 3 } });
    assert.equal(after(args, '-icount'), 'shift=3,sleep=off,align=off');
    assert.equal(after(args, '-accel'), 'tcg,thread=single');
    assert.equal(after(args, '-smp'), '1');
    // Everything else is the default boot's.
    const rest = args.slice(0, -2).map((a, i) => (i === 1 || i === 7 ? DEFAULT_ARGS[i] : a));
    assert.deepEqual(rest, DEFAULT_ARGS);
  });

  it('keeps an explicit vCPU count under icount', () => {
    assert.equal(after(guestQemuArgs({ ...INPUT, icount: { shift: 0 }, cpus: 2 }), '-smp'), '2');
  });

  it('accepts every shift qemu accepts and refuses the others', () => {
    for (let shift = 0; shift <= MAX_ICOUNT_SHIFT; shift++)
      assert.equal(
        after(guestQemuArgs({ ...INPUT, icount: { shift } }), '-icount'),
        `shift=${shift},sleep=off,align=off`,
      );
    for (const shift of [-1, MAX_ICOUNT_SHIFT + 1, 1.5, Number.NaN])
      assert.throws(() => guestQemuArgs({ ...INPUT, icount: { shift } }), /icount shift must be an integer/);
  });
});
