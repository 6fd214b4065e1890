#!/bin/busybox sh
# First stage of the test guest (runs as PID 1 from the harness's initramfs): load the 9p/virtio
# modules listed in /modules.order, mount the host's root read-only over 9p and switch to it, running
# the second stage script named on the kernel command line (rtctl.stage2=<absolute path on the host>).
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
fail() {
  echo "RTCTL-GUEST-FAIL: $*"
  echo o > /proc/sysrq-trigger
  sleep 60
}
while read -r mod; do
  [ -n "$mod" ] || continue
  insmod "/modules/$mod" || fail "insmod $mod"
done < /modules.order
stage2=""
for arg in $(cat /proc/cmdline); do
  case "$arg" in rtctl.stage2=*) stage2="${arg#rtctl.stage2=}" ;; esac
done
[ -n "$stage2" ] || fail "no rtctl.stage2= on the kernel command line"
mkdir -p /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /newroot || fail "mount 9p hostroot"
[ -f "/newroot$stage2" ] || fail "stage2 script $stage2 not found on the host share"
umount /proc /sys
umount /dev 2>/dev/null
exec switch_root /newroot /bin/sh "$stage2"
