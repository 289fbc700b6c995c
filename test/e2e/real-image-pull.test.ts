/**
 * A package image that cannot be pulled, on a real node (kubelet + containerd): a tag the repository
 * does not have, and a registry that does not exist. The stage fails once its pod is stuck pulling,
 * and the Skyhook's StageFailed Event carries the real kubelet's pull error naming the image, then
 * the fix. The simulated kubelet scripts this message (src/sandbox/kwok-stages.ts); here containerd
 * writes it, so the operator's reading of pod statuses meets the real thing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CoreV1Event } from '@kubernetes/client-node';
import { STAGE_FAILED_REASON } from '../../src/controllers/skyhook/write/failed-stage-report.js';
import { STUCK_MARK } from '../../src/jobs/job-progress.js';
import { waitForList } from '../../src/kube/wait.js';
import { createGroupSkyhook, GROUP_LABEL, startRealHarness, waitForSkyhook, type RealHarness } from './real-harness.js';

const NODE = 'real-0';
const GROUP = 'pull';
let h: RealHarness;

beforeAll(async () => {
  h = await startRealHarness({
    realNodes: 1,
    realNodeLabels: { [GROUP_LABEL]: GROUP },
    // A pod waiting on a pull this long fails its stage (the default is a minute).
    nodeOpSettings: { stuckPodTimeoutMs: 20_000 },
  });
}, 300_000);

afterAll(async () => {
  await h?.stop();
}, 120_000);

/** The StageFailed Event of `skyhook`, once there is one. */
async function stageFailed(skyhook: string): Promise<CoreV1Event> {
  const failed = (e: CoreV1Event): boolean => e.reason === STAGE_FAILED_REASON && e.involvedObject.name === skyhook;
  const events = await waitForList<CoreV1Event>(
    h.cp.kubeConfig,
    '/api/v1/events',
    (all) => all.some(failed),
    180_000,
    `a StageFailed Event on ${skyhook}`,
  );
  return events.find(failed)!;
}

describe.each([
  {
    name: 'wrong-tag',
    what: 'a tag its repository does not have',
    image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
    version: '0.0.0-no-such-tag',
  },
  {
    name: 'no-registry',
    what: 'a registry that does not exist',
    image: 'registry.invalid/skyhook/missing',
    version: '1.0.0',
  },
])('a package image from $what', ({ name, image, version }) => {
  it("fails the stage with the real kubelet's pull error naming the image, and the fix", async () => {
    await createGroupSkyhook(h, name, GROUP, { packages: { pkg: { version, image } } });
    const event = await stageFailed(name);
    const ref = `${image}:${version}`;
    expect(event.involvedObject.kind).toBe('Skyhook');
    expect(event.message).toContain(`Package [pkg:${version}] stage [apply] failed on node [${NODE}]`);
    expect(event.message).toContain(STUCK_MARK);
    expect(event.message).toMatch(/ErrImagePull|ImagePullBackOff/);
    expect(event.message).toContain(ref);
    // containerd's words, not the simulated kubelet's script.
    expect(event.message).toMatch(/failed to (pull and unpack image|resolve reference|pull image)/i);
    expect(event.message).not.toContain('simulated registry');
    expect(event.message).toContain('check that the image exists');
    const erroring = await waitForSkyhook(h, name, (s) => s.status?.nodeStatus?.[NODE] === 'erroring', 60_000);
    expect(erroring.status?.status).toBe('erroring');
    await h.custom.deleteClusterCustomObject({
      group: 'skyhook.nvidia.com',
      version: 'v1alpha1',
      plural: 'skyhooks',
      name,
    });
  }, 300_000);
});
