/**
 * The sandbox's OCI registry: CNCF Distribution built from its Go module (tools/build-registry.sh),
 * on the machine's loopback with a serving certificate from the sandbox's CA and basic auth. Real
 * nodes' containerd pulls the package images from it as the mirror of ghcr.io, docker.io and
 * registry.k8s.io, with credentials from an imagePullSecret, as an air-gapped cluster does.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { findRegistryBinary } from '../binaries.js';
import { signClientCertificate, type Pki } from '../pki.js';
import { freePorts } from '../ports.js';
import { startComponent, stopComponent, type Component } from '../processes.js';
import { htpasswdLine, registryConfig } from './registry-files.js';

export interface RegistryCredentials {
  username: string;
  password: string;
}

export interface SandboxRegistry {
  /** `127.0.0.1:<port>`: the registry as the machine reaches it. */
  host: string;
  port: number;
  /** The CA that signed its serving certificate (the sandbox's). */
  caCert: string;
  /** A directory holding only that CA as `ca.crt`, for tools that take a certificate directory (buildah). */
  certDir: string;
  /** Basic-auth user; undefined: the registry asks for none. */
  credentials: RegistryCredentials | undefined;
  component: Component;
  stop(): Promise<void>;
}

export interface StartRegistryOptions {
  /** The run directory: `registry/` (config, storage, htpasswd) and `logs/registry.log` go here. */
  runDir: string;
  pki: Pick<Pki, 'caCert' | 'caKey'>;
  /** Basic auth with this user; without, anyone on the loopback may pull (the sandbox's own mirror). */
  credentials?: RegistryCredentials;
  /** The image storage; default `registry/storage` in the run directory. */
  storageDir?: string;
  timeoutMs?: number;
}

/** Status of GET /v2/ over TLS trusting `ca`, with basic auth when `auth` is given (0: no answer). */
export function probeRegistry(host: string, ca: string, auth?: RegistryCredentials): Promise<number> {
  const headers: Record<string, string> = auth
    ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` }
    : {};
  return new Promise((resolveStatus) => {
    const req = request(`https://${host}/v2/`, { ca, headers, timeout: 2000 }, (res) => {
      res.resume();
      resolveStatus(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolveStatus(0));
    req.end();
  });
}

export async function startRegistry(options: StartRegistryOptions): Promise<SandboxRegistry> {
  const binary = findRegistryBinary();
  const dir = join(options.runDir, 'registry');
  const certDir = join(dir, 'certs');
  mkdirSync(certDir, { recursive: true });
  mkdirSync(join(options.runDir, 'logs'), { recursive: true });
  const serving = await signClientCertificate(options.pki, {
    commonName: 'sandbox-registry',
    fileStem: 'registry-serving',
    serving: { ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'] },
  });
  const ca = readFileSync(options.pki.caCert, 'utf8');
  writeFileSync(join(certDir, 'ca.crt'), ca);
  const htpasswdFile = options.credentials ? await writeHtpasswd(dir, options.credentials) : undefined;
  const [port] = (await freePorts(1)) as [number];
  const configFile = join(dir, 'config.yml');
  writeFileSync(
    configFile,
    registryConfig({
      port,
      storageDir: options.storageDir ?? join(dir, 'storage'),
      certFile: serving.cert,
      keyFile: serving.key,
      ...(htpasswdFile ? { htpasswdFile } : {}),
    }),
  );
  // Distribution v3 exports traces over OTLP by default; the sandbox has no collector.
  const env = {
    ...process.env,
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  const component = startComponent(options.runDir, 'registry', binary, ['serve', configFile], env);
  const host = `127.0.0.1:${port}`;
  await waitReady(component, host, ca, options.credentials, options.timeoutMs ?? 30_000);
  return {
    host,
    port,
    caCert: options.pki.caCert,
    certDir,
    credentials: options.credentials,
    component,
    stop: () => stopComponent(component, 5000),
  };
}

async function writeHtpasswd(dir: string, credentials: RegistryCredentials): Promise<string> {
  const file = join(dir, 'htpasswd');
  const hash = await bcrypt.hash(credentials.password, 10);
  writeFileSync(file, htpasswdLine(credentials.username, hash), { mode: 0o600 });
  return file;
}

/** Ready once GET /v2/ answers 200 to the credentials over TLS; fails naming the log if it exits first. */
async function waitReady(
  component: Component,
  host: string,
  ca: string,
  credentials: RegistryCredentials | undefined,
  timeoutMs: number,
): Promise<void> {
  let exited: string | undefined;
  void component.exited.then((how) => (exited = how));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited !== undefined) throw new Error(`the sandbox registry exited (${exited}); see ${component.logFile}`);
    if ((await probeRegistry(host, ca, credentials)) === 200) return;
    if (Date.now() > deadline)
      throw new Error(
        `the sandbox registry was not ready at https://${host}/v2/ after ${timeoutMs} ms; see ${component.logFile}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}
