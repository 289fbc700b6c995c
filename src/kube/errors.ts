/**
 * Reading Kubernetes API errors. client-node throws ApiException with `.code` and the raw JSON text
 * of a `Status` in `.body`; Watch errors carry `.statusCode`. These helpers are duck-typed so pure
 * modules and unit tests can use them without loading client-node.
 */

interface StatusBody {
  reason?: string;
  message?: string;
  code?: number;
  details?: StatusDetails & { retryAfterSeconds?: number };
}

/** What an API error is about: `Status.details` (`kind` is the resource's plural, e.g. `skyhooks`). */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
}

/** The HTTP status of an API error, or undefined for anything else (network errors, bugs). */
export function statusCode(e: unknown): number | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const { code, statusCode: sc } = e as { code?: unknown; statusCode?: unknown };
  if (typeof code === 'number') return code;
  if (typeof sc === 'number') return sc;
  return undefined;
}

function statusBody(e: unknown): StatusBody | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  // A watch's ERROR event carries the Status itself, not an exception around it.
  if ((e as { kind?: unknown }).kind === 'Status') return e as StatusBody;
  const body = (e as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const parsed: unknown = JSON.parse(body);
      return typeof parsed === 'object' && parsed !== null ? (parsed as StatusBody) : undefined;
    } catch {
      return undefined;
    }
  }
  return typeof body === 'object' && body !== null ? (body as StatusBody) : undefined;
}

/** The `Status.reason` of an API error (`NotFound`, `Conflict`, `AlreadyExists`, …), else its code, else undefined. */
export function errorReason(e: unknown): string | undefined {
  const reason = statusBody(e)?.reason;
  if (reason) return reason;
  const code = statusCode(e);
  return code === undefined ? undefined : String(code);
}

/** The object an API error names, when the API server said (NotFound and Conflict do). */
export function errorDetails(e: unknown): StatusDetails {
  return statusBody(e)?.details ?? {};
}

/** A one-line description for logs and conditions: the API's own message when there is one. */
export function errorMessage(e: unknown): string {
  const status = statusBody(e);
  if (status?.message) return `${status.reason ?? statusCode(e) ?? 'error'}: ${status.message}`;
  if (e instanceof Error) return e.message.split('\n')[0] ?? e.message;
  return String(e);
}

export const isNotFound = (e: unknown): boolean => statusCode(e) === 404;
/** 409 from an update with a stale resourceVersion (not a create of an existing name). */
export const isConflict = (e: unknown): boolean => statusCode(e) === 409 && errorReason(e) !== 'AlreadyExists';
export const isAlreadyExists = (e: unknown): boolean => statusCode(e) === 409 && errorReason(e) === 'AlreadyExists';
export const isTooManyRequests = (e: unknown): boolean => statusCode(e) === 429;
/** 410: the resourceVersion asked for is older than etcd keeps; list again. */
export const isGone = (e: unknown): boolean => statusCode(e) === 410;

/**
 * How long the API server asked us to wait before retrying (429, 503): its Retry-After header
 * (seconds or an HTTP date; client-node's ApiException keeps the headers), else the Status'
 * `details.retryAfterSeconds`; undefined when it said nothing.
 */
export function retryAfterMs(e: unknown, now: number = Date.now()): number | undefined {
  const headers = typeof e === 'object' && e !== null ? (e as { headers?: unknown }).headers : undefined;
  if (typeof headers === 'object' && headers !== null) {
    const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'retry-after');
    const value = typeof entry?.[1] === 'string' ? entry[1].trim() : undefined;
    if (value !== undefined && value !== '') {
      if (/^\d+$/.test(value)) return Number(value) * 1000;
      const at = Date.parse(value);
      if (Number.isFinite(at)) return Math.max(0, at - now);
    }
  }
  const seconds = statusBody(e)?.details?.retryAfterSeconds;
  return typeof seconds === 'number' && seconds >= 0 ? seconds * 1000 : undefined;
}
