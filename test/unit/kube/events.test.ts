/**
 * Event recording with aggregation: the first occurrence is written at once as a core/v1 Event;
 * repeats in a retry loop become one patch of count/lastTimestamp per window instead of a flood;
 * an expired Event is re-created; sink failures never reach the caller.
 */
import { describe, expect, it } from '@jest/globals';
import type { CoreV1Event } from '@kubernetes/client-node';
import { EventRecorder, type EventSink } from '../../../src/kube/events.js';
import { silentLogger } from '../../../src/kube/logger.js';
import { FakeClock, settle } from './fake-clock.js';

class RecordingSink implements EventSink {
  creates: { namespace: string; event: CoreV1Event }[] = [];
  patches: { namespace: string; name: string; patch: { count: number; lastTimestamp: Date } }[] = [];
  failNextPatchWith: unknown;
  failCreates = false;

  async create(namespace: string, event: CoreV1Event): Promise<unknown> {
    if (this.failCreates)
      throw Object.assign(new Error('forbidden'), { code: 403, body: '{"reason":"Forbidden","message":"no"}' });
    this.creates.push({ namespace, event });
    return event;
  }

  async patch(namespace: string, name: string, patch: { count: number; lastTimestamp: Date }): Promise<unknown> {
    if (this.failNextPatchWith) {
      const e = this.failNextPatchWith;
      this.failNextPatchWith = undefined;
      throw e;
    }
    this.patches.push({ namespace, name, patch });
    return patch;
  }
}

const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', uid: 'u-1' } };
const job = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'j', namespace: 'work', uid: 'u-2', resourceVersion: '7' },
};

function setup() {
  const clock = new FakeClock();
  const sink = new RecordingSink();
  const recorder = new EventRecorder(sink, {
    component: 'skyhook-operator',
    instance: 'pod-a',
    logger: silentLogger(),
    clock,
    windowMs: 10_000,
  });
  return { clock, sink, recorder };
}

describe('EventRecorder', () => {
  it('writes the first occurrence at once with the involved object, reason, message and type', async () => {
    const { sink, recorder } = setup();
    recorder.record(job, 'Warning', 'Failed', 'stage apply exited 2');
    recorder.record(node, 'Normal', 'Apply', 'Applying package');
    await settle();
    expect(sink.creates).toHaveLength(2);
    const [jobEvent, nodeEvent] = sink.creates;
    expect(jobEvent!.namespace).toBe('work');
    expect(jobEvent!.event).toMatchObject({
      involvedObject: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: 'j',
        namespace: 'work',
        uid: 'u-2',
        resourceVersion: '7',
      },
      type: 'Warning',
      reason: 'Failed',
      message: 'stage apply exited 2',
      count: 1,
      source: { component: 'skyhook-operator' },
      reportingComponent: 'skyhook-operator',
      reportingInstance: 'pod-a',
    });
    expect(jobEvent!.event.metadata.name).toMatch(/^j\.[0-9a-f]+$/);
    // Cluster-scoped objects' events live in `default`.
    expect(nodeEvent!.namespace).toBe('default');
    expect(nodeEvent!.event.involvedObject.namespace).toBeUndefined();
  });

  it('aggregates a retry loop into one patch per window with the running count and last time', async () => {
    const { sink, recorder, clock } = setup();
    recorder.record(job, 'Warning', 'Failed', 'boom');
    await settle();
    for (let i = 0; i < 100; i++) {
      await clock.advance(50);
      recorder.record(job, 'Warning', 'Failed', 'boom');
    }
    // 5 s passed: nothing more written yet.
    expect(sink.creates).toHaveLength(1);
    expect(sink.patches).toHaveLength(0);
    await clock.advance(5000);
    expect(sink.patches).toHaveLength(1);
    const name = sink.creates[0]!.event.metadata.name;
    expect(sink.patches[0]).toMatchObject({ namespace: 'work', name, patch: { count: 101 } });
    expect(sink.patches[0]!.patch.lastTimestamp.getTime()).toBe(1_000_000 + 100 * 50);
    // A repeat long after the window is written at once.
    await clock.advance(60_000);
    recorder.record(job, 'Warning', 'Failed', 'boom');
    await settle();
    expect(sink.patches).toHaveLength(2);
    expect(sink.patches[1]!.patch.count).toBe(102);
  });

  it('keeps different reasons, messages or objects apart', async () => {
    const { sink, recorder } = setup();
    recorder.record(job, 'Warning', 'Failed', 'a');
    recorder.record(job, 'Warning', 'Failed', 'b');
    recorder.record(job, 'Normal', 'Started', 'a');
    recorder.record(node, 'Warning', 'Failed', 'a');
    await settle();
    expect(sink.creates).toHaveLength(4);
  });

  it('re-creates an Event that expired (patch 404) and flush writes pending repeats', async () => {
    const { sink, recorder } = setup();
    recorder.record(job, 'Warning', 'Failed', 'x');
    await settle();
    recorder.record(job, 'Warning', 'Failed', 'x');
    sink.failNextPatchWith = Object.assign(new Error('gone'), { code: 404, body: '{"reason":"NotFound"}' });
    await recorder.flush();
    expect(sink.creates).toHaveLength(2);
    expect(sink.creates[1]!.event.count).toBe(2);
    expect(sink.creates[1]!.event.metadata.name).not.toBe(sink.creates[0]!.event.metadata.name);
  });

  it('never throws when the API refuses the write', async () => {
    const { sink, recorder } = setup();
    sink.failCreates = true;
    expect(() => recorder.record(job, 'Normal', 'R', 'm')).not.toThrow();
    await recorder.flush();
    expect(sink.creates).toHaveLength(0);
  });
});
