/**
 * The configuration files a sandbox real node carries in its root filesystem (pure): containerd's,
 * the CNI network's, the kubelet's and its kubeconfig (systemd units: node-units.ts). Settings that
 * this kind of machine forces (cgroup v1, no CAP_SYS_RESOURCE) are explained where they are set.
 */

/** Where the node's configuration lives inside its root filesystem. */
export const NODE_PATHS = {
  containerdConfig: 'etc/containerd/config.toml',
  cniConfig: 'etc/cni/net.d/10-sandbox-bridge.conflist',
  kubeletConfig: 'etc/kubernetes/kubelet-config.yaml',
  kubeletKubeconfig: 'etc/kubernetes/kubelet.kubeconfig',
  caCert: 'etc/kubernetes/pki/ca.crt',
  kubeletCert: 'etc/kubernetes/pki/kubelet-client.crt',
  kubeletKey: 'etc/kubernetes/pki/kubelet-client.key',
  kubeletDefaults: 'etc/default/kubelet',
} as const;

/** The image every pod sandbox starts from; it must be among the imported archives. */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** Inside the node, the kubelet reaches the API server here (relayed to the real one). */
export const NODE_API_SERVER = 'https://127.0.0.1:6443';

export interface ContainerdOptions {
  /** Where containerd's CRI reads registry hosts (hosts.toml per registry); unset: no mirrors. */
  registryConfigPath?: string;
}

export function containerdConfig(options: ContainerdOptions = {}): string {
  // The golden root filesystem's key includes this text: without options it must not change.
  const registry = options.registryConfigPath
    ? `    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "${options.registryConfigPath}"
`
    : '';
  return `version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "${PAUSE_IMAGE}"
    # Machines whose root lacks CAP_SYS_RESOURCE cannot lower oom_score_adj as the kubelet asks;
    # runc then fails every sandbox ("can't get final child's PID from pipe"). Harmless elsewhere.
    restrict_oom_score_adj = true
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          # The kubelet's cgroupDriver is systemd: runc asks the node's systemd for each container's scope.
          SystemdCgroup = true
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
${registry}  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
`;
}

/**
 * A bridge inside the node's network namespace for pods without hostNetwork. No IP masquerade and
 * no port mapping, so no iptables rules; the namespace has no default route, so nothing leaves it.
 */
export function cniConfig(): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'sandbox-node',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: '10.214.0.0/24' }]], routes: [{ dst: '0.0.0.0/0' }] },
        },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  )}\n`;
}

/**
 * The kubelet as on a systemd host: cgroupDriver systemd and no cgroupRoot, since the node's cgroup
 * namespace already makes the node's own cgroup the root it sees.
 */
export function kubeletConfig(): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
cgroupDriver: systemd
failSwapOn: false
# Kubernetes 1.35 refuses cgroup v1 unless told otherwise; this machine kind boots in v1.
failCgroupV1: false
address: 0.0.0.0
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: false }
  x509: { clientCAFile: /${NODE_PATHS.caCert} }
authorization: { mode: AlwaysAllow }
rotateCertificates: false
serverTLSBootstrap: false
serializeImagePulls: false
resolvConf: /etc/resolv.conf
evictionHard: { memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%" }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
nodeStatusReportFrequency: 10s
nodeStatusUpdateFrequency: 10s
`;
}

export function kubeletKubeconfig(): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: sandbox
  cluster: { server: ${NODE_API_SERVER}, certificate-authority: /${NODE_PATHS.caCert} }
users:
- name: kubelet
  user: { client-certificate: /${NODE_PATHS.kubeletCert}, client-key: /${NODE_PATHS.kubeletKey} }
contexts:
- name: sandbox
  context: { cluster: sandbox, user: kubelet }
current-context: sandbox
`;
}

/** The kubelet unit's flags for this node (`/etc/default/kubelet`, read by kubelet.service). */
export function kubeletDefaults(name: string, nodeIp: string, labels: string): string {
  return `KUBELET_ARGS="--hostname-override=${name} --node-ip=${nodeIp} --node-labels=${labels} --v=1"\n`;
}
