/** The real nodes' apt proxy: which hosts it forwards to (this machine's apt sources) and what it refuses. */
import { describe, expect, it } from '@jest/globals';
import { aptProxyConfig, aptSourceHosts, refusal } from '../../../src/sandbox/real-node/apt-proxy.js';

const ALLOWED = ['deb.debian.org'];

describe('real-node apt proxy', () => {
  it("takes the hosts of this machine's apt sources, deb822 and one-line, ignoring comments", () => {
    const deb822 = 'Types: deb\n# http://snapshot.debian.org/archive/debian/x\nURIs: http://deb.debian.org/debian\n';
    const oneLine =
      'deb http://security.debian.org/debian-security bookworm-security main\n# deb http://x.example/ a b\n';
    expect(aptSourceHosts([deb822, oneLine])).toEqual(['deb.debian.org', 'security.debian.org']);
  });

  it('forwards GET and HEAD to those hosts only', () => {
    expect(refusal('GET', 'http://deb.debian.org/debian/dists/bookworm/InRelease', ALLOWED)).toBeUndefined();
    expect(refusal('HEAD', 'http://deb.debian.org/debian/pool/x.deb', ALLOWED)).toBeUndefined();
    expect(refusal('GET', 'http://example.com/', ALLOWED)).toMatch(/host example.com is not one of/);
    expect(refusal('GET', 'http://10.0.0.1/debian/', ALLOWED)).toMatch(/IP address 10.0.0.1 not allowed/);
    expect(refusal('GET', 'http://[fd00::1]/debian/', ALLOWED)).toMatch(/IP address/);
    expect(refusal('POST', 'http://deb.debian.org/debian/', ALLOWED)).toMatch(/method POST not allowed/);
    expect(refusal('GET', 'https://deb.debian.org/debian/', ALLOWED)).toMatch(/https: not allowed/);
    expect(refusal('GET', '/debian/', ALLOWED)).toMatch(/not an absolute URL/);
  });

  it("points the node's apt at the host end of its veth", () => {
    expect(aptProxyConfig('10.213.0.1')).toContain('Acquire::http::Proxy "http://10.213.0.1:3142/";');
  });
});
