import { describe, expect, it } from '@jest/globals';
import {
  NodeStateMalformedError,
  nodeSkyhookConditions,
  parseNodeState,
  readNodeSkyhookRecord,
  serializeNodeState,
  type NodeState,
} from '../../../src/api/node-state.js';

// Byte-exact strings asserted by upstream's e2e suite (reference/skyhook.md §3.1 and §7).
const UPSTREAM_EXAMPLES = [
  '{"dax|1.2.3":{"name":"dax","version":"1.2.3","image":"ghcr.io/nvidia/skyhook/agentless","stage":"post-interrupt","state":"complete"}}',
  '{"foobar|1.2.3":{"name":"foobar","version":"1.2.3","image":"","stage":"apply","state":"complete"}}',
  '{}',
];

describe('nodeState annotation format', () => {
  it.each(UPSTREAM_EXAMPLES)('round-trips upstream example %s byte for byte', (text) => {
    expect(serializeNodeState(parseNodeState(text))).toBe(text);
  });

  it('writes keys in byte order and fields in Go struct order, omitting empty optional fields', () => {
    const state: NodeState = {
      'zeta|2.0.0': { name: 'zeta', version: '2.0.0', image: 'img/z', stage: 'apply', state: 'erroring', restarts: 3 },
      'alpha|1.0.0': {
        state: 'in_progress',
        stage: 'config',
        image: 'img/a',
        containerSHA: 'sha256:ab',
        version: '1.0.0',
        name: 'alpha',
      },
      'mid|1.0.0': { name: 'mid', version: '1.0.0', image: 'img/m', stage: 'upgrade', state: 'complete', restarts: 0 },
    };
    expect(serializeNodeState(state)).toBe(
      '{"alpha|1.0.0":{"name":"alpha","version":"1.0.0","image":"img/a","containerSHA":"sha256:ab","stage":"config","state":"in_progress"},' +
        '"mid|1.0.0":{"name":"mid","version":"1.0.0","image":"img/m","stage":"upgrade","state":"complete"},' +
        '"zeta|2.0.0":{"name":"zeta","version":"2.0.0","image":"img/z","stage":"apply","state":"erroring","restarts":3}}',
    );
  });

  it("escapes <, > and & the way Go's encoder does", () => {
    const state: NodeState = {
      'a|1': { name: 'a', version: '1', image: 'r/<x>&y', stage: 'apply', state: 'complete' },
    };
    expect(serializeNodeState(state)).toBe(
      '{"a|1":{"name":"a","version":"1","image":"r/\\u003cx\\u003e\\u0026y","stage":"apply","state":"complete"}}',
    );
    expect(parseNodeState(serializeNodeState(state))).toEqual(state);
  });

  it('reads Go null as an empty state and a missing state field as unknown', () => {
    expect(parseNodeState('null')).toEqual({});
    expect(parseNodeState('{"a|1":{"name":"a","version":"1","image":"i","stage":"apply"}}')['a|1']?.state).toBe(
      'unknown',
    );
  });

  it.each([
    ['not JSON', 'nope'],
    ['empty string', ''],
    ['an array', '[]'],
    ['an entry that is not an object', '{"a|1":1}'],
    ['an unknown stage', '{"a|1":{"name":"a","version":"1","image":"i","stage":"install","state":"complete"}}'],
    ['an unknown state', '{"a|1":{"name":"a","version":"1","image":"i","stage":"apply","state":"done"}}'],
    ['a non-string field', '{"a|1":{"name":5,"version":"1","image":"i","stage":"apply","state":"complete"}}'],
    [
      'a non-integer restart count',
      '{"a|1":{"name":"a","version":"1","image":"i","stage":"apply","state":"erroring","restarts":"2"}}',
    ],
  ])('rejects %s with a typed error naming node and SCR', (_what, text) => {
    expect(() => parseNodeState(text, 'node-a', 'demo')).toThrow(NodeStateMalformedError);
    try {
      parseNodeState(text, 'node-a', 'demo');
    } catch (error) {
      expect(error).toMatchObject({ node: 'node-a', skyhook: 'demo' });
      expect((error as Error).message).toContain('skyhook.nvidia.com/nodeState_demo');
    }
  });
});

describe('readNodeSkyhookRecord', () => {
  it('reads state, status and version from the per-SCR keys', () => {
    const record = readNodeSkyhookRecord(
      {
        name: 'n1',
        labels: { 'skyhook.nvidia.com/status_demo': 'complete' },
        annotations: {
          'skyhook.nvidia.com/nodeState_demo': UPSTREAM_EXAMPLES[0]!,
          'skyhook.nvidia.com/version_demo': 'v0.13.0',
        },
      },
      'demo',
    );
    expect(record).toMatchObject({ status: 'complete', version: 'v0.13.0' });
    expect(Object.keys(record.state)).toEqual(['dax|1.2.3']);
    expect(record.malformed).toBeUndefined();
  });

  it('reports a malformed annotation and reads the state as empty', () => {
    const record = readNodeSkyhookRecord(
      { name: 'n1', labels: {}, annotations: { 'skyhook.nvidia.com/nodeState_demo': '{' } },
      'demo',
    );
    expect(record.state).toEqual({});
    expect(record.malformed).toBeInstanceOf(NodeStateMalformedError);
  });

  it("restores a malformed annotation from the operator's copy, and blocks only when the copy is unreadable too", () => {
    const copy = UPSTREAM_EXAMPLES[0]!;
    const restored = readNodeSkyhookRecord(
      {
        name: 'n1',
        labels: {},
        annotations: { 'skyhook.nvidia.com/nodeState_demo': '{', 'skyhook.nvidia.com/nodeStateCopy_demo': copy },
      },
      'demo',
    );
    expect(Object.keys(restored.state)).toEqual(['dax|1.2.3']);
    expect(restored.restored).toBeInstanceOf(NodeStateMalformedError);
    expect(restored.malformed).toBeUndefined();
    const both = readNodeSkyhookRecord(
      {
        name: 'n1',
        labels: {},
        annotations: { 'skyhook.nvidia.com/nodeState_demo': '{', 'skyhook.nvidia.com/nodeStateCopy_demo': '[' },
      },
      'demo',
    );
    expect(both.malformed).toBeInstanceOf(NodeStateMalformedError);
    expect(both.state).toEqual({});
  });
});

describe('node conditions', () => {
  it('are NotReady/Erroring with upstream reasons and messages', () => {
    const erroring: NodeState = {
      'a|1': { name: 'a', version: '1', image: 'i', stage: 'apply', state: 'erroring', restarts: 1 },
    };
    expect(nodeSkyhookConditions('demo', false, erroring)).toEqual([
      { type: 'skyhook.nvidia.com/demo/NotReady', status: 'True', reason: 'Incomplete', message: 'Skyhook demo Ready' },
      {
        type: 'skyhook.nvidia.com/demo/Erroring',
        status: 'True',
        reason: 'Package(s) Erroring or Unknown',
        message: 'Package Erroring or Unknown for demo',
      },
    ]);
    expect(nodeSkyhookConditions('demo', true, {}).map((c) => [c.status, c.reason])).toEqual([
      ['False', 'Complete'],
      ['False', 'Not Erroring'],
    ]);
  });
});
