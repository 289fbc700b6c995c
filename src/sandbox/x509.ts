/**
 * X.509 certificates made in-process, with @peculiar/x509 on Node's WebCrypto: no openssl CLI to
 * install, and every certificate gets a random serial number, so there is no serial file that two
 * signings running at once could both write (issue 13's `ca.srl … short line` start failure).
 * Keys are ECDSA P-256; every key is written as PKCS#8 PEM (`PRIVATE KEY`), which etcd,
 * kube-apiserver, the kubelet, kwok and Node's TLS all read. Nothing here touches the disk.
 */
// tsyringe, which @peculiar/x509 uses inside, throws at import without the Reflect metadata API.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, generateKeyPair, KeyObject, webcrypto } from 'node:crypto';
import { promisify } from 'node:util';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const;
/** Sandboxes live minutes to days; a month is plenty and keeps a leaked key short-lived. */
const VALIDITY_MS = 30 * 24 * 3600 * 1000;
/** Backdated so that a clock a little behind (another process, a VM) still accepts them. */
const BACKDATE_MS = 3600 * 1000;

// Explicit, not the library's guess from globals (jest's sandboxed globals, older Node).
x509.cryptoProvider.set(webcrypto);

/** A CA able to sign: its certificate (PEM) and its private key. */
export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

/** A certificate and its private key, both PEM. */
export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
}

export interface CertificateRequest {
  commonName: string;
  /** One `O=` each; Kubernetes reads them as the user's groups. */
  organizations?: string[];
  /** Extended key usages: `client` for users and kubelets talking to the API server, `server` for endpoints. */
  usages: ('client' | 'server')[];
  dnsNames?: string[];
  ipAddresses?: string[];
}

function subjectName(commonName: string, organizations: string[] = []): x509.JsonName {
  return [{ CN: [commonName] }, ...organizations.map((o) => ({ O: [o] }))];
}

async function newKeyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

function privateKeyPem(key: CryptoKey): string {
  return KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }).toString();
}

function validity(): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  return { notBefore: new Date(now - BACKDATE_MS), notAfter: new Date(now + VALIDITY_MS) };
}

/** A new self-signed CA (may sign certificates, nothing else). */
export async function createCertificateAuthority(commonName: string): Promise<CertificateAuthority> {
  const keys = await newKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: subjectName(commonName),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    ...validity(),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: privateKeyPem(keys.privateKey) };
}

async function caSigningKey(ca: CertificateAuthority): Promise<CryptoKey> {
  try {
    return createPrivateKey(ca.keyPem).toCryptoKey(KEY_ALGORITHM, false, ['sign']);
  } catch (error) {
    throw new Error(
      `the CA key is not an ECDSA P-256 PKCS#8 PEM key (${(error as Error).message}): make a new CA with createCertificateAuthority`,
    );
  }
}

/** A new key pair and a certificate for it, signed by `ca`. */
export async function issueCertificate(
  ca: CertificateAuthority,
  request: CertificateRequest,
): Promise<IssuedCertificate> {
  if (request.usages.length === 0)
    throw new Error(`certificate ${request.commonName}: give at least one usage ('client' or 'server')`);
  const caCert = new x509.X509Certificate(ca.certPem);
  const [signingKey, keys] = await Promise.all([caSigningKey(ca), newKeyPair()]);
  const sans: x509.JsonGeneralName[] = [
    ...(request.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
    ...(request.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
  ];
  const ekus = request.usages.map((u) =>
    u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
  );
  const cert = await x509.X509CertificateGenerator.create({
    subject: subjectName(request.commonName, request.organizations),
    // The parsed name, not a string: chains match on the issuer's exact encoded bytes.
    issuer: caCert.subjectName,
    publicKey: keys.publicKey,
    signingKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    ...validity(),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(ekus),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      ...(sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : []),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: privateKeyPem(keys.privateKey) };
}

const generateKeyPairAsync = promisify(generateKeyPair);

/** An RSA key pair for signing service-account tokens (PKCS#8 private key, SPKI public key). */
export async function createSigningKeyPair(): Promise<{ keyPem: string; publicKeyPem: string }> {
  const { privateKey, publicKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { keyPem: privateKey, publicKeyPem: publicKey };
}
