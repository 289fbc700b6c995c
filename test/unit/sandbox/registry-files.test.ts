import { describe, expect, it } from '@jest/globals';
import {
  htpasswdLine,
  mirrorHostsToml,
  NODE_REGISTRY_ADDRESS,
  registryConfig,
  registryPath,
} from '../../../src/sandbox/registry/registry-files.js';

describe('registryPath', () => {
  it('drops the registry host: a mirror is asked for the path only', () => {
    expect(registryPath('ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1')).toBe(
      'nvidia/skyhook-packages/shellscript:1.1.1',
    );
    expect(registryPath('registry.k8s.io/pause:3.10')).toBe('pause:3.10');
    expect(registryPath('localhost:5000/a/b:1')).toBe('a/b:1');
  });

  it("makes Docker Hub's short names whole", () => {
    expect(registryPath('docker.io/library/busybox:1.37')).toBe('library/busybox:1.37');
    expect(registryPath('busybox:1.37')).toBe('library/busybox:1.37');
    expect(registryPath('docker.io/busybox:1.37')).toBe('library/busybox:1.37');
    expect(registryPath('someone/tool:2')).toBe('someone/tool:2');
  });
});

describe('registry configuration', () => {
  it('serves on loopback only, over TLS, with htpasswd basic auth', () => {
    const text = registryConfig({
      port: 5123,
      storageDir: '/r/storage',
      certFile: '/r/c.crt',
      keyFile: '/r/c.key',
      htpasswdFile: '/r/htpasswd',
    });
    expect(text).toContain('addr: 127.0.0.1:5123');
    expect(text).toMatch(/tls:\n\s+certificate: "\/r\/c.crt"\n\s+key: "\/r\/c.key"/);
    expect(text).toMatch(/htpasswd:\n\s+realm: skyhook-sandbox\n\s+path: "\/r\/htpasswd"/);
  });

  it('asks for no credentials without an htpasswd file (the sandbox mirror real nodes pull from)', () => {
    const text = registryConfig({ port: 5123, storageDir: '/r/storage', certFile: '/r/c.crt', keyFile: '/r/c.key' });
    expect(text).toContain('rootdirectory: "/r/storage"');
    expect(text).toMatch(/tls:\n\s+certificate: "\/r\/c.crt"/);
    expect(text).not.toContain('auth:');
    expect(text).not.toContain('htpasswd');
  });

  it('refuses a user name htpasswd cannot hold', () => {
    expect(htpasswdLine('u', '$2b$10$x')).toBe('u:$2b$10$x\n');
    expect(() => htpasswdLine('a:b', '$2b$10$x')).toThrow(/no colon/);
  });

  it("sends every pull of a mirrored registry to the sandbox's, trusting the given CA", () => {
    const toml = mirrorHostsToml('/etc/kubernetes/pki/ca.crt');
    expect(toml).toContain(`server = "https://${NODE_REGISTRY_ADDRESS}"`);
    expect(toml).toContain('ca = "/etc/kubernetes/pki/ca.crt"');
    expect(toml).toContain('capabilities = ["pull", "resolve"]');
    // containerd 1.6 refuses a hosts.toml without a host tree ("invalid `host` tree").
    expect(toml).toMatch(
      new RegExp(`\\[host\\."https://${NODE_REGISTRY_ADDRESS}"\\]\\n\\s+ca = "/etc/kubernetes/pki/ca.crt"`),
    );
  });
});
