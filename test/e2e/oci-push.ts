/**
 * Writes small OCI images straight through the registry API (blob uploads, manifest PUTs), so the
 * signing tests need no image tool and no root: a config blob, one layer of bytes the test chooses
 * (distinct bytes → distinct digests), an image manifest, and an index over manifests.
 */
import { createHash } from 'node:crypto';
import { getCACertificates } from 'node:tls';
import { Agent, fetch } from 'undici';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';

const digestOf = (bytes: Uint8Array): string => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

export class OciPusher {
  private readonly agent: Agent;
  private readonly authorization: string;
  private readonly base: string;

  /** `auth`: credentials sent as Basic, or a whole Authorization header value (a Bearer token). */
  constructor(host: string, auth: { username: string; password: string } | string, caPem: string) {
    this.base = `https://${host}`;
    this.agent = new Agent({ connect: { ca: [...getCACertificates('default'), caPem] } });
    this.authorization =
      typeof auth === 'string' ? auth : `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private async call(method: string, url: string, body?: Uint8Array, contentType?: string) {
    const headers: Record<string, string> = { authorization: this.authorization };
    if (contentType) headers['content-type'] = contentType;
    const response = await fetch(url, { method, headers, dispatcher: this.agent, ...(body ? { body } : {}) });
    if (!response.ok) throw new Error(`${method} ${url}: HTTP ${response.status} ${await response.text()}`);
    return response;
  }

  async blob(repository: string, bytes: Uint8Array): Promise<{ digest: string; size: number }> {
    const digest = digestOf(bytes);
    const started = await this.call('POST', `${this.base}/v2/${repository}/blobs/uploads/`);
    await started.arrayBuffer();
    const location = new URL(started.headers.get('location') ?? '', this.base);
    location.searchParams.set('digest', digest);
    await (await this.call('PUT', location.toString(), bytes, 'application/octet-stream')).arrayBuffer();
    return { digest, size: bytes.length };
  }

  async manifest(repository: string, reference: string, manifest: object, mediaType: string): Promise<string> {
    const bytes = Buffer.from(JSON.stringify(manifest));
    const url = `${this.base}/v2/${repository}/manifests/${reference}`;
    await (await this.call('PUT', url, bytes, mediaType)).arrayBuffer();
    return digestOf(bytes);
  }

  /** A one-layer image whose layer is `content`, tagged `tag`; returns its manifest digest. */
  async image(repository: string, tag: string, content: string, architecture = 'amd64'): Promise<string> {
    const config = await this.blob(
      repository,
      Buffer.from(JSON.stringify({ architecture, os: 'linux', rootfs: { type: 'layers', diff_ids: [] } })),
    );
    const layer = await this.blob(repository, Buffer.from(content));
    return this.manifest(
      repository,
      tag,
      {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layer }],
      },
      OCI_MANIFEST,
    );
  }

  /** An index over two single-platform images (amd64, arm64) tagged `tag`; returns the index digest. */
  async index(repository: string, tag: string, content: string): Promise<string> {
    const manifests = [];
    for (const architecture of ['amd64', 'arm64']) {
      const digest = await this.image(repository, `${tag}-${architecture}`, `${content}/${architecture}`, architecture);
      const bytes = await this.raw(repository, digest, OCI_MANIFEST);
      manifests.push({ mediaType: OCI_MANIFEST, digest, size: bytes.length, platform: { architecture, os: 'linux' } });
    }
    return this.manifest(repository, tag, { schemaVersion: 2, mediaType: OCI_INDEX, manifests }, OCI_INDEX);
  }

  /** The manifest bytes under a tag or digest. */
  async raw(repository: string, reference: string, accept: string): Promise<Buffer> {
    const headers = { authorization: this.authorization, accept };
    const url = `${this.base}/v2/${repository}/manifests/${reference}`;
    const response = await fetch(url, { headers, dispatcher: this.agent });
    if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  }
}
