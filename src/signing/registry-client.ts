/**
 * A minimal client of the OCI distribution API for one repository: GET/HEAD of manifests and blobs,
 * with the registry's own auth dance (Basic, or a Bearer token from the challenge's realm), extra CA
 * certificates, and a record of every request it made. Hand-written because the verifier needs only
 * these three reads, and no maintained npm client of the distribution API also takes a per-call CA
 * and reports its requests; fetch and the connection pool are undici's (the Node.js team's).
 */
import { getCACertificates } from 'node:tls';
import { Agent, fetch, type Response } from 'undici';
import type { RegistryCredentials } from './verdict.js';
import { parseChallenge, realmRefusal, tokenUrl } from './www-authenticate.js';

/** One HTTP request the verifier made (redirects it followed count as one). */
export interface RequestRecord {
  readonly method: string;
  readonly url: string;
  /** 0 when no answer came (network, TLS). */
  readonly status: number;
}

/** The registry answered with an error, or not at all (status undefined). */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  readonly url: string;
  readonly status: number | undefined;

  constructor(message: string, url: string, status?: number) {
    super(message);
    this.url = url;
    this.status = status;
  }
}

/** A connection pool trusting the system's CAs and, beside them, `caPem`. Close it when done. */
export function registryAgent(caPem?: string): Agent {
  const ca = caPem ? [...getCACertificates('default'), caPem] : undefined;
  return new Agent({
    connect: { timeout: 10_000, ...(ca ? { ca } : {}) },
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
}

export interface RegistryClientOptions {
  /** `https://host[:port]`, without /v2. */
  readonly baseUrl: string;
  readonly repository: string;
  readonly credentials: RegistryCredentials | undefined;
  readonly agent: Agent;
  /** Every request is appended here (the caller's counter). */
  readonly requests: RequestRecord[];
}

export class RegistryClient {
  /** Once a challenge was answered, later requests send the same Authorization up front (no second 401). */
  private authorization: string | undefined;

  private readonly options: RegistryClientOptions;

  constructor(options: RegistryClientOptions) {
    this.options = options;
  }

  /** `method` of `/v2/<repository>/<path>`, authenticating once if the registry challenges. */
  async request(method: 'GET' | 'HEAD', path: string, accept?: string): Promise<Response> {
    const url = `${this.options.baseUrl}/v2/${this.options.repository}/${path}`;
    const first = await this.send(method, url, accept, this.authorization);
    if (first.status !== 401 || !(await this.answerChallenge(first, url))) return first;
    return this.send(method, url, accept, this.authorization);
  }

  private async send(method: string, url: string, accept: string | undefined, authorization: string | undefined) {
    const headers: Record<string, string> = {};
    if (accept) headers['accept'] = accept;
    if (authorization) headers['authorization'] = authorization;
    try {
      const response = await fetch(url, { method, headers, dispatcher: this.options.agent, redirect: 'follow' });
      this.options.requests.push({ method, url, status: response.status });
      return response;
    } catch (error) {
      this.options.requests.push({ method, url, status: 0 });
      throw new RegistryError(`${method} ${url}: no answer (${networkCause(error)})`, url);
    }
  }

  /** Sets the Authorization the challenge asks for; false when there is nothing to answer it with. */
  private async answerChallenge(response: Response, url: string): Promise<boolean> {
    await discard(response);
    const challenge = parseChallenge(response.headers.get('www-authenticate'));
    const credentials = this.options.credentials;
    const basic = credentials
      ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
      : undefined;
    if (!challenge) return false;
    if (challenge.scheme === 'basic') {
      if (!basic || this.authorization === basic) return false;
      this.authorization = basic;
      return true;
    }
    // A Bearer realm gives anonymous tokens for public repositories, and tokens for the credentials otherwise.
    const refusal = realmRefusal(challenge.realm, this.options.baseUrl);
    if (refusal) throw new RegistryError(`the registry's challenge for ${url} was not followed: ${refusal}`, url);
    const realm = tokenUrl(challenge, this.options.repository);
    const answer = await this.send('GET', realm, 'application/json', basic);
    if (!answer.ok) {
      await discard(answer);
      throw new RegistryError(
        `the token service ${new URL(realm).host} answered ${answer.status} for ${url}`,
        realm,
        answer.status,
      );
    }
    const body = (await answer.json()) as { token?: unknown; access_token?: unknown };
    const token = typeof body.token === 'string' ? body.token : body.access_token;
    if (typeof token !== 'string' || !token)
      throw new RegistryError(`the token service ${new URL(realm).host} returned no token`, realm, answer.status);
    const bearer = `Bearer ${token}`;
    if (this.authorization === bearer) return false;
    this.authorization = bearer;
    return true;
  }
}

/** Reads a response body away, so its connection returns to the pool. */
export async function discard(response: Response): Promise<void> {
  try {
    await response.arrayBuffer();
  } catch {
    // The body is not needed; a broken one changes nothing.
  }
}

/** The most telling part of a fetch failure: undici puts the socket or TLS error in `cause`. */
function networkCause(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: unknown }).code;
    return typeof code === 'string' && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message;
  }
  return String(cause);
}
