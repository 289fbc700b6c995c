/**
 * What a real node's systemd gets on top of Debian's packages (pure): the kubelet and the API relay
 * as units (containerd's unit is Debian's, with its output sent to the node's host-side logs), the
 * manager and journald settings this machine needs, and units masked because they would reach past
 * the node into the machine (debugfs, tracefs, fusectl) or only add noise (getty, apt timers).
 */
import { NODE_PATHS } from './node-files.js';

export type RootfsEntry =
  | { path: string; kind: 'file'; content: string }
  | { path: string; kind: 'symlink'; target: string };

const LOGS = '/run/host/logs';

const KUBELET_UNIT = `[Unit]
Description=kubelet (sandbox real node)
Wants=containerd.service sandbox-api-relay.service
After=containerd.service sandbox-api-relay.service
# A kubelet that keeps exiting ends up failed (the supervisor reports the node down) instead of restarting for ever.
StartLimitIntervalSec=60
StartLimitBurst=5

[Service]
EnvironmentFile=/${NODE_PATHS.kubeletDefaults}
ExecStart=/usr/local/bin/kubelet --config=/${NODE_PATHS.kubeletConfig} --kubeconfig=/${NODE_PATHS.kubeletKubeconfig} $KUBELET_ARGS
Restart=always
RestartSec=2
StandardOutput=append:${LOGS}/kubelet.log
StandardError=inherit

[Install]
WantedBy=multi-user.target
`;

/** The kubelet talks to https://127.0.0.1:6443; the supervisor relays /run/host/api.sock to the API server. */
const RELAY_UNIT = `[Unit]
Description=relay of 127.0.0.1:6443 to the sandbox's API server (/run/host/api.sock)

[Service]
ExecStart=/usr/bin/socat TCP-LISTEN:6443,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/run/host/api.sock
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
`;

const CONTAINERD_LOGS = `[Service]
StandardOutput=append:${LOGS}/containerd.log
StandardError=inherit
`;

/** Pods whose PID 1 ignores SIGTERM would hold every reboot for the default 90 s (as on a real host). */
const MANAGER = `[Manager]
DefaultTimeoutStopSec=10s
`;

/** /dev/kmsg is the machine's kernel log (read-only here): not the node's to import. */
const JOURNALD = `[Journal]
ReadKMsg=no
`;

const MASKED = [
  'sys-kernel-debug.mount',
  'sys-kernel-tracing.mount',
  'sys-fs-fuse-connections.mount',
  'console-getty.service',
  'getty@.service',
  'apt-daily.timer',
  'apt-daily-upgrade.timer',
  'fstrim.timer',
];

const SYSTEM = 'etc/systemd/system';

export function nodeUnitEntries(): RootfsEntry[] {
  return [
    { path: `${SYSTEM}/kubelet.service`, kind: 'file', content: KUBELET_UNIT },
    { path: `${SYSTEM}/sandbox-api-relay.service`, kind: 'file', content: RELAY_UNIT },
    { path: `${SYSTEM}/containerd.service.d/sandbox-logs.conf`, kind: 'file', content: CONTAINERD_LOGS },
    { path: 'etc/systemd/system.conf.d/sandbox.conf', kind: 'file', content: MANAGER },
    { path: 'etc/systemd/journald.conf.d/sandbox.conf', kind: 'file', content: JOURNALD },
    ...['kubelet.service', 'sandbox-api-relay.service'].map(
      (unit): RootfsEntry => ({
        path: `${SYSTEM}/multi-user.target.wants/${unit}`,
        kind: 'symlink',
        target: `/${SYSTEM}/${unit}`,
      }),
    ),
    ...MASKED.map((unit): RootfsEntry => ({ path: `${SYSTEM}/${unit}`, kind: 'symlink', target: '/dev/null' })),
  ];
}
