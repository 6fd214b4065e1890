// The Debian package's maintainer scripts (policy §6): the service is enabled and started only when systemd
// is the running init, stopped and its enforcement released on removal (the data plane keeps enforcing after
// the process stops, so stopping the service is not enough), and purge removes the configuration, the
// policies, the alert log and the state. Unit state goes through deb-systemd-helper (init-system-helpers),
// which also works when systemd is not running (a chroot, a container image build).
import { ENFORCER_UNIT_NAME } from './enforcer-unit.js';

const UNIT = ENFORCER_UNIT_NAME;

/** postinst: enable (remembered by deb-systemd-helper), and start or restart when systemd runs. */
export const POSTINST = `#!/bin/sh
set -e
if [ "$1" = "configure" ] || [ "$1" = "abort-upgrade" ] || [ "$1" = "abort-deconfigure" ] || [ "$1" = "abort-remove" ]; then
	mkdir -p /etc/rtctl/policies
	deb-systemd-helper unmask '${UNIT}' >/dev/null || true
	if deb-systemd-helper --quiet was-enabled '${UNIT}'; then
		deb-systemd-helper enable '${UNIT}' >/dev/null || true
	else
		deb-systemd-helper update-state '${UNIT}' >/dev/null || true
	fi
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		if [ -n "$2" ]; then
			deb-systemd-invoke restart '${UNIT}' >/dev/null || true
		else
			deb-systemd-invoke start '${UNIT}' >/dev/null || true
		fi
	else
		echo "rtctl: systemd is not running: ${UNIT} is installed but not started (systemctl enable --now ${UNIT} once it runs)"
	fi
fi
exit 0
`;

/** prerm: on removal, stop the service and release what the data plane keeps in force. */
export const PRERM = `#!/bin/sh
set -e
if [ "$1" = "remove" ]; then
	if [ -d /run/systemd/system ]; then
		deb-systemd-invoke stop '${UNIT}' >/dev/null || true
	fi
	/usr/bin/rtctl enforcer stop --data-plane auto --state-dir /run/rtctl || true
fi
exit 0
`;

/** postrm: forget the unit; on purge, remove configuration, policies, alert log and state. */
export const POSTRM = `#!/bin/sh
set -e
if [ "$1" = "remove" ] && [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = "remove" ]; then
	if [ -x "/usr/bin/deb-systemd-helper" ]; then
		deb-systemd-helper mask '${UNIT}' >/dev/null || true
	fi
fi
if [ "$1" = "purge" ]; then
	if [ -x "/usr/bin/deb-systemd-helper" ]; then
		deb-systemd-helper purge '${UNIT}' >/dev/null || true
		deb-systemd-helper unmask '${UNIT}' >/dev/null || true
	fi
	rm -rf /etc/rtctl /var/log/rtctl /run/rtctl
fi
exit 0
`;
