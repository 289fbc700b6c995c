/** NodeOp selection, pacing and overall phase (pure). */
import { describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import fc from 'fast-check';
import type { NodeOpNodeStatus } from '../../../../src/api/nodeop.js';
import { aggregatePhase, nodeOpConditions } from '../../../../src/controllers/nodeop/aggregate.js';
import { rebootObserved } from '../../../../src/controllers/nodeop/node-status.js';
import { isInFlight, planStarts, targetNodes } from '../../../../src/controllers/nodeop/pacing.js';

const node = (name: string, labels: Record<string, string> = {}): V1Node => ({ metadata: { name, labels } });
const status = (
  phase: NodeOpNodeStatus['phase'],
  rebootStatus: NodeOpNodeStatus['rebootStatus'] = 'not-requested',
): NodeOpNodeStatus => ({ phase, rebootStatus });

describe('targetNodes', () => {
  const nodes = [
    node('b', { pool: 'x' }),
    node('z-master', { 'node-role.kubernetes.io/master': '' }),
    node('a', { pool: 'x' }),
    node('y-cp', { pool: 'x', 'node-role.kubernetes.io/control-plane': 'true' }),
  ];

  it('puts control-plane nodes first, then orders by name', () => {
    expect(targetNodes({}, nodes)).toEqual(['y-cp', 'z-master', 'a', 'b']);
  });

  it('selects by nodeSelector or by the explicit list (only nodes that exist)', () => {
    expect(targetNodes({ nodeSelector: { matchLabels: { pool: 'x' } } }, nodes)).toEqual(['y-cp', 'a', 'b']);
    expect(
      targetNodes({ nodeSelector: { matchExpressions: [{ key: 'pool', operator: 'DoesNotExist' }] } }, nodes),
    ).toEqual(['z-master']);
    expect(targetNodes({ targetNodes: ['b', 'gone', 'y-cp'] }, nodes)).toEqual(['y-cp', 'b']);
  });
});

describe('planStarts', () => {
  const targets = ['n1', 'n2', 'n3', 'n4'];

  it('fills the free slots in target order', () => {
    expect(
      planStarts({ targets, statuses: {}, busyNodes: new Set(), concurrency: 2, stopOnFailure: false }).start,
    ).toEqual(['n1', 'n2']);
    expect(
      planStarts({
        targets,
        statuses: { n1: status('Running') },
        busyNodes: new Set(),
        concurrency: 2,
        stopOnFailure: false,
      }).start,
    ).toEqual(['n2']);
    expect(
      planStarts({
        targets,
        statuses: { n1: status('Completed') },
        busyNodes: new Set(),
        concurrency: 2,
        stopOnFailure: false,
      }).start,
    ).toEqual(['n2', 'n3']);
  });

  it('starts every node at once with concurrency 0', () => {
    expect(
      planStarts({ targets, statuses: {}, busyNodes: new Set(), concurrency: 0, stopOnFailure: false }).start,
    ).toEqual(targets);
  });

  it('counts a pending reboot and an unfinished Job without a status as in flight', () => {
    expect(isInFlight(status('Completed', 'pending'))).toBe(true);
    expect(isInFlight(status('Completed', 'completed'))).toBe(false);
    expect(
      planStarts({
        targets,
        statuses: { n1: status('Completed', 'pending') },
        busyNodes: new Set(),
        concurrency: 1,
        stopOnFailure: false,
      }).start,
    ).toEqual([]);
    expect(
      planStarts({
        targets,
        statuses: { n1: status('Completed') },
        busyNodes: new Set(['n1']),
        concurrency: 1,
        stopOnFailure: false,
      }).start,
    ).toEqual([]);
  });

  it('starts nothing after a failure with stopOnFailure, naming the failed node and the held-back ones', () => {
    const decision = planStarts({
      targets,
      statuses: { n1: status('Completed'), n2: status('Failed') },
      busyNodes: new Set(),
      concurrency: 1,
      stopOnFailure: true,
    });
    expect(decision).toMatchObject({ start: [], stoppedBy: 'n2', waiting: ['n3', 'n4'] });
    expect(
      planStarts({
        targets,
        statuses: { n2: status('Failed') },
        busyNodes: new Set(),
        concurrency: 1,
        stopOnFailure: false,
      }).start,
    ).toEqual(['n1']);
  });

  it('never puts more nodes in flight than the concurrency', () => {
    // Cases that started something: the bound is checked on them, so some must occur.
    let startedSome = 0;
    const phase = fc.constantFrom<NodeOpNodeStatus['phase']>('Pending', 'Running', 'Completed', 'Failed');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.dictionary(
          fc.constantFrom('n1', 'n2', 'n3', 'n4', 'n5', 'n6'),
          fc.record({
            phase,
            rebootStatus: fc.constantFrom('pending', 'not-requested', 'completed') as fc.Arbitrary<
              NodeOpNodeStatus['rebootStatus']
            >,
          }),
        ),
        (concurrency, statuses) => {
          const decision = planStarts({
            targets: ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'],
            statuses,
            busyNodes: new Set(),
            concurrency,
            stopOnFailure: false,
          });
          if (decision.start.length > 0) startedSome++;
          return decision.start.length === 0 || decision.inFlight + decision.start.length <= concurrency;
        },
      ),
    );
    expect(startedSome).toBeGreaterThan(0);
  });
});

describe('aggregatePhase', () => {
  it('is Pending before any node starts, Running meanwhile, Completed when every target is done, Failed on any failure', () => {
    expect(aggregatePhase([], {})).toBe('Pending');
    expect(aggregatePhase(['n1'], {})).toBe('Pending');
    expect(aggregatePhase(['n1', 'n2'], { n1: status('Completed') })).toBe('Running');
    expect(aggregatePhase(['n1'], { n1: status('Completed', 'pending') })).toBe('Running');
    expect(aggregatePhase(['n1', 'n2'], { n1: status('Completed'), n2: status('Completed', 'completed') })).toBe(
      'Completed',
    );
    expect(aggregatePhase(['n1', 'n2'], { n1: status('Failed'), n2: status('Running') })).toBe('Failed');
    // A node that no longer matches still counts until it is done.
    expect(aggregatePhase(['n1'], { n1: status('Completed'), old: status('Running') })).toBe('Running');
  });

  it('explains a stop and a NodeOp without nodes in conditions', () => {
    const stopped = nodeOpConditions(
      ['n1', 'n2'],
      { n1: { phase: 'Failed', message: 'Job j failed' } },
      { start: [], inFlight: 0, stoppedBy: 'n1', waiting: ['n2'] },
      [],
      'T',
    );
    expect(stopped).toEqual([
      {
        type: 'StoppedOnFailure',
        status: 'True',
        reason: 'NodeFailed',
        lastTransitionTime: 'T',
        message: expect.stringContaining('node n1 failed (Job j failed)'),
      },
    ]);
    expect(stopped[0]?.message).toContain('not started: n2');
    expect(nodeOpConditions([], {}, { start: [], inFlight: 0, waiting: [] }, stopped, 'U').map((c) => c.type)).toEqual([
      'NoMatchingNodes',
    ]);
  });
});

describe('rebootObserved', () => {
  const ready = (bootID: string, readyStatus = 'True'): V1Node => ({
    metadata: { name: 'n' },
    status: { nodeInfo: { bootID } as never, conditions: [{ type: 'Ready', status: readyStatus }] },
  });
  it('needs another bootID than at the start and a Ready node', () => {
    const started: NodeOpNodeStatus = { phase: 'Completed', rebootStatus: 'pending', bootID: 'b1' };
    expect(rebootObserved(started, ready('b1'))).toBe(false);
    expect(rebootObserved(started, ready('b2', 'False'))).toBe(false);
    expect(rebootObserved(started, ready('b2'))).toBe(true);
    expect(rebootObserved({ ...started, bootID: undefined }, ready('b2'))).toBe(false);
  });
});
