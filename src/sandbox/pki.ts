/**
 * The control plane's certificates, as files in its run directory: one CA signs the API server's
 * serving certificate (also kwok's kubelet endpoint) and the admin client certificate; a separate
 * RSA key pair signs service-account tokens. Made in-process (./x509.ts), each file written once by
 * one writer, so starts running at the same time cannot disturb each other.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  createCertificateAuthority,
  createSigningKeyPair,
  issueCertificate,
  type CertificateAuthority,
  type CertificateRequest,
} from './x509.js';

export interface Pki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

/** Where an issued certificate and its key were written. */
export interface CertificateFiles {
  cert: string;
  key: string;
}

/** Names the API server answers to: its loopback address and the in-cluster Service names. */
const SERVING_REQUEST: CertificateRequest = {
  commonName: 'kube-apiserver',
  usages: ['server'],
  ipAddresses: ['127.0.0.1'],
  dnsNames: [
    'localhost',
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    'kubernetes.default.svc.cluster.local',
  ],
};

/** Whole file or nothing: written beside its final name, then renamed over it. */
async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const partial = `${path}.${randomBytes(4).toString('hex')}.partial`;
  await writeFile(partial, text, { mode });
  await rename(partial, path);
}

async function writePair(dir: string, stem: string, certPem: string, keyPem: string): Promise<CertificateFiles> {
  const files = { cert: join(dir, `${stem}.crt`), key: join(dir, `${stem}.key`) };
  await Promise.all([writeAtomically(files.cert, certPem, 0o644), writeAtomically(files.key, keyPem, 0o600)]);
  return files;
}

export async function createPki(dir: string): Promise<Pki> {
  const ca = await createCertificateAuthority('skyhook-sandbox-ca');
  const [caFiles, serving, admin, serviceAccount] = await Promise.all([
    writePair(dir, 'ca', ca.certPem, ca.keyPem),
    issueCertificate(ca, SERVING_REQUEST),
    issueCertificate(ca, { commonName: 'admin', organizations: ['system:masters'], usages: ['client'] }),
    createSigningKeyPair(),
  ]);
  const [servingFiles, adminFiles] = await Promise.all([
    writePair(dir, 'serving', serving.certPem, serving.keyPem),
    writePair(dir, 'admin', admin.certPem, admin.keyPem),
    writeAtomically(join(dir, 'sa.key'), serviceAccount.keyPem, 0o600),
    writeAtomically(join(dir, 'sa.pub'), serviceAccount.publicKeyPem, 0o644),
  ]);
  return {
    caCert: caFiles.cert,
    caKey: caFiles.key,
    servingCert: servingFiles.cert,
    servingKey: servingFiles.key,
    adminCert: adminFiles.cert,
    adminKey: adminFiles.key,
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
}

async function loadCa(pki: Pick<Pki, 'caCert' | 'caKey'>): Promise<CertificateAuthority> {
  const [certPem, keyPem] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.caKey, 'utf8')]);
  return { certPem, keyPem };
}

export interface ClientCertificateOptions {
  /** The user name, e.g. `system:node:<node>` for a kubelet. */
  commonName: string;
  /** The user's groups, e.g. `['system:nodes']`. */
  organizations?: string[];
  /** Files are `<fileStem>.crt` and `<fileStem>.key` beside the CA; defaults to the common name made file-safe. */
  fileStem?: string;
  /** Also valid as a serving certificate for these names (a kubelet's own endpoint). */
  serving?: { dnsNames?: string[]; ipAddresses?: string[] };
}

/**
 * Signs one more client certificate with the control plane's CA (e.g. a real kubelet's:
 * `{ commonName: 'system:node:n1', organizations: ['system:nodes'] }`) and writes it beside the CA.
 */
export async function signClientCertificate(
  pki: Pick<Pki, 'caCert' | 'caKey'>,
  options: ClientCertificateOptions,
): Promise<CertificateFiles> {
  const issued = await issueCertificate(await loadCa(pki), {
    commonName: options.commonName,
    usages: options.serving ? ['client', 'server'] : ['client'],
    ...(options.organizations ? { organizations: options.organizations } : {}),
    ...(options.serving ?? {}),
  });
  const stem = options.fileStem ?? options.commonName.replace(/[^A-Za-z0-9._-]/g, '_');
  return await writePair(dirname(pki.caCert), stem, issued.certPem, issued.keyPem);
}

/** A kubeconfig that embeds the certificates, so it stays usable when copied elsewhere. */
export async function writeKubeconfig(path: string, server: string, pki: Pki): Promise<string> {
  const b64 = async (file: string): Promise<string> => (await readFile(file)).toString('base64');
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: skyhook-sandbox',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${await b64(pki.caCert)}`,
    'users:',
    '- name: admin',
    '  user:',
    `    client-certificate-data: ${await b64(pki.adminCert)}`,
    `    client-key-data: ${await b64(pki.adminKey)}`,
    'contexts:',
    '- name: skyhook-sandbox',
    '  context: {cluster: skyhook-sandbox, user: admin}',
    'current-context: skyhook-sandbox',
    '',
  ].join('\n');
  await writeFile(path, text, { mode: 0o600 });
  return text;
}
