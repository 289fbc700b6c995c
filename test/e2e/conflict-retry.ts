/**
 * A test's read-change-write of an object the operator also writes (its status): an operator write
 * between the read and the write makes the write a Conflict (409), and the change is read and made
 * again on the newer object, as `kubectl edit` does; at most `attempts` times.
 */
import { isConflict } from '../../src/kube/errors.js';

export async function retryOnConflict(readChangeWrite: () => Promise<void>, attempts = 10): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await readChangeWrite();
      return;
    } catch (e) {
      if (!isConflict(e) || attempt >= attempts) throw e;
    }
  }
}
