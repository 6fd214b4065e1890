#!/bin/sh
# Second stage of the test guest, run as PID 1 on the host's read-only root (9p): mount the kernel
# file systems and writable tmpfs directories, mount the writable exchange share, run the job the
# host left there (job.sh) and record its output and exit status, then power off.
# Everything the host needs back is written to the exchange share: stdout, stderr, exit.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm 2>/dev/null
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /var/tmp
mount -t tmpfs tmpfs /var/lib
mount -t tmpfs tmpfs /root
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /run/guest-out
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 guestout /run/guest-out || {
  echo "RTCTL-GUEST-FAIL: mount exchange share"; echo o > /proc/sysrq-trigger; sleep 60; }
out=/run/guest-out
# A checkout below a directory hidden by the tmpfs mounts above comes back from its own share.
repo=$(cat "$out/repo-dir" 2>/dev/null)
if [ -n "$repo" ] && [ ! -d "$repo/test/guest" ]; then
  mkdir -p "$repo" && mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 repo "$repo" ||
    echo "RTCTL-GUEST-FAIL: mount repo share at $repo"
fi
# The guest kernel's modules, unpacked by the harness on the host (load with guest-modprobe.sh).
RTCTL_GUEST_MODULES=$(cat "$out/modules-dir" 2>/dev/null)
export RTCTL_GUEST_MODULES
ip link set lo up 2>/dev/null || busybox ip link set lo up
hostname rtctl-guest 2>/dev/null
echo "RTCTL-GUEST-READY lsm=$(cat /sys/kernel/security/lsm 2>/dev/null)"
cd / && sh "$out/job.sh" > "$out/stdout" 2> "$out/stderr"
echo $? > "$out/exit.tmp" && mv "$out/exit.tmp" "$out/exit"
sync
echo "RTCTL-GUEST-DONE $(cat "$out/exit")"
echo o > /proc/sysrq-trigger
sleep 60
