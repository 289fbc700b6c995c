/**
 * Retrying a call the API server answered with 429 (Too Many Requests): priority-and-fairness
 * throttling, or a resource whose storage is still initializing right after its CRD was
 * established. The server asks the client to come back; one-shot tools (the CLI) do so a few times
 * instead of failing. Controllers do not need this: their work queue retries with backoff.
 */
import { isTooManyRequests } from './errors.js';

export async function retryWhileBusy<T>(call: () => Promise<T>, attempts = 6, delayMs = 500): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isTooManyRequests(error) || attempt >= attempts) throw error;
      await new Promise((resolveDelay) => setTimeout(resolveDelay, delayMs * attempt));
    }
  }
}
