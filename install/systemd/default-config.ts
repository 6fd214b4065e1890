// The default /etc/rtctl/enforcer.yaml of `rtctl install --systemd` and the Debian package (a conffile there):
// audit mode on the host, an empty policy folder, the alert log in /var/log/rtctl.

/** The default configuration file's text. */
export const DEFAULT_ENFORCER_CONFIG = `# rtctl node enforcer configuration (systemd mode). \`rtctl enforcer run\` reads this file; flags given on
# its command line override it. Reference: /usr/share/doc/rtctl/enforcer.md ("Configuration file").
apiVersion: security.runtime.com/v1
kind: EnforcerConfiguration
# Policy YAML (RuntimePolicy, RuntimeHostPolicy, Namespace posture annotations), reloaded on change.
policyDir: /etc/rtctl/policies
# nodeName: defaults to the host name; RuntimeHostPolicy nodeSelector matches kubernetes.io/hostname
# and these labels.
nodeLabels: {}
clusterName: default
dataPlane: auto
postures:
  # audit: report what the host's Allow lists leave out; block (protect mode): deny it.
  host: audit
  # Default postures of every namespace, under each Namespace's annotations.
  defaults: audit
containers:
  socket: /run/containerd/containerd.sock
  # k8s.io (the kubelet's), default (ctr, nerdctl), moby (Docker on containerd).
  namespaces: [k8s.io, default, moby]
  # Namespace of containers without Kubernetes labels (unless security.runtime.com/namespace names one).
  nonKubernetesNamespace: default
alertLog:
  path: /var/log/rtctl/alerts.jsonl
  maxBytes: 64M
  files: 5
listen:
  socket: /run/rtctl/alerts.sock
  # tcp: 127.0.0.1:4280   # opt-in, instead of the socket (for \`rtctl enforcer relay\`)
  # group: adm            # may read the alert socket and log
`;
