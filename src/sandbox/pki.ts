/**
 * The control plane's certificates, made with the openssl CLI: one CA signs the API server's
 * serving certificate (also used by kwok's kubelet endpoint) and the admin client certificate;
 * a separate key pair signs service-account tokens.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

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

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (error) {
    const err = error as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') throw new Error('the openssl command is missing: install it (Debian: apt-get install openssl)');
    throw new Error(`openssl ${args[0]} failed: ${err.stderr ?? err.message}`);
  }
}

async function newKey(path: string): Promise<void> {
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
}

async function signed(dir: string, name: string, subject: string, extensions: string, pki: Pick<Pki, 'caCert' | 'caKey'>): Promise<[string, string]> {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  await newKey(key);
  await openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  await writeFile(ext, extensions);
  await openssl(['x509', '-req', '-in', csr, '-CA', pki.caCert, '-CAkey', pki.caKey, '-CAcreateserial', '-days', '30', '-out', cert, '-extfile', ext]);
  return [cert, key];
}

export async function createPki(dir: string): Promise<Pki> {
  const caKey = join(dir, 'ca.key');
  const caCert = join(dir, 'ca.crt');
  await newKey(caKey);
  await openssl(['req', '-x509', '-new', '-key', caKey, '-subj', '/CN=skyhook-sandbox-ca', '-days', '30', '-out', caCert]);
  const ca = { caCert, caKey };
  const [[servingCert, servingKey], [adminCert, adminKey]] = await Promise.all([
    signed(dir, 'serving', '/CN=kube-apiserver',
      'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n', ca),
    signed(dir, 'admin', '/CN=admin/O=system:masters',
      'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n', ca),
  ]);
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  await openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', serviceAccountKey]);
  await openssl(['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub]);
  return { caCert, caKey, servingCert, servingKey, adminCert, adminKey, serviceAccountKey, serviceAccountPub };
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
