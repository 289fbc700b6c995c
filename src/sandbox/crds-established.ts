/**
 * Waits until CRDs are established (served), with `kubectl wait --for=condition=Established`. A CRD
 * read before the API server wrote its first status makes kubectl fail at once (`.status.conditions
 * accessor error: <nil> is of the type <nil>`) instead of waiting; that answer is asked again. Every
 * place that installs our CRDs and then uses them (the sandbox, the e2e harnesses) waits through here.
 */
import type { ControlPlane } from './control-plane.js';

const ATTEMPTS = 20;
const RETRY_MS = 250;

/** `crds`: `crd/<name>` arguments, or `['crd', '--all']`. Throws kubectl's error when they do not become established. */
export async function waitCrdsEstablished(cp: Pick<ControlPlane, 'kubectl'>, crds: string[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const established = await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...crds]);
    if (established.code === 0) return;
    if (attempt >= ATTEMPTS || !established.stderr.includes('accessor error'))
      throw new Error(`the CRDs did not become established (${crds.join(' ')}): ${established.stderr.trim()}`);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
