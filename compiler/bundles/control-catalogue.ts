// The control catalogue: every control id a hardening policy may name, with its title as its catalogue names it
// and the edition the id refers to. An id is listed here only once it has been checked against the catalogue's
// own text and found to name what the policy it appears in enforces (docs/hardening.md, "How the ids were
// verified"); lint warns about any other id (RT3032), and `rtctl bundles coverage` and docs/hardening.md print
// the titles beside the ids. Titles are facts of the catalogues; descriptions are not copied. Pure data.
import type { Catalogue } from './metadata.js';

/** The catalogue editions the ids refer to, in reporting order. */
export const EDITIONS = [
  'cis-docker',
  'cis-kubernetes',
  'cis-linux',
  'mitre-attack',
  'nist-800-53',
  'stig-rhel8',
  'stig-kubernetes',
] as const;
export type Edition = (typeof EDITIONS)[number];

/** One edition: its name, the ids it covers and where its titles were checked. */
export interface EditionInfo {
  catalogue: Catalogue;
  /** Name and version of the document. */
  name: string;
  /** How the ids of this edition are written, as in docs/hardening.md (`docker-…`, `V-242…`). */
  ids: string;
  /** The public text the ids and titles were checked against. */
  checkedAgainst: string;
}

export const EDITION_INFO: Readonly<Record<Edition, EditionInfo>> = {
  'cis-docker': {
    catalogue: 'cis',
    name: 'CIS Docker Benchmark v1.2.0',
    ids: '`docker-…`',
    checkedAgainst:
      'recommendation titles of CIS Docker Benchmark v1.2.0 as docker-bench-security v1.3.x lists them; later editions added a first item to section 5, so these numbers are one higher there',
  },
  'cis-kubernetes': {
    catalogue: 'cis',
    name: 'CIS Kubernetes Benchmark v1.8.0',
    ids: '`kubernetes-…`',
    checkedAgainst: 'recommendation titles in kube-bench `cfg/cis-1.8/master.yaml` and `node.yaml`',
  },
  'cis-linux': {
    catalogue: 'cis',
    name: 'CIS Distribution Independent Linux Benchmark v2.0.0',
    ids: '`linux-…`',
    checkedAgainst:
      'recommendation titles in the Wazuh SCA policy for this benchmark (`ruleset/sca/generic/sca_distro_independent_linux.yml`)',
  },
  'mitre-attack': {
    catalogue: 'mitre',
    name: 'MITRE ATT&CK for Enterprise v16',
    ids: '`T…`',
    checkedAgainst:
      'technique and sub-technique names and descriptions of ATT&CK for Enterprise v16 (later releases move some Impair Defenses techniques to new ids)',
  },
  'nist-800-53': {
    catalogue: 'nist',
    name: 'NIST SP 800-53 Revision 5',
    ids: 'NIST',
    checkedAgainst: 'control and control-enhancement titles of the SP 800-53 Rev. 5 catalogue',
  },
  'stig-rhel8': {
    catalogue: 'stig',
    name: 'DISA Red Hat Enterprise Linux 8 STIG, Version 1',
    ids: '`V-230…`, `V-244…`',
    checkedAgainst:
      'rule titles of the RHEL 8 STIG V1 (as the MITRE SAF RHEL 8 InSpec baseline lists them); the nearest DISA STIG for a Linux node or container',
  },
  'stig-kubernetes': {
    catalogue: 'stig',
    name: 'DISA Kubernetes STIG, Version 1',
    ids: '`V-242…`',
    checkedAgainst: 'rule titles of the Kubernetes STIG V1 (MITRE SAF InSpec stubs of V1R5 and V1R8)',
  },
};

/** One listed control. */
export interface CatalogueControl {
  title: string;
  edition: Edition;
}

const docker = (title: string): CatalogueControl => ({ title, edition: 'cis-docker' });
const kubernetes = (title: string): CatalogueControl => ({ title, edition: 'cis-kubernetes' });
const linux = (title: string): CatalogueControl => ({ title, edition: 'cis-linux' });
const attack = (title: string): CatalogueControl => ({ title, edition: 'mitre-attack' });
const nist = (title: string): CatalogueControl => ({ title, edition: 'nist-800-53' });
const rhel8 = (title: string): CatalogueControl => ({ title, edition: 'stig-rhel8' });
const k8sStig = (title: string): CatalogueControl => ({ title, edition: 'stig-kubernetes' });

/** The verified controls, per catalogue, by id as the policies write it. */
export const CONTROL_CATALOGUE: Readonly<Record<Catalogue, Readonly<Record<string, CatalogueControl>>>> = {
  cis: {
    'docker-4.3': docker('Ensure that unnecessary packages are not installed in the container'),
    'docker-5.3': docker('Ensure that Linux kernel capabilities are restricted within containers'),
    'docker-5.6': docker('Ensure sshd is not run within containers'),
    'docker-5.12': docker("Ensure that the container's root filesystem is mounted as read only"),
    'docker-5.31': docker('Ensure that the Docker socket is not mounted inside any containers'),
    'kubernetes-1.1.1': kubernetes(
      'Ensure that the API server pod specification file permissions are set to 600 or more restrictive',
    ),
    'kubernetes-1.1.3': kubernetes(
      'Ensure that the controller manager pod specification file permissions are set to 600 or more restrictive',
    ),
    'kubernetes-1.1.5': kubernetes(
      'Ensure that the scheduler pod specification file permissions are set to 600 or more restrictive',
    ),
    'kubernetes-1.1.7': kubernetes(
      'Ensure that the etcd pod specification file permissions are set to 600 or more restrictive',
    ),
    'kubernetes-1.1.19': kubernetes(
      'Ensure that the Kubernetes PKI directory and file ownership is set to root:root',
    ),
    'kubernetes-1.1.20': kubernetes(
      'Ensure that the Kubernetes PKI certificate file permissions are set to 600 or more restrictive',
    ),
    'kubernetes-1.1.21': kubernetes('Ensure that the Kubernetes PKI key file permissions are set to 600'),
    'kubernetes-4.1.1': kubernetes(
      'Ensure that the kubelet service file permissions are set to 600 or more restrictive',
    ),
    'kubernetes-4.1.5': kubernetes(
      'Ensure that the --kubeconfig kubelet.conf file permissions are set to 600 or more restrictive',
    ),
    'kubernetes-4.1.9': kubernetes(
      'If the kubelet config.yaml configuration file is being used validate permissions set to 600 or more restrictive',
    ),
    'linux-4.2.3': linux('Ensure permissions on all logfiles are configured'),
    'linux-5.1.2': linux('Ensure permissions on /etc/crontab are configured'),
    'linux-5.1.3': linux('Ensure permissions on /etc/cron.hourly are configured'),
    'linux-5.1.4': linux('Ensure permissions on /etc/cron.daily are configured'),
    'linux-5.1.5': linux('Ensure permissions on /etc/cron.weekly are configured'),
    'linux-5.1.6': linux('Ensure permissions on /etc/cron.monthly are configured'),
    'linux-5.1.7': linux('Ensure permissions on /etc/cron.d are configured'),
    'linux-5.2.1': linux('Ensure permissions on /etc/ssh/sshd_config are configured'),
    'linux-5.2.2': linux('Ensure permissions on SSH private host key files are configured'),
    'linux-6.1.2': linux('Ensure permissions on /etc/passwd are configured'),
    'linux-6.1.4': linux('Ensure permissions on /etc/group are configured'),
  },
  mitre: {
    T1003: attack('OS Credential Dumping'),
    'T1003.007': attack('OS Credential Dumping: Proc Filesystem'),
    'T1003.008': attack('OS Credential Dumping: /etc/passwd and /etc/shadow'),
    T1014: attack('Rootkit'),
    T1021: attack('Remote Services'),
    'T1021.004': attack('Remote Services: SSH'),
    'T1027.004': attack('Obfuscated Files or Information: Compile After Delivery'),
    T1033: attack('System Owner/User Discovery'),
    'T1037.004': attack('Boot or Logon Initialization Scripts: RC Scripts'),
    T1040: attack('Network Sniffing'),
    T1046: attack('Network Service Discovery'),
    T1048: attack('Exfiltration Over Alternative Protocol'),
    'T1048.003': attack(
      'Exfiltration Over Alternative Protocol: Exfiltration Over Unencrypted Non-C2 Protocol',
    ),
    'T1053.002': attack('Scheduled Task/Job: At'),
    'T1053.003': attack('Scheduled Task/Job: Cron'),
    'T1053.006': attack('Scheduled Task/Job: Systemd Timers'),
    'T1055.008': attack('Process Injection: Ptrace System Calls'),
    'T1059.004': attack('Command and Scripting Interpreter: Unix Shell'),
    'T1059.006': attack('Command and Scripting Interpreter: Python'),
    'T1059.007': attack('Command and Scripting Interpreter: JavaScript'),
    'T1059.009': attack('Command and Scripting Interpreter: Cloud API'),
    'T1070.002': attack('Indicator Removal: Clear Linux or Mac System Logs'),
    'T1070.003': attack('Indicator Removal: Clear Command History'),
    'T1070.004': attack('Indicator Removal: File Deletion'),
    T1090: attack('Proxy'),
    T1095: attack('Non-Application Layer Protocol'),
    T1098: attack('Account Manipulation'),
    'T1098.004': attack('Account Manipulation: SSH Authorized Keys'),
    T1105: attack('Ingress Tool Transfer'),
    T1110: attack('Brute Force'),
    'T1110.002': attack('Brute Force: Password Cracking'),
    'T1136.001': attack('Create Account: Local Account'),
    T1205: attack('Traffic Signaling'),
    T1485: attack('Data Destruction'),
    T1496: attack('Resource Hijacking'),
    'T1505.003': attack('Server Software Component: Web Shell'),
    T1543: attack('Create or Modify System Process'),
    'T1543.002': attack('Create or Modify System Process: Systemd Service'),
    'T1546.004': attack('Event Triggered Execution: Unix Shell Configuration Modification'),
    'T1547.006': attack('Boot or Logon Autostart Execution: Kernel Modules and Extensions'),
    'T1548.001': attack('Abuse Elevation Control Mechanism: Setuid and Setgid'),
    'T1548.003': attack('Abuse Elevation Control Mechanism: Sudo and Sudo Caching'),
    'T1552.001': attack('Unsecured Credentials: Credentials In Files'),
    'T1552.004': attack('Unsecured Credentials: Private Keys'),
    'T1553.004': attack('Subvert Trust Controls: Install Root Certificate'),
    T1554: attack('Compromise Host Software Binary'),
    T1555: attack('Credentials from Password Stores'),
    'T1556.003': attack('Modify Authentication Process: Pluggable Authentication Modules'),
    T1557: attack('Adversary-in-the-Middle'),
    'T1562.012': attack('Impair Defenses: Disable or Modify Linux Audit System'),
    'T1564.001': attack('Hide Artifacts: Hidden Files and Directories'),
    T1572: attack('Protocol Tunneling'),
    T1574: attack('Hijack Execution Flow'),
    'T1574.006': attack('Hijack Execution Flow: Dynamic Linker Hijacking'),
    T1580: attack('Cloud Infrastructure Discovery'),
    T1609: attack('Container Administration Command'),
    T1610: attack('Deploy Container'),
    T1611: attack('Escape to Host'),
    T1613: attack('Container and Resource Discovery'),
  },
  nist: {
    'AC-2': nist('Account Management'),
    'AC-3': nist('Access Enforcement'),
    'AC-6': nist('Least Privilege'),
    'AC-6(9)': nist('Least Privilege | Log Use of Privileged Functions'),
    'AC-6(10)': nist('Least Privilege | Prohibit Non-privileged Users from Executing Privileged Functions'),
    'AC-17': nist('Remote Access'),
    'AU-9': nist('Protection of Audit Information'),
    'AU-12': nist('Audit Record Generation'),
    'CM-5': nist('Access Restrictions for Change'),
    'CM-6': nist('Configuration Settings'),
    'CM-7': nist('Least Functionality'),
    'CM-7(2)': nist('Least Functionality | Prevent Program Execution'),
    'CM-11': nist('User-installed Software'),
    'IA-5': nist('Authenticator Management'),
    'SC-8': nist('Transmission Confidentiality and Integrity'),
    'SC-12': nist('Cryptographic Key Establishment and Management'),
    'SC-17': nist('Public Key Infrastructure Certificates'),
    'SC-39': nist('Process Isolation'),
    'SI-3': nist('Malicious Code Protection'),
    'SI-4': nist('System Monitoring'),
    'SI-7': nist('Software, Firmware, and Information Integrity'),
  },
  stig: {
    'V-230257': rhel8('RHEL 8 system commands must have mode 0755 or less permissive.'),
    'V-230260': rhel8('RHEL 8 library files must have mode 0755 or less permissive.'),
    'V-230269': rhel8('RHEL 8 must restrict access to the kernel message buffer.'),
    'V-230287': rhel8('The RHEL 8 SSH private host key files must have mode 0600 or less permissive.'),
    'V-230386': rhel8(
      'The RHEL 8 audit system must be configured to audit the execution of privileged functions and prevent all software from executing at higher privilege levels than users executing the software.',
    ),
    'V-230404': rhel8(
      'RHEL 8 must generate audit records for all account creations, modifications, disabling, and termination events that affect /etc/shadow.',
    ),
    'V-230406': rhel8(
      'RHEL 8 must generate audit records for all account creations, modifications, disabling, and termination events that affect /etc/passwd.',
    ),
    'V-230407': rhel8(
      'RHEL 8 must generate audit records for all account creations, modifications, disabling, and termination events that affect /etc/gshadow.',
    ),
    'V-230408': rhel8(
      'RHEL 8 must generate audit records for all account creations, modifications, disabling, and termination events that affect /etc/group.',
    ),
    'V-230409': rhel8(
      'RHEL 8 must generate audit records for all account creations, modifications, disabling, and termination events that affect /etc/sudoers.',
    ),
    'V-230410': rhel8(
      'RHEL 8 must generate audit records for all account creations, modifications, disabling, and termination events that affect /etc/sudoers.d/.',
    ),
    'V-230412': rhel8(
      'Successful/unsuccessful uses of the su command in RHEL 8 must generate an audit record.',
    ),
    'V-230418': rhel8(
      'Successful/unsuccessful uses of the chage command in RHEL 8 must generate an audit record.',
    ),
    'V-230423': rhel8(
      'Successful/unsuccessful uses of the mount command in RHEL 8 must generate an audit record.',
    ),
    'V-230465': rhel8(
      'Successful/unsuccessful uses of the kmod command in RHEL 8 must generate an audit record.',
    ),
    'V-230471': rhel8(
      'RHEL 8 must allow only the Information System Security Manager (ISSM) (or individuals or roles appointed by the ISSM) to select which auditable events are to be audited.',
    ),
    'V-230487': rhel8('RHEL 8 must not have the telnet-server package installed.'),
    'V-230510': rhel8('RHEL 8 must mount /dev/shm with the noexec option.'),
    'V-230513': rhel8('RHEL 8 must mount /tmp with the noexec option.'),
    'V-230522': rhel8('RHEL 8 must mount /var/tmp with the noexec option.'),
    'V-230547': rhel8('RHEL 8 must restrict exposed kernel pointer addresses access.'),
    'V-230558': rhel8(
      'A File Transfer Protocol (FTP) server package must not be installed unless mission essential on RHEL 8.',
    ),
    'V-242405': k8sStig('The Kubernetes manifests must be owned by root.'),
    'V-242406': k8sStig('The Kubernetes kubelet configuration file must be owned by root.'),
    'V-242407': k8sStig(
      'The Kubernetes kubelet configuration files must have file permissions set to 644 or more restrictive.',
    ),
    'V-242408': k8sStig('The Kubernetes manifests must have least privileges.'),
    'V-242451': k8sStig('The Kubernetes component PKI must be owned by root.'),
    'V-242452': k8sStig(
      'The Kubernetes kubelet config must have file permissions set to 644 or more restrictive.',
    ),
    'V-242466': k8sStig('The Kubernetes PKI CRT must have file permissions set to 644 or more restrictive.'),
    'V-242467': k8sStig('The Kubernetes PKI keys must have file permissions set to 600 or more restrictive.'),
  },
};

/** The listed control of an id, or undefined when the catalogue does not list it. */
export function lookupControl(catalogue: Catalogue, id: string): CatalogueControl | undefined {
  const table = CONTROL_CATALOGUE[catalogue];
  return Object.hasOwn(table, id) ? table[id] : undefined;
}
