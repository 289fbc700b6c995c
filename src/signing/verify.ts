/**
 * The image-signature verifier: resolves the image to its manifest digest (a tag pointing at an index
 * resolves to the index digest, which is what cosign signs for it), reads the cosign signatures stored
 * under `sha256-<hex>.sig`, and checks each against the trusted keys and the digest. Requests: one for
 * the manifest (none for a reference by digest), one for the signature manifest, one per signature
 * payload, plus the registry's auth challenge and token at most once.
 */
import {
  MANIFEST_ACCEPT,
  MAX_PAYLOAD_BYTES,
  sha256Digest,
  signatureLayers,
  signedManifestDigest,
  type SignatureLayer,
} from './cosign-format.js';
import { hostOf, parseImageReference, registryBaseUrl, signatureTag } from './reference.js';
import { discard, RegistryClient, RegistryError, registryAgent, type RequestRecord } from './registry-client.js';
import { loadTrustedKeys, signingKeyOf, type LoadedKey } from './signature-check.js';
import type { RegistryAccess, SignatureVerdict, TrustedKey, VerifyImageSignature } from './verdict.js';
import { unreachable, unsigned, verdictFor, type LayerFinding } from './verdicts.js';

export interface VerifyResult {
  readonly verdict: SignatureVerdict;
  /** Every request made, in order: what the verdict cost (not part of the contract). */
  readonly requests: readonly RequestRecord[];
}

/** The contract's verifier. */
export const verifyImageSignature: VerifyImageSignature = async (image, keys, access) =>
  (await verifyImage(image, keys, access)).verdict;

/** The verdict and the requests it took. */
export async function verifyImage(
  image: string,
  keys: readonly TrustedKey[],
  access: RegistryAccess,
): Promise<VerifyResult> {
  const requests: RequestRecord[] = [];
  let reference: ReturnType<typeof parseImageReference>;
  try {
    reference = parseImageReference(image);
  } catch (error) {
    return {
      verdict: { kind: 'refused', reason: 'unreachable', message: `image ${image}: ${errorText(error)}` },
      requests,
    };
  }
  let loaded: LoadedKey[];
  try {
    loaded = loadTrustedKeys(keys);
  } catch (error) {
    return {
      verdict: { kind: 'refused', reason: 'unknown-key', message: `image ${image}: ${errorText(error)}` },
      requests,
    };
  }
  if (loaded.length === 0)
    return {
      verdict: {
        kind: 'refused',
        reason: 'unknown-key',
        message: `image ${image}: no trusted key to check it against; give at least one public key`,
      },
      requests,
    };
  const baseUrl = registryBaseUrl(reference.registry, access.mirrors);
  const credentials = access.credentialsFor(hostOf(baseUrl)) ?? access.credentialsFor(reference.registry);
  const agent = registryAgent(access.caPem);
  const client = new RegistryClient({ baseUrl, repository: reference.repository, credentials, agent, requests });
  let digest = reference.digest;
  try {
    digest ??= await resolveDigest(client, reference.tag ?? 'latest');
    const layers = await readSignatureLayers(client, digest);
    if (layers === undefined) return { verdict: unsigned(image, digest), requests };
    const findings: LayerFinding[] = [];
    for (const layer of layers) findings.push(await checkLayer(client, layer, loaded));
    return { verdict: verdictFor(image, digest, findings), requests };
  } catch (error) {
    // Anything else (a body cut off, a timeout) is the registry not answering usefully either.
    const status = error instanceof RegistryError ? error.status : undefined;
    return { verdict: unreachable(image, errorText(error), status, digest), requests };
  } finally {
    await agent.close();
  }
}

/** The digest the tag points at: the registry's Docker-Content-Digest, else the digest of the manifest's bytes. */
async function resolveDigest(client: RegistryClient, tag: string): Promise<string> {
  const head = await client.request('HEAD', `manifests/${tag}`, MANIFEST_ACCEPT);
  await discard(head);
  const fromHeader = head.headers.get('docker-content-digest');
  if (head.ok && fromHeader && /^sha256:[0-9a-f]{64}$/.test(fromHeader)) return fromHeader;
  if (!head.ok && head.status !== 405) throw statusError(head.status, `manifest of tag "${tag}"`, head.url);
  const get = await client.request('GET', `manifests/${tag}`, MANIFEST_ACCEPT);
  if (!get.ok) {
    await discard(get);
    throw statusError(get.status, `manifest of tag "${tag}"`, get.url);
  }
  return sha256Digest(new Uint8Array(await get.arrayBuffer()));
}

/** The signature layers under the digest's `.sig` tag; undefined when there is no such tag. */
async function readSignatureLayers(client: RegistryClient, digest: string): Promise<SignatureLayer[] | undefined> {
  const tag = signatureTag(digest);
  const response = await client.request('GET', `manifests/${tag}`, MANIFEST_ACCEPT);
  if (response.status === 404) {
    await discard(response);
    return undefined;
  }
  if (!response.ok) {
    await discard(response);
    throw statusError(response.status, `signature manifest ${tag}`, response.url);
  }
  let manifest: unknown;
  try {
    manifest = await response.json();
  } catch {
    throw new RegistryError(
      `the signature manifest ${tag} is not JSON (${response.url})`,
      response.url,
      response.status,
    );
  }
  const layers = signatureLayers(manifest);
  return layers.length === 0 ? undefined : layers;
}

async function checkLayer(client: RegistryClient, layer: SignatureLayer, keys: readonly LoadedKey[]) {
  if (layer.size > MAX_PAYLOAD_BYTES)
    return { kind: 'invalid', why: `payload ${layer.digest} is ${layer.size} bytes` } satisfies LayerFinding;
  const response = await client.request('GET', `blobs/${layer.digest}`);
  if (!response.ok) {
    await discard(response);
    throw statusError(response.status, `signature payload ${layer.digest}`, response.url);
  }
  const payload = new Uint8Array(await response.arrayBuffer());
  if (sha256Digest(payload) !== layer.digest)
    return { kind: 'invalid', why: `blob ${layer.digest} does not match its digest` } satisfies LayerFinding;
  const keyName = signingKeyOf(payload, layer.signature, keys);
  if (keyName === undefined) return { kind: 'untrusted' } satisfies LayerFinding;
  return { kind: 'trusted', keyName, signedDigest: signedManifestDigest(payload) } satisfies LayerFinding;
}

function statusError(status: number, what: string, url: string): RegistryError {
  return new RegistryError(`the registry answered HTTP ${status} for the ${what} (${url})`, url, status);
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
