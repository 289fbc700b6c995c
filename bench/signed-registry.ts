/**
 * The signed package of `rollout-1000-signed`: the sandbox's registry (Distribution, TLS from its own
 * CA, basic auth), one small OCI image pushed to it, signed by the real cosign with a key pair made
 * here (cosign's classic `.sig` tag), and what the operator needs to verify it: the CA file, a pull
 * secret's contents and the public key.
 *
 * The registry's requests are counted from its own access log (one Apache "combined" line per HTTP
 * request, 401 auth challenges included), by the log's length at a mark: nothing sits between the
 * operator and the registry, so what is counted is exactly what the operator's verifier sent, on the
 * path it takes in a cluster. (A counting proxy would need its own TLS certificate and host, changing
 * the path measured.) Simulated nodes never pull, so during the rollout only the operator asks.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPki } from '../src/sandbox/pki.js';
import { startRegistry, type RegistryCredentials, type SandboxRegistry } from '../src/sandbox/registry/registry.js';
import { verifyImage } from '../src/signing/verify.js';
import { credentialsLookup } from '../src/signing/docker-config.js';
import { CLASSIC_FORMAT, cosignOk } from '../test/cosign-binary.js';
import { OciPusher } from '../test/e2e/oci-push.js';
import { parseAccessLog, type RegistryRequest } from './registry-requests.js';

const CREDENTIALS: RegistryCredentials = { username: 'bench', password: 'bench-registry-secret' };
const COSIGN_PASSWORD = 'bench-key-password';
/** Where the signed package lives in the registry; the trust policy covers everything under `bench/`. */
const REPOSITORY = 'bench/signed-package';

export interface SignedRegistry {
  /** `127.0.0.1:<port>`. */
  host: string;
  /** The package's image without its tag (the package version is the tag). */
  image: string;
  /** The trust policy's image prefix. */
  prefix: string;
  /** The manifest digest that was signed. */
  digest: string;
  /** PEM of the cosign public key that signed it. */
  publicKey: string;
  /** The sandbox CA's PEM file (the operator's REGISTRY_CA_FILE). */
  caFile: string;
  /** A `.dockerconfigjson` logging in to the registry (the operator's pull secret). */
  dockerConfigJson: string;
  /** A mark in the access log: the requests answered so far. */
  mark(): number;
  /** The requests the registry answered after `mark`. */
  requestsSince(mark: number): RegistryRequest[];
  /** Verifies the image as the operator does, `times` times, each cold (its own connection): ms each and requests each. */
  verifyLatency(version: string, times: number): Promise<{ ms: number[]; requests: number }>;
  stop(): Promise<void>;
}

/** Starts the registry in `runDir/signed-registry`, pushes `REPOSITORY:<version>` and signs it. */
export async function startSignedRegistry(runDir: string, version: string): Promise<SignedRegistry> {
  const dir = join(runDir, 'signed-registry');
  const work = join(dir, 'cosign');
  mkdirSync(join(work, 'docker'), { recursive: true });
  const pki = await createPki(dir);
  const registry: SandboxRegistry = await startRegistry({ runDir: dir, pki, credentials: CREDENTIALS });
  try {
    const caPem = readFileSync(registry.caCert, 'utf8');
    const pusher = new OciPusher(registry.host, CREDENTIALS, caPem);
    let digest: string;
    try {
      digest = await pusher.image(REPOSITORY, version, 'the signed package of rollout-1000-signed');
    } finally {
      await pusher.close();
    }
    const env = { COSIGN_PASSWORD, DOCKER_CONFIG: join(work, 'docker'), HOME: work, SSL_CERT_FILE: registry.caCert };
    const { username, password } = CREDENTIALS;
    await cosignOk(['login', registry.host, '-u', username, '-p', password], env, work);
    await cosignOk(['generate-key-pair', '--output-key-prefix', 'bench'], env, work);
    const image = `${registry.host}/${REPOSITORY}`;
    await cosignOk(['sign', '--key', 'bench.key', '--yes', ...CLASSIC_FORMAT, `${image}:${version}`], env, work);
    const publicKey = readFileSync(join(work, 'bench.pub'), 'utf8');
    const auth = Buffer.from(`${username}:${password}`).toString('base64');
    const logText = (): string => readFileSync(registry.component.logFile, 'utf8');
    return {
      host: registry.host,
      image,
      prefix: `${registry.host}/bench/`,
      digest,
      publicKey,
      caFile: registry.caCert,
      dockerConfigJson: JSON.stringify({ auths: { [registry.host]: { auth } } }),
      mark: () => parseAccessLog(logText()).length,
      requestsSince: (mark) => parseAccessLog(logText()).slice(mark),
      verifyLatency: async (tag, times) => {
        const keys = [{ name: 'bench', publicKeyPem: publicKey }];
        const access = {
          credentialsFor: credentialsLookup(new Map([[registry.host, CREDENTIALS]])),
          mirrors: {},
          caPem,
        };
        const ms: number[] = [];
        let requests = 0;
        for (let i = 0; i < times; i++) {
          const started = performance.now();
          const result = await verifyImage(`${image}:${tag}`, keys, access);
          ms.push(Math.round((performance.now() - started) * 10) / 10);
          if (result.verdict.kind !== 'verified')
            throw new Error(`the bench's own verification of ${image}:${tag} failed: ${result.verdict.message}`);
          requests = result.requests.length;
        }
        return { ms, requests };
      },
      stop: () => registry.stop(),
    };
  } catch (error) {
    await registry.stop();
    throw error;
  }
}
