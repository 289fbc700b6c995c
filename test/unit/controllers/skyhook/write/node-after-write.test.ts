/**
 * The node as a state patch will leave it, which a stage's node-metadata ConfigMap is pre-written
 * from while the patch is in flight: set keys set, `null` keys gone, everything else as it was.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import { nodeAfterWrite } from '../../../../../src/controllers/skyhook/write/node-writes.js';

describe('nodeAfterWrite', () => {
  const node: V1Node = {
    metadata: {
      name: 'n1',
      resourceVersion: '7',
      labels: { zone: 'a', 'skyhook.nvidia.com/status_s': 'in_progress' },
      annotations: { keep: 'k', 'skyhook.nvidia.com/nodeState_s': '{"old":1}', drop: 'd' },
    },
    spec: { unschedulable: true },
  };

  it('sets and removes what the patch says, keeps the rest, and leaves the cached node untouched', () => {
    const after = nodeAfterWrite(node, {
      node: 'n1',
      annotations: { 'skyhook.nvidia.com/nodeState_s': '{"new":2}', drop: null },
      labels: { 'skyhook.nvidia.com/status_s': 'complete' },
    });
    expect(after.metadata?.annotations).toEqual({ keep: 'k', 'skyhook.nvidia.com/nodeState_s': '{"new":2}' });
    expect(after.metadata?.labels).toEqual({ zone: 'a', 'skyhook.nvidia.com/status_s': 'complete' });
    expect(after.spec).toEqual({ unschedulable: true });
    expect(after.metadata?.resourceVersion).toBe('7');
    expect(node.metadata?.annotations?.['drop']).toBe('d');
  });

  it('gives a node without labels or annotations the patched ones', () => {
    const after = nodeAfterWrite({ metadata: { name: 'bare' } }, { node: 'bare', annotations: { a: '1' }, labels: {} });
    expect(after.metadata?.annotations).toEqual({ a: '1' });
    expect(after.metadata?.labels).toEqual({});
  });
});
