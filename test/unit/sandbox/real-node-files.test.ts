/**
 * The pure parts of real nodes: the configuration files they carry, their network addresses, and
 * the PID-1 script's syntax (the e2e files run it for real).
 */
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import { networkForSlot } from '../../../src/sandbox/real-node/host-resources.js';
import {
  cniConfig,
  containerdConfig,
  kubeletConfig,
  kubeletKubeconfig,
  NODE_API_SERVER,
  NODE_PATHS,
  PAUSE_IMAGE,
  kubeletDefaults,
} from '../../../src/sandbox/real-node/node-files.js';
import { nodeUnitEntries } from '../../../src/sandbox/real-node/node-units.js';
import { NODE_INIT_SCRIPT } from '../../../src/sandbox/real-node/rootfs.js';

describe('real-node files', () => {
  it("configure the kubelet for systemd's cgroups, trusting the control plane CA", () => {
    const config = parse(kubeletConfig()) as Record<string, unknown>;
    expect(config).not.toHaveProperty('cgroupRoot'); // the node's cgroup namespace is its root
    expect(config).toMatchObject({
      kind: 'KubeletConfiguration',
      cgroupDriver: 'systemd',
      failSwapOn: false,
      failCgroupV1: false,
      authentication: { x509: { clientCAFile: `/${NODE_PATHS.caCert}` }, anonymous: { enabled: false } },
    });
    expect(parse(kubeletKubeconfig())).toMatchObject({ clusters: [{ cluster: { server: NODE_API_SERVER } }] });
  });

  it('let containerd start pods without CAP_SYS_RESOURCE, with the pause image the nodes import', () => {
    expect(containerdConfig()).toContain('restrict_oom_score_adj = true');
    expect(containerdConfig()).toContain(`sandbox_image = "${PAUSE_IMAGE}"`);
    const cni = JSON.parse(cniConfig()) as { plugins: { type: string; ipMasq?: boolean }[] };
    expect(cni.plugins.map((p) => p.type)).toEqual(['bridge', 'loopback']);
    expect(cni.plugins[0]?.ipMasq).toBe(false); // no iptables rules
    expect(containerdConfig()).toContain('SystemdCgroup = true'); // matches the kubelet's cgroupDriver
  });

  it("run the kubelet and the API relay as enabled units, with this node's flags", () => {
    const entries = nodeUnitEntries();
    const file = (path: string): string => {
      const entry = entries.find((e) => e.path === path);
      return entry?.kind === 'file' ? entry.content : '';
    };
    expect(file('etc/systemd/system/kubelet.service')).toMatch(/ExecStart=\/usr\/local\/bin\/kubelet .*\$KUBELET_ARGS/);
    expect(file('etc/systemd/system/kubelet.service')).toContain('After=containerd.service');
    expect(entries).toContainEqual({
      path: 'etc/systemd/system/multi-user.target.wants/kubelet.service',
      kind: 'symlink',
      target: '/etc/systemd/system/kubelet.service',
    });
    expect(entries).toContainEqual({
      path: 'etc/systemd/system/sys-kernel-debug.mount',
      kind: 'symlink',
      target: '/dev/null',
    });
    expect(kubeletDefaults('n1', '10.213.0.2', 'a=b')).toBe(
      'KUBELET_ARGS="--hostname-override=n1 --node-ip=10.213.0.2 --node-labels=a=b --v=1"\n',
    );
  });

  it('give each slot its own names and /30', () => {
    expect(networkForSlot(0)).toEqual({
      slot: 0,
      netns: 'skyhook-node-0',
      hostInterface: 'skyn0',
      hostIp: '10.213.0.1',
      nodeIp: '10.213.0.2',
    });
    expect(networkForSlot(65)).toMatchObject({ hostIp: '10.213.1.5', nodeIp: '10.213.1.6' });
    expect(networkForSlot(16_383).hostInterface.length).toBeLessThanOrEqual(15); // IFNAMSIZ
  });

  it('ship a PID-1 script that sh parses', () => {
    expect(() => execFileSync('sh', ['-n', NODE_INIT_SCRIPT])).not.toThrow();
  });
});
