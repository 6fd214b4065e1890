// The record of the control-id review of 2026-11-25 (issue 15): the rule every id was checked by, every id that
// was removed or replaced with the reason, and the policies that moved to another bundle because no control of
// their first catalogue was left. docs/hardening.md prints it; test/hardening/bundles-catalogue.test.ts checks
// that the policies agree with it. Pure data.
import type { Catalogue } from './metadata.js';

/** How an id was judged, in one paragraph each (docs/hardening.md, "How the ids were verified"). */
export const REVIEW_RULES: readonly string[] = [
  "Every id of every policy was looked up in its catalogue's own text (the edition in the table above) and kept only when the control's subject is what the policy decides: the same files, programs or kernel interfaces, in the direction the control asks.",
  "A file permission or ownership control counts for a policy that blocks writes to that file: the write half of the permission is enforced for every process, root included. Where the control's own rationale is only that the file must not be read (private keys, audit logs), it counts only for a policy that blocks the reads.",
  'An Audit policy restricts nothing, so it implements no permission, least-privilege or protection control.',
  "An ATT&CK technique counts when the policy's attack is that technique as ATT&CK describes it: a Block policy stops it, an Audit policy records it.",
  'A control that asks for audit records of an event counts for an Audit policy on that event, and for a Block policy, whose alert records every attempt (and nothing happens).',
  'A control that asks for a setting (an algorithm, a lifetime, a module or protocol switched off, a kernel parameter, the choice of repositories) does not count for a policy that only keeps the file holding it from changing: that keeps whatever value is there, right or wrong. Such policies name CM-5 or CM-6 instead.',
  'A control about a kernel-wide switch (user namespaces, ptrace scope) does not count for a policy that blocks a few named programs: any other program still reaches the same system call.',
  'An id whose fit could not be confirmed from the text available here was removed, not kept.',
];

/** One id removed from a policy, or replaced by another. */
export interface ReviewChange {
  /** The policy's name after the review. */
  policy: string;
  catalogue: Catalogue;
  id: string;
  /** The id that took its place, when one does. */
  replacement?: string;
  reason: string;
}

/** A policy renamed into the bundle of a catalogue it still implements. */
export interface ReviewMove {
  from: string;
  to: string;
  reason: string;
}

/** Ids the review added as replacements that no policy named before it. */
export const ADDED_BY_REVIEW: Readonly<Record<Catalogue, readonly string[]>> = {
  cis: [],
  mitre: [],
  nist: [],
  stig: ['V-230465', 'V-230409', 'V-230410'],
};

/** How many distinct ids each catalogue had before the review (all of them were checked). */
export const CHECKED_BEFORE_REVIEW: Readonly<Record<Catalogue, number>> = {
  cis: 41,
  mitre: 74,
  nist: 28,
  stig: 43,
};

export const REVIEW_MOVES: readonly ReviewMove[] = [
  {
    from: 'cis-host-audit-admin-kubeconfig',
    to: 'mitre-host-audit-admin-kubeconfig',
    reason: 'its CIS ids are permission controls, and an Audit policy restricts nothing',
  },
  {
    from: 'cis-protect-kernel-module-config',
    to: 'mitre-protect-kernel-module-config',
    reason: 'its CIS ids ask for module and sysctl settings the policy does not make',
  },
  {
    from: 'cis-protect-package-sources',
    to: 'nist-protect-package-sources',
    reason: 'its CIS ids ask for the repositories and keys to be chosen well, which the policy does not do',
  },
  {
    from: 'cis-protect-pam',
    to: 'mitre-protect-pam',
    reason: 'its CIS ids ask for PAM settings (password quality, lockout, reuse) the policy does not make',
  },
  {
    from: 'stig-protect-login-defaults',
    to: 'nist-protect-login-defaults',
    reason: 'its STIG ids ask for login.defs values the policy does not set',
  },
];

const SETTING = 'a setting the policy does not make; it only keeps the file holding it from changing';
const NOT_BOUNDARY =
  'boundary protection is enforced at managed interfaces, not by blocking a program on a host';
const IA5 =
  'the policy keeps authenticators from being read (IA-5); IA-5(7) is about passwords embedded in code and scripts';
const MODULE_AUDIT =
  'V-230438 asks for audit records of the init_module system call; the policy decides execs of the kmod tools, the subject of V-230465';

export const REVIEW_CHANGES: readonly ReviewChange[] = [
  // cis bundle
  {
    policy: 'cis-host-protect-kubelet-config',
    catalogue: 'mitre',
    id: 'T1562.001',
    reason: 'Disable or Modify Tools is about security tools; the kubelet configuration is not one',
  },
  {
    policy: 'cis-host-restrict-kubelet-pki',
    catalogue: 'mitre',
    id: 'T1552.004',
    reason: 'Private Keys is about reading keys; the policy blocks writes and leaves reads allowed',
  },
  {
    policy: 'cis-host-restrict-kubelet-pki',
    catalogue: 'mitre',
    id: 'T1588.004',
    reason: 'obtaining certificates is resource development outside the victim, which no node policy decides',
  },
  {
    policy: 'cis-protect-account-files',
    catalogue: 'cis',
    id: 'linux-6.1.3',
    reason: '/etc/shadow permissions keep others from reading it; the policy only audits access to it',
  },
  {
    policy: 'cis-protect-account-files',
    catalogue: 'cis',
    id: 'linux-6.1.5',
    reason: '/etc/gshadow permissions keep others from reading it; the policy only audits access to it',
  },
  {
    policy: 'cis-protect-account-files',
    catalogue: 'nist',
    id: 'IA-5',
    reason: 'the authenticators (the shadow files) are only audited, not protected',
  },
  {
    policy: 'cis-protect-cron',
    catalogue: 'nist',
    id: 'CM-6',
    reason: 'cron jobs are scheduled work, not configuration settings; CM-5 covers the write restriction',
  },
  {
    policy: 'cis-protect-sshd-config',
    catalogue: 'cis',
    id: 'linux-5.2.2',
    reason:
      'the private host key permissions exist so that the keys cannot be read; this policy blocks writes only (mitre-block-ssh-host-key-read blocks the reads and keeps 5.2.2)',
  },
  {
    policy: 'cis-protect-runtime-sockets',
    catalogue: 'cis',
    id: 'docker-5.5',
    reason:
      "5.5's sensitive host directories (/, /boot, /dev, /etc, /lib, /proc, /sys, /usr) are not the runtime paths the policy guards, and it prevents no mount",
  },
  // moved out of cis
  {
    policy: 'mitre-host-audit-admin-kubeconfig',
    catalogue: 'cis',
    id: 'kubernetes-1.1.13',
    reason: 'admin.conf permissions restrict access; the policy only audits reads',
  },
  {
    policy: 'mitre-host-audit-admin-kubeconfig',
    catalogue: 'cis',
    id: 'kubernetes-1.1.15',
    reason: 'scheduler.conf permissions restrict access; the policy only audits reads',
  },
  {
    policy: 'mitre-host-audit-admin-kubeconfig',
    catalogue: 'cis',
    id: 'kubernetes-1.1.17',
    reason: 'controller-manager.conf permissions restrict access; the policy only audits reads',
  },
  {
    policy: 'mitre-host-audit-admin-kubeconfig',
    catalogue: 'mitre',
    id: 'T1078.004',
    reason:
      'Cloud Accounts is the use of cloud identities; admin.conf is a cluster credential in a file (T1552.001)',
  },
  {
    policy: 'mitre-host-audit-admin-kubeconfig',
    catalogue: 'nist',
    id: 'AC-6(9)',
    reason: 'reading a kubeconfig is not the execution of a privileged function',
  },
  {
    policy: 'mitre-protect-kernel-module-config',
    catalogue: 'cis',
    id: 'linux-1.1.1.1',
    reason: `cramfs mounting disabled: ${SETTING}`,
  },
  {
    policy: 'mitre-protect-kernel-module-config',
    catalogue: 'cis',
    id: 'linux-3.1.1',
    reason: `IP forwarding disabled: ${SETTING}`,
  },
  {
    policy: 'mitre-protect-kernel-module-config',
    catalogue: 'stig',
    id: 'V-230494',
    reason: `the ATM protocol disabled: ${SETTING}`,
  },
  {
    policy: 'mitre-protect-kernel-module-config',
    catalogue: 'stig',
    id: 'V-230503',
    reason: `USB mass storage disabled: ${SETTING}`,
  },
  {
    policy: 'mitre-protect-kernel-module-config',
    catalogue: 'nist',
    id: 'CM-7',
    reason: 'least functionality is not enforced by keeping configuration from changing; CM-6 is',
  },
  {
    policy: 'nist-protect-package-sources',
    catalogue: 'cis',
    id: 'linux-1.2.1',
    reason: `the repositories configured: ${SETTING}`,
  },
  {
    policy: 'nist-protect-package-sources',
    catalogue: 'cis',
    id: 'linux-1.2.2',
    reason: `the GPG keys configured: ${SETTING}`,
  },
  {
    policy: 'nist-protect-package-sources',
    catalogue: 'mitre',
    id: 'T1195.002',
    reason:
      'supply chain compromise is tampering before delivery, not a repository added on the running system',
  },
  {
    policy: 'nist-protect-package-sources',
    catalogue: 'stig',
    id: 'V-230264',
    reason: `signature checking of repository packages (gpgcheck): ${SETTING}`,
  },
  {
    policy: 'mitre-protect-pam',
    catalogue: 'cis',
    id: 'linux-5.3.1',
    reason: `password creation requirements: ${SETTING}`,
  },
  {
    policy: 'mitre-protect-pam',
    catalogue: 'cis',
    id: 'linux-5.3.2',
    reason: `lockout for failed password attempts: ${SETTING}`,
  },
  {
    policy: 'mitre-protect-pam',
    catalogue: 'cis',
    id: 'linux-5.3.3',
    reason: `password reuse limited: ${SETTING}`,
  },
  {
    policy: 'mitre-protect-pam',
    catalogue: 'stig',
    id: 'V-244540',
    reason: `no blank or null passwords in system-auth: ${SETTING}`,
  },
  {
    policy: 'mitre-protect-pam',
    catalogue: 'nist',
    id: 'IA-2',
    reason: 'the policy keeps the authentication configuration from changing (CM-5); it identifies no user',
  },
  // mitre bundle
  {
    policy: 'mitre-audit-credential-access',
    catalogue: 'nist',
    id: 'IA-5(7)',
    reason:
      'IA-5(7) is about passwords embedded in code and scripts; the policy audits reads of credential files',
  },
  {
    policy: 'mitre-audit-history-tampering',
    catalogue: 'nist',
    id: 'AU-9',
    reason: 'shell history is not audit information, and an Audit policy protects nothing',
  },
  {
    policy: 'mitre-audit-service-account-token',
    catalogue: 'cis',
    id: 'kubernetes-5.1.6',
    reason: 'asks that tokens are mounted only where needed; the policy audits reads of a mounted token',
  },
  {
    policy: 'mitre-audit-service-account-token',
    catalogue: 'mitre',
    id: 'T1528',
    replacement: 'T1552.001',
    reason:
      "the token is a credential read from a file; T1528's fit to a mounted token file could not be confirmed",
  },
  {
    policy: 'mitre-audit-service-account-token',
    catalogue: 'mitre',
    id: 'T1552.007',
    reason: 'Container API is credential gathering through container APIs, not reading a mounted file',
  },
  {
    policy: 'mitre-audit-service-account-token',
    catalogue: 'nist',
    id: 'AC-6',
    reason: 'an Audit policy restricts no privilege',
  },
  {
    policy: 'mitre-block-cloud-credentials',
    catalogue: 'mitre',
    id: 'T1078.004',
    reason: 'the policy blocks reading the credential files (T1552.001), not the use of the accounts',
  },
  {
    policy: 'mitre-block-cloud-credentials',
    catalogue: 'nist',
    id: 'IA-5(7)',
    replacement: 'IA-5',
    reason: IA5,
  },
  {
    policy: 'mitre-block-container-runtime-clients',
    catalogue: 'cis',
    id: 'docker-5.31',
    reason:
      'asks that the socket is not mounted; the policy blocks client programs, and any program can use a mounted socket (cis-protect-runtime-sockets keeps 5.31)',
  },
  {
    policy: 'mitre-block-credential-stores',
    catalogue: 'nist',
    id: 'IA-5(7)',
    replacement: 'IA-5',
    reason: IA5,
  },
  {
    policy: 'mitre-block-discovery-tools',
    catalogue: 'mitre',
    id: 'T1087',
    reason:
      "ATT&CK's account discovery names id, groups and /etc/passwd; who, w and last are T1033's, and no fit for last could be confirmed",
  },
  {
    policy: 'mitre-block-download-tools',
    catalogue: 'mitre',
    id: 'T1059.004',
    reason: 'the policy blocks the download tool; the shell that runs the payload is nist-block-shells',
  },
  {
    policy: 'mitre-block-download-tools',
    catalogue: 'nist',
    id: 'SI-3',
    reason: 'blocking curl and wget detects no malicious code',
  },
  {
    policy: 'mitre-block-file-wipers',
    catalogue: 'nist',
    id: 'AU-9',
    reason: 'shred and wipe are not specific to audit information',
  },
  {
    policy: 'mitre-block-kernel-module-tools',
    catalogue: 'stig',
    id: 'V-230438',
    replacement: 'V-230465',
    reason: MODULE_AUDIT,
  },
  {
    policy: 'mitre-block-kubeconfig-read',
    catalogue: 'mitre',
    id: 'T1613',
    reason: 'reading a kubeconfig is credential access, not container and resource discovery',
  },
  {
    policy: 'mitre-block-kubeconfig-read',
    catalogue: 'nist',
    id: 'IA-5(7)',
    replacement: 'IA-5',
    reason: IA5,
  },
  {
    policy: 'mitre-block-mount-tools',
    catalogue: 'mitre',
    id: 'T1006',
    reason: 'Direct Volume Access reads raw volumes to bypass file access controls; mount does not',
  },
  {
    policy: 'mitre-block-namespace-tools',
    catalogue: 'stig',
    id: 'V-230548',
    reason: 'disabling user namespaces is a kernel-wide switch; the policy blocks a few named programs',
  },
  {
    policy: 'mitre-block-netcat',
    catalogue: 'mitre',
    id: 'T1059.004',
    reason: 'the policy blocks nc and socat, not the shell they would start',
  },
  { policy: 'mitre-block-netcat', catalogue: 'nist', id: 'SC-7', reason: NOT_BOUNDARY },
  {
    policy: 'mitre-block-network-scanners',
    catalogue: 'mitre',
    id: 'T1595.001',
    reason: 'Scanning IP Blocks is reconnaissance from outside the victim; scanning from inside is T1046',
  },
  {
    policy: 'mitre-block-password-crackers',
    catalogue: 'nist',
    id: 'AC-7',
    reason: 'Unsuccessful Logon Attempts is account lockout; the policy blocks cracking tools',
  },
  {
    policy: 'mitre-block-ptrace-tools',
    catalogue: 'mitre',
    id: 'T1003.007',
    reason: 'Proc Filesystem is reading /proc/<pid>/mem and maps; the policy blocks ptrace tools (T1055.008)',
  },
  {
    policy: 'mitre-block-ptrace-tools',
    catalogue: 'stig',
    id: 'V-230546',
    reason: 'restricting ptrace is a kernel-wide switch; the policy blocks a few named programs',
  },
  { policy: 'mitre-block-remote-copy-tools', catalogue: 'nist', id: 'SC-7', reason: NOT_BOUNDARY },
  {
    policy: 'mitre-block-shell-from-server',
    catalogue: 'mitre',
    id: 'T1190',
    reason: 'the policy decides the shell a server starts, not the exploit of the application',
  },
  {
    policy: 'mitre-block-shell-from-server',
    catalogue: 'mitre',
    id: 'T1505',
    reason:
      'Server Software Component is installing persistent server components, which the policy does not decide',
  },
  {
    policy: 'mitre-block-shell-from-server',
    catalogue: 'nist',
    id: 'SI-3',
    reason: 'blocking shells detects no malicious code',
  },
  { policy: 'mitre-block-tunneling-tools', catalogue: 'nist', id: 'SC-7', reason: NOT_BOUNDARY },
  {
    policy: 'mitre-block-user-management',
    catalogue: 'nist',
    id: 'CM-5',
    reason: 'account changes are account management (AC-2), not changes to configuration items',
  },
  {
    policy: 'mitre-host-audit-kernel-module-tools',
    catalogue: 'stig',
    id: 'V-230438',
    replacement: 'V-230465',
    reason: MODULE_AUDIT,
  },
  {
    policy: 'mitre-protect-service-units',
    catalogue: 'nist',
    id: 'CM-7',
    reason: 'the policy restricts changes (CM-5), not functionality',
  },
  {
    policy: 'mitre-protect-ssh-authorized-keys',
    catalogue: 'nist',
    id: 'AC-2',
    reason: 'authorized keys are authenticators (IA-5), not accounts',
  },
  // nist bundle
  {
    policy: 'nist-block-compilers',
    catalogue: 'cis',
    id: 'docker-4.3',
    reason: 'asks that packages are not installed; the policy blocks running compilers that are installed',
  },
  {
    policy: 'nist-block-compilers',
    catalogue: 'nist',
    id: 'CM-11',
    reason: 'compiling a program is not installing software',
  },
  {
    policy: 'nist-block-exec-from-temp',
    catalogue: 'mitre',
    id: 'T1059',
    reason: 'running a dropped binary is not a command or scripting interpreter',
  },
  {
    policy: 'nist-block-exec-from-temp',
    catalogue: 'mitre',
    id: 'T1204.002',
    reason: 'User Execution: Malicious File needs a user opening a file, which the policy does not decide',
  },
  {
    policy: 'nist-block-interpreters',
    catalogue: 'nist',
    id: 'CM-7(5)',
    reason: 'Authorized Software is allow-by-exception; the policy is a deny list',
  },
  {
    policy: 'nist-block-kernel-tuning',
    catalogue: 'mitre',
    id: 'T1562.001',
    reason: 'kernel parameters are not security tools',
  },
  {
    policy: 'nist-block-kernel-tuning',
    catalogue: 'stig',
    id: 'V-230311',
    reason: `kernel.core_pattern set to not process dumps: ${SETTING}`,
  },
  {
    policy: 'nist-block-language-package-managers',
    catalogue: 'mitre',
    id: 'T1072',
    reason:
      'Software Deployment Tools are central deployment systems used to move laterally; pip and npm are not',
  },
  {
    policy: 'nist-block-package-managers',
    catalogue: 'mitre',
    id: 'T1072',
    reason:
      'Software Deployment Tools are central deployment systems used to move laterally; apt and dnf are not',
  },
  { policy: 'nist-block-raw-sockets', catalogue: 'nist', id: 'SC-7', reason: NOT_BOUNDARY },
  {
    policy: 'nist-block-shells',
    catalogue: 'nist',
    id: 'CM-7(5)',
    reason: 'Authorized Software is allow-by-exception; the policy is a deny list',
  },
  {
    policy: 'nist-host-protect-runtime-config',
    catalogue: 'mitre',
    id: 'T1562.001',
    reason: "the container runtime's configuration is not a security tool",
  },
  {
    policy: 'nist-host-protect-runtime-config',
    catalogue: 'mitre',
    id: 'T1610',
    reason: 'changing the runtime configuration is not deploying a container',
  },
  {
    policy: 'nist-protect-log-files',
    catalogue: 'nist',
    id: 'AU-12',
    reason: 'a Block policy on log files protects them (AU-9); it generates no audit records of events',
  },
  {
    policy: 'nist-protect-log-files',
    catalogue: 'stig',
    id: 'V-230396',
    reason: 'asks for mode 0600 against unauthorized reads; the policy blocks writes and allows reads',
  },
  {
    policy: 'nist-protect-login-defaults',
    catalogue: 'mitre',
    id: 'T1098',
    reason: 'editing login.defs manipulates no account',
  },
  {
    policy: 'nist-protect-login-defaults',
    catalogue: 'nist',
    id: 'IA-5',
    reason: 'the policy keeps password settings from changing (CM-6); it manages no authenticator',
  },
  {
    policy: 'nist-protect-login-defaults',
    catalogue: 'stig',
    id: 'V-230231',
    reason: `the password hashing algorithm in login.defs: ${SETTING}`,
  },
  {
    policy: 'nist-protect-login-defaults',
    catalogue: 'stig',
    id: 'V-230365',
    reason: `the minimum password lifetime in login.defs: ${SETTING}`,
  },
  {
    policy: 'nist-protect-name-resolution',
    catalogue: 'mitre',
    id: 'T1565.001',
    reason: 'Stored Data Manipulation is changing business data to sway outcomes; redirecting names is T1557',
  },
  {
    policy: 'nist-protect-name-resolution',
    catalogue: 'nist',
    id: 'SC-21',
    reason: "SC-21 is a resolver validating responses; the policy protects the host's resolver files",
  },
  // stig bundle
  {
    policy: 'stig-block-privilege-escalation-tools',
    catalogue: 'stig',
    id: 'V-230271',
    reason:
      'asks that sudo rules require a password (no NOPASSWD), a setting in the sudoers files; this policy blocks su and sudo',
  },
  {
    policy: 'stig-protect-sudoers',
    catalogue: 'stig',
    id: 'V-230271',
    replacement: 'V-230409',
    reason:
      'asks that sudo rules require a password (no NOPASSWD): a setting the policy does not make; the policy blocks every change to /etc/sudoers, and the alert records it (V-230409)',
  },
  {
    policy: 'stig-protect-sudoers',
    catalogue: 'stig',
    id: 'V-230271',
    replacement: 'V-230410',
    reason: 'as for V-230409: the policy blocks and records every change to /etc/sudoers.d/ (V-230410)',
  },
  {
    policy: 'stig-block-remote-shells',
    catalogue: 'mitre',
    id: 'T1040',
    reason: 'cleartext protocols make sniffing possible, but the policy does not decide sniffing',
  },
  {
    policy: 'stig-block-remote-shells',
    catalogue: 'stig',
    id: 'V-230558',
    reason:
      'an FTP server package; the policy blocks the ftp client (stig-block-file-transfer-servers keeps V-230558)',
  },
  {
    policy: 'stig-block-remote-shells',
    catalogue: 'stig',
    id: 'V-230492',
    reason: 'rsh-server provides in.rshd and in.rlogind, which the policy does not block',
  },
  {
    policy: 'stig-host-audit-audit-tools',
    catalogue: 'stig',
    id: 'V-230472',
    replacement: 'V-230386',
    reason:
      'asks for the mode of the audit tools; the policy audits their execution, a privileged function (V-230386)',
  },
  {
    policy: 'stig-host-audit-audit-tools',
    catalogue: 'stig',
    id: 'V-230473',
    replacement: 'V-230386',
    reason:
      'asks for the owner of the audit tools; the policy audits their execution, a privileged function (V-230386)',
  },
  {
    policy: 'stig-host-audit-audit-tools',
    catalogue: 'nist',
    id: 'AU-9(3)',
    reason: 'AU-9(3) is cryptographic protection of audit information, which the policy does not do',
  },
  {
    policy: 'stig-host-protect-audit-config',
    catalogue: 'cis',
    id: 'kubernetes-3.2.1',
    reason:
      'asks that a minimal audit policy exists; the policy keeps one from changing but does not create or check it',
  },
  {
    policy: 'stig-host-protect-audit-config',
    catalogue: 'stig',
    id: 'V-242403',
    reason:
      'the content of API server audit records, set by the audit policy, which the policy does not check',
  },
  {
    policy: 'stig-host-protect-audit-config',
    catalogue: 'nist',
    id: 'AU-12',
    reason:
      'a Block policy on audit configuration protects it (AU-9); it generates no audit records of events',
  },
];
