/**
 * The sandbox's certificates, checked with Node's own X.509 parser and a real TLS handshake: they
 * chain to the CA, carry the names and usages the API server and its clients check, their keys are
 * PKCS#8 PEM, and many can be made at once without one disturbing another (issue 13).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { createPki, signClientCertificate, type Pki } from '../../../src/sandbox/pki.js';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const dirs: string[] = [];

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skyhook-pki-'));
  dirs.push(dir);
  return dir;
}

const cert = (path: string): X509Certificate => new X509Certificate(readFileSync(path));

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('sandbox PKI', () => {
  let pki: Pki;
  let dir: string;

  it('writes the files the control plane is started with, and nothing else', async () => {
    dir = newDir();
    pki = await createPki(dir);
    expect(readdirSync(dir).sort()).toEqual([
      'admin.crt',
      'admin.key',
      'ca.crt',
      'ca.key',
      'sa.key',
      'sa.pub',
      'serving.crt',
      'serving.key',
    ]);
    expect(pki).toEqual({
      caCert: join(dir, 'ca.crt'),
      caKey: join(dir, 'ca.key'),
      servingCert: join(dir, 'serving.crt'),
      servingKey: join(dir, 'serving.key'),
      adminCert: join(dir, 'admin.crt'),
      adminKey: join(dir, 'admin.key'),
      serviceAccountKey: join(dir, 'sa.key'),
      serviceAccountPub: join(dir, 'sa.pub'),
    });
  });

  it('makes a CA that only signs, and leaf certificates that chain to it', () => {
    const ca = cert(pki.caCert);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toBe('CN=skyhook-sandbox-ca');
    expect(ca.verify(ca.publicKey)).toBe(true);
    for (const leaf of [pki.servingCert, pki.adminCert].map(cert)) {
      expect(leaf.ca).toBe(false);
      expect(leaf.checkIssued(ca)).toBe(true);
      expect(leaf.verify(ca.publicKey)).toBe(true);
      expect(new Date(leaf.validFrom).getTime()).toBeLessThan(Date.now());
      expect(new Date(leaf.validTo).getTime()).toBeGreaterThan(Date.now() + 7 * 24 * 3600 * 1000);
    }
  });

  it("gives the serving certificate the API server's names and the admin one the masters group", () => {
    const serving = cert(pki.servingCert);
    expect(serving.subjectAltName?.split(', ')).toEqual(
      expect.arrayContaining(['IP Address:127.0.0.1', 'DNS:localhost', 'DNS:kubernetes.default.svc']),
    );
    expect(serving.keyUsage).toEqual([SERVER_AUTH]);
    const admin = cert(pki.adminCert);
    expect(admin.subject.split('\n')).toEqual(['CN=admin', 'O=system:masters']);
    expect(admin.keyUsage).toEqual([CLIENT_AUTH]);
    expect(admin.subjectAltName).toBeUndefined();
  });

  it('writes every private key as PKCS#8 PEM matching its certificate, readable only by the owner', () => {
    for (const [crt, key] of [
      [pki.servingCert, pki.servingKey],
      [pki.adminCert, pki.adminKey],
      [pki.caCert, pki.caKey],
    ] as const) {
      const pem = readFileSync(key, 'utf8');
      expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
      const privateKey = createPrivateKey(pem);
      expect(privateKey.asymmetricKeyType).toBe('ec');
      expect(privateKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
      expect(cert(crt).checkPrivateKey(privateKey)).toBe(true);
      expect(statSync(key).mode & 0o777).toBe(0o600);
    }
    expect(statSync(pki.serviceAccountKey).mode & 0o777).toBe(0o600);
    const sa = createPrivateKey(readFileSync(pki.serviceAccountKey));
    expect(sa.asymmetricKeyType).toBe('rsa');
    expect(sa.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(createPublicKey(sa).export({ type: 'spki', format: 'pem' })).toBe(
      readFileSync(pki.serviceAccountPub, 'utf8'),
    );
  });

  it('gives certificates distinct serial numbers', () => {
    const serials = [pki.caCert, pki.servingCert, pki.adminCert].map((p) => cert(p).serialNumber);
    expect(new Set(serials).size).toBe(3);
  });

  it("signs extra client certificates, e.g. a kubelet's, with the same CA", async () => {
    const files = await signClientCertificate(pki, { commonName: 'system:node:n1', organizations: ['system:nodes'] });
    expect(files).toEqual({ cert: join(dir, 'system_node_n1.crt'), key: join(dir, 'system_node_n1.key') });
    const kubelet = cert(files.cert);
    expect(kubelet.subject.split('\n')).toEqual(['CN=system:node:n1', 'O=system:nodes']);
    expect(kubelet.keyUsage).toEqual([CLIENT_AUTH]);
    expect(kubelet.verify(cert(pki.caCert).publicKey)).toBe(true);
    expect(kubelet.checkPrivateKey(createPrivateKey(readFileSync(files.key)))).toBe(true);

    const both = await signClientCertificate(pki, {
      commonName: 'system:node:n2',
      organizations: ['system:nodes'],
      fileStem: 'kubelet-n2',
      serving: { ipAddresses: ['10.0.0.2'], dnsNames: ['n2'] },
    });
    expect(cert(both.cert).keyUsage?.sort()).toEqual([SERVER_AUTH, CLIENT_AUTH].sort());
    expect(cert(both.cert).subjectAltName).toBe('IP Address:10.0.0.2, DNS:n2');
  });

  it('passes a real TLS handshake: the client trusts the server by name and the server accepts the client', async () => {
    const server = createServer(
      {
        cert: readFileSync(pki.servingCert),
        key: readFileSync(pki.servingKey),
        ca: readFileSync(pki.caCert),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (socket) => socket.end(`hello ${socket.getPeerCertificate().subject.CN}`),
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      for (const host of ['127.0.0.1', 'localhost']) {
        const socket: TLSSocket = connect({
          host,
          port,
          servername: host === 'localhost' ? host : undefined,
          ca: readFileSync(pki.caCert),
          cert: readFileSync(pki.adminCert),
          key: readFileSync(pki.adminKey),
        });
        let reply = '';
        socket.on('data', (chunk: Buffer) => (reply += chunk.toString()));
        await once(socket, 'end');
        expect(socket.authorized).toBe(true);
        expect(reply).toBe('hello admin');
        socket.destroy();
      }
    } finally {
      server.close();
    }
  });

  it('makes many PKIs at once, each complete and independent', async () => {
    const all = await Promise.all(Array.from({ length: 8 }, () => createPki(newDir())));
    const cas = all.map((p) => cert(p.caCert));
    for (const [i, p] of all.entries()) {
      expect(cert(p.servingCert).verify(cas[i]!.publicKey)).toBe(true);
      expect(cert(p.adminCert).verify(cas[(i + 1) % cas.length]!.publicKey)).toBe(false);
    }
  });
});
