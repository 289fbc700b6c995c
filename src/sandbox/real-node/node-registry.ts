/**
 * A real node's side of the sandbox registry: containerd reads mirror configuration from
 * /etc/containerd/certs.d, where each public registry's hosts.toml sends every pull to the sandbox's
 * registry, and a socat unit relays the node's 127.0.0.1:5000 to /run/host/registry.sock, which the
 * supervisor carries to the registry on the machine's loopback (as the API server's traffic is).
 * Written per node, only when the fleet has a registry, so the cached golden root filesystem (and
 * the archive import it holds) stays the same for fleets without one.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MIRRORED_REGISTRIES, mirrorHostsToml, NODE_REGISTRY_ADDRESS } from '../registry/registry-files.js';
import { containerdConfig, NODE_PATHS } from './node-files.js';
import type { RootfsEntry } from './node-units.js';

export const CONTAINERD_CERTS_DIR = 'etc/containerd/certs.d';
/** Host side of the relay, in the node directory's host/ (the node's /run/host). */
export const REGISTRY_SOCKET = 'registry.sock';

const [, port] = NODE_REGISTRY_ADDRESS.split(':');

const RELAY_UNIT = `[Unit]
Description=relay of ${NODE_REGISTRY_ADDRESS} to the sandbox's registry (/run/host/${REGISTRY_SOCKET})
Before=kubelet.service

[Service]
ExecStart=/usr/bin/socat TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/run/host/${REGISTRY_SOCKET}
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
`;

const SYSTEM = 'etc/systemd/system';

/** Files that make a node pull the mirrored registries' images from the sandbox registry. */
export function nodeRegistryEntries(): RootfsEntry[] {
  return [
    {
      path: NODE_PATHS.containerdConfig,
      kind: 'file',
      content: containerdConfig({ registryConfigPath: `/${CONTAINERD_CERTS_DIR}` }),
    },
    ...MIRRORED_REGISTRIES.map(
      (host): RootfsEntry => ({
        path: `${CONTAINERD_CERTS_DIR}/${host}/hosts.toml`,
        kind: 'file',
        content: mirrorHostsToml(`/${NODE_PATHS.caCert}`),
      }),
    ),
    { path: `${SYSTEM}/sandbox-registry-relay.service`, kind: 'file', content: RELAY_UNIT },
    {
      path: `${SYSTEM}/multi-user.target.wants/sandbox-registry-relay.service`,
      kind: 'symlink',
      target: `/${SYSTEM}/sandbox-registry-relay.service`,
    },
  ];
}

/** Writes nodeRegistryEntries() into a node's root filesystem (its own copy, before it boots). */
export function writeNodeRegistryFiles(rootDir: string): void {
  for (const entry of nodeRegistryEntries()) {
    const path = join(rootDir, entry.path);
    mkdirSync(dirname(path), { recursive: true });
    rmSync(path, { force: true });
    if (entry.kind === 'file') writeFileSync(path, entry.content);
    else symlinkSync(entry.target, path);
  }
}
