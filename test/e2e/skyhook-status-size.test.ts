/**
 * What etcd accepts of a large Skyhook status, on the real control plane: the whole status of an
 * 8000-node Skyhook (one package, 6000 nodes complete, bench/synthetic-status.ts) is refused as too large, and the status the
 * planner writes instead (status-size.ts, fitted to the object as it stands) is accepted and lists
 * the nodes not complete. The premise and the budget of status-size.ts are both checked here: if
 * etcd took the whole status, or the budget let a refused status through, this fails.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SkyhookStatus } from '../../src/api/skyhook.js';
import { SYNTHETIC_PACKAGE, syntheticNodeMaps } from '../../bench/synthetic-status.js';
import { fitNodeMaps, objectBytesWithoutStatus } from '../../src/controllers/skyhook/plan/status-size.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODES = 8_000;
const COMPLETE = 6_000;

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ nodes: 0 });
  const applied = await cp.kubectl(['apply', '--server-side', '-k', join(REPO_ROOT, 'config/crd')]);
  if (applied.code !== 0) throw new Error(`applying the CRDs failed: ${applied.stderr}`);
  await waitCrdsEstablished(cp, ['crd/skyhooks.skyhook.nvidia.com']);
}, 300_000);

afterAll(async () => {
  await cp?.stop();
}, 120_000);

async function writeStatus(object: Record<string, unknown>, status: SkyhookStatus) {
  return cp.kubectl(['replace', '--subresource=status', '-f', '-', '-o', 'json'], {
    input: JSON.stringify({ ...object, status }),
  });
}

describe('a Skyhook status past etcd request limit', () => {
  it('is refused whole, and accepted as the planner fits it', async () => {
    const created = await cp.kubectl(['create', '-f', '-', '-o', 'json'], {
      input: JSON.stringify({
        apiVersion: 'skyhook.nvidia.com/v1alpha1',
        kind: 'Skyhook',
        metadata: { name: 'fleet' },
        spec: {
          packages: {
            [SYNTHETIC_PACKAGE.name]: { version: SYNTHETIC_PACKAGE.version, image: SYNTHETIC_PACKAGE.image },
          },
        },
      }),
    });
    expect(created.stderr).toBe('');
    const object = JSON.parse(created.stdout) as Record<string, unknown>;
    const maps = syntheticNodeMaps(NODES, COMPLETE, 'gpu-node');
    const counts = {
      status: 'in_progress' as const,
      nodesInProgress: NODES - COMPLETE,
      completeNodes: `${COMPLETE}/${NODES}`,
    };

    const whole = await writeStatus(object, { ...counts, ...maps });
    expect(whole.code).not.toBe(0);
    expect(whole.stderr).toMatch(/too large/i);

    const fitted = fitNodeMaps(maps, objectBytesWithoutStatus(object as { metadata?: unknown; spec?: unknown }));
    expect(fitted.trim).toMatchObject({ nodeStateListed: NODES - COMPLETE, nodeStateOf: NODES });
    const written = await writeStatus(object, { ...counts, ...fitted.maps });
    expect(written.stderr).toBe('');
    const stored = JSON.parse(written.stdout) as { status: SkyhookStatus };
    expect(Object.keys(stored.status.nodeState ?? {})).toHaveLength(NODES - COMPLETE);
    expect(Object.keys(stored.status.nodeStatus ?? {})).toHaveLength(NODES);
  }, 120_000);
});
