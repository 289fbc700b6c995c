/**
 * The per-node maps of a Skyhook's status in the middle of a large rollout, as the planner builds
 * them: every node has one package's state, a status and a priority; the first `complete` nodes
 * are done. The status-write benchmark writes them; the tests of the status size limit fit them.
 */
import type { NodeMaps } from '../src/controllers/skyhook/plan/status-size.js';

export const SYNTHETIC_PACKAGE = {
  name: 'pkg',
  version: '1.0.0',
  image: 'ghcr.io/nvidia/skyhook-packages/shellscript',
};

/** `nodes` nodes named `<prefix>-00000` …, the first `complete` of them complete. */
export function syntheticNodeMaps(nodes: number, complete: number, prefix = 'node'): NodeMaps {
  const maps: NodeMaps = { nodeState: {}, nodeStatus: {}, nodePriority: {} };
  for (let i = 0; i < nodes; i++) {
    const node = `${prefix}-${String(i).padStart(5, '0')}`;
    const done = i < complete;
    maps.nodeState[node] = {
      [`${SYNTHETIC_PACKAGE.name}|${SYNTHETIC_PACKAGE.version}`]: {
        ...SYNTHETIC_PACKAGE,
        stage: done ? 'config' : 'apply',
        state: done ? 'complete' : 'in_progress',
      },
    };
    maps.nodeStatus[node] = done ? 'complete' : 'in_progress';
    maps.nodePriority[node] = '2026-11-25T15:00:00Z';
  }
  return maps;
}
