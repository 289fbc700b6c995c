import { describe, expect, it } from '@jest/globals';
import { HttpMethod, RequestContext } from '@kubernetes/client-node';
import { SharedDispatcherKubeConfig } from '../../../src/kube/client.js';

// client-node makes a new undici Agent (so a new TLS connection) per typed API call; the operator
// must reuse one, or its RSS grows with every request in flight.
describe('SharedDispatcherKubeConfig', () => {
  it('gives every typed API call the same dispatcher', async () => {
    const kc = new SharedDispatcherKubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    const first = new RequestContext('https://127.0.0.1:6443/api/v1/nodes', HttpMethod.GET);
    const second = new RequestContext('https://127.0.0.1:6443/api/v1/pods', HttpMethod.GET);
    await kc.applySecurityAuthentication(first);
    await kc.applySecurityAuthentication(second);
    expect(first.getDispatcher()).toBeDefined();
    expect(second.getDispatcher()).toBe(first.getDispatcher());
    expect(second.getHeaders()['Authorization']).toBe('Bearer t');
    await first.getDispatcher()?.close();
  });

  it("leaves a proxied cluster to client-node's own dispatcher", async () => {
    const kc = new SharedDispatcherKubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'c', server: 'https://10.0.0.1:6443', skipTLSVerify: true, proxyUrl: 'http://127.0.0.1:3128' },
      ],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    const context = new RequestContext('https://10.0.0.1:6443/api/v1/nodes', HttpMethod.GET);
    await kc.applySecurityAuthentication(context);
    expect(context.getDispatcher()?.constructor.name).toBe('ProxyAgent');
    await context.getDispatcher()?.close();
  });
});
