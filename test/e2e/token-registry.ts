/**
 * The sandbox's Distribution registry with token authentication, as ghcr.io and Docker Hub use it: a
 * 401 names a token service (`WWW-Authenticate: Bearer realm=…`), which hands out JWTs for a scope to
 * the right credentials. The token service here is a small HTTPS server of the test; the registry
 * checks its tokens for real (signature chained to the sandbox CA through `x5c`, issuer, audience,
 * expiry, the access granted). The realm is named `localhost`: cosign (go-containerregistry), like the
 * verifier, refuses a realm that is a loopback or private IP literal other than the registry's own host.
 */
import { createServer, type Server } from 'node:https';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createPrivateKey, randomUUID, sign, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { findRegistryBinary } from '../../src/sandbox/binaries.js';
import { signClientCertificate, type Pki } from '../../src/sandbox/pki.js';
import { freePorts } from '../../src/sandbox/ports.js';
import { startComponent, stopComponent } from '../../src/sandbox/processes.js';
import { probeRegistry } from '../../src/sandbox/registry/registry.js';

const SERVICE = 'skyhook-token-registry';
const ISSUER = 'skyhook-test-token-service';

export interface TokenRegistry {
  host: string;
  /** Requests the token service answered, as `<status> <scope>`. */
  tokenRequests: string[];
  /** A token for `repository:<name>:<actions>`, minted directly (for the test's own pushes). */
  mint(repository: string, actions: string[]): string;
  stop(): Promise<void>;
}

const b64url = (value: Buffer | string): string => Buffer.from(value).toString('base64url');

export async function startTokenRegistry(
  runDir: string,
  pki: Pick<Pki, 'caCert' | 'caKey'>,
  credentials: { username: string; password: string },
): Promise<TokenRegistry> {
  const dir = join(runDir, 'token-registry');
  mkdirSync(join(runDir, 'logs'), { recursive: true });
  mkdirSync(dir, { recursive: true });
  const serving = await signClientCertificate(pki, {
    commonName: 'token-registry',
    fileStem: 'token-registry-serving',
    serving: { ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'] },
  });
  const signer = await signClientCertificate(pki, { commonName: 'token-signer', fileStem: 'token-signer' });
  const signerKey = createPrivateKey(readFileSync(signer.key));
  const signerDer = new X509Certificate(readFileSync(signer.cert)).raw;
  const [registryPort, tokenPort] = (await freePorts(2)) as [number, number];

  const mint = (repository: string, actions: string[]): string => {
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: 'ES256', typ: 'JWT', x5c: [signerDer.toString('base64')] };
    const claims = {
      iss: ISSUER,
      sub: credentials.username,
      aud: SERVICE,
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomUUID(),
      access: [{ type: 'repository', name: repository, actions }],
    };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const signature = sign('sha256', Buffer.from(input), { key: signerKey, dsaEncoding: 'ieee-p1363' });
    return `${input}.${b64url(signature)}`;
  };

  const tokenRequests: string[] = [];
  const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  const server: Server = createServer(
    { cert: readFileSync(serving.cert), key: readFileSync(serving.key) },
    (req, res) => {
      const scope = new URL(req.url ?? '/', 'https://x').searchParams.get('scope') ?? '';
      const match = /^repository:([^:]+):(.+)$/.exec(scope);
      const status = req.headers.authorization !== expected ? 401 : match ? 200 : 400;
      tokenRequests.push(`${status} ${scope}`);
      res.writeHead(status, { 'content-type': 'application/json' });
      if (status !== 200) return res.end('{"errors":[{"code":"UNAUTHORIZED"}]}');
      const token = mint(match![1]!, match![2]!.split(','));
      return res.end(JSON.stringify({ token, access_token: token, expires_in: 300 }));
    },
  );
  await new Promise<void>((resolve) => server.listen(tokenPort, '127.0.0.1', resolve));

  const configFile = join(dir, 'config.yml');
  writeFileSync(
    configFile,
    `version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: ${JSON.stringify(join(dir, 'storage'))}
http:
  addr: 127.0.0.1:${registryPort}
  tls:
    certificate: ${JSON.stringify(serving.cert)}
    key: ${JSON.stringify(serving.key)}
auth:
  token:
    realm: https://localhost:${tokenPort}/token
    service: ${SERVICE}
    issuer: ${ISSUER}
    rootcertbundle: ${JSON.stringify(pki.caCert)}
`,
  );
  const env = {
    ...process.env,
    OTEL_TRACES_EXPORTER: 'none',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
  };
  const component = startComponent(runDir, 'token-registry', findRegistryBinary(), ['serve', configFile], env);
  const host = `127.0.0.1:${registryPort}`;
  const ca = readFileSync(pki.caCert, 'utf8');
  const deadline = Date.now() + 30_000;
  // Up once /v2/ answers at all: 401 with the Bearer challenge.
  while ((await probeRegistry(host, ca)) !== 401) {
    if (Date.now() > deadline) throw new Error(`the token registry did not answer; see ${component.logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    host,
    tokenRequests,
    mint,
    stop: async () => {
      server.close();
      await stopComponent(component, 5000);
    },
  };
}
