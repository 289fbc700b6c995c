/**
 * The operator's HTTP/2 connection announces client-go's flow-control windows (shared-dispatcher.ts):
 * checked on what an HTTP/2 server (TLS, certificates of the sandbox's PKI) is actually told, since
 * undici validates one spelling of the stream window option and reads another.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import {
  HTTP2_CONNECTION_WINDOW_BYTES,
  HTTP2_STREAM_WINDOW_BYTES,
  SharedDispatcherKubeConfig,
} from '../../../src/kube/shared-dispatcher.js';
import { createPki, writeKubeconfig } from '../../../src/sandbox/pki.js';

describe('the operator connection to the API server', () => {
  let dir: string;
  let server: Http2SecureServer;
  let kubeconfig: string;
  const sessions: ServerHttp2Session[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'skyhook-h2-'));
    const pki = await createPki(dir);
    server = createSecureServer({
      key: await readFile(pki.servingKey),
      cert: await readFile(pki.servingCert),
    });
    server.on('session', (session) => sessions.push(session));
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: {}, items: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    kubeconfig = join(dir, 'kubeconfig');
    await writeKubeconfig(kubeconfig, `https://127.0.0.1:${port}`, pki);
  });

  afterAll(async () => {
    for (const session of sessions) session.destroy();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it("speaks HTTP/2 over one connection with client-go's stream window and a 32 MiB connection window", async () => {
    const kc = new SharedDispatcherKubeConfig();
    kc.loadFromFile(kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    await Promise.all([core.listNode(), core.listNode(), core.listNode()]);
    expect(sessions).toHaveLength(1);
    const session = sessions[0]!;
    expect(session.remoteSettings.initialWindowSize).toBe(HTTP2_STREAM_WINDOW_BYTES);
    // The client raised its connection window with a WINDOW_UPDATE on stream 0: the server may send that much.
    expect(session.state.remoteWindowSize).toBeGreaterThan(HTTP2_CONNECTION_WINDOW_BYTES - 2 ** 20);
    expect(HTTP2_STREAM_WINDOW_BYTES).toBe(4 * 2 ** 20);
  });
});
