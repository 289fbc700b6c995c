/**
 * Controller.watch with EventKeys: each kind of event maps to keys of its own, and an update can
 * map to none (a change the reconcile does not read), as the Skyhook controller wires its informers.
 * A plain KeyMapper still maps both versions of an update, the new one first.
 */
import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Controller } from '../../../src/kube/controller.js';
import { Informer, type ListWatch } from '../../../src/kube/informer.js';
import { silentLogger } from '../../../src/kube/logger.js';
import { FakeClock } from './fake-clock.js';

const obj = (name: string, resourceVersion: string, labels: Record<string, string> = {}): KubernetesObject => ({
  metadata: { name, resourceVersion, labels },
});

/** An informer over a scripted watch, and the function that emits its events. */
function scripted(clock: FakeClock, items: KubernetesObject[]) {
  const script = { emit: (_type: string, _object: unknown): void => undefined };
  const source: ListWatch<KubernetesObject> = {
    list: async () => ({ items, metadata: { resourceVersion: '1' } }),
    watch: async (_o, onEvent) => {
      script.emit = onEvent;
      return { abort: () => undefined };
    },
  };
  return { informer: new Informer(source, { resource: 'things', logger: silentLogger(), clock, resyncMs: 0 }), script };
}

/** The keys queued so far, in order (taken off the queue as a worker would). */
/** A controller keyed by each object's `owner` label, started over object a (owner p), its first key drained. */
async function ownerKeyed(): Promise<{ script: ReturnType<typeof scripted>['script']; controller: Controller }> {
  const clock = new FakeClock();
  const { informer, script } = scripted(clock, [obj('a', '1', { owner: 'p' })]);
  const controller = new Controller({ name: 't', logger: silentLogger(), clock, reconcile: async () => undefined });
  controller.watch(informer, (o) => [o.metadata?.labels?.['owner'] ?? '']);
  informer.start();
  await clock.advance(0);
  expect(await drain(controller)).toEqual(['p']);
  return { script, controller };
}

async function drain(controller: Controller): Promise<string[]> {
  const keys: string[] = [];
  while (controller.queue.length > 0) {
    const key = await controller.queue.get();
    if (key === undefined) break;
    keys.push(key);
    controller.queue.done(key);
  }
  return keys;
}

describe('Controller.watch', () => {
  it('maps each event with its own function; an update may map to nothing', async () => {
    const clock = new FakeClock();
    const { informer, script } = scripted(clock, [obj('a', '1')]);
    const controller = new Controller({ name: 't', logger: silentLogger(), clock, reconcile: async () => undefined });
    controller.watch(informer, {
      add: (o) => [`added/${o.metadata?.name}`],
      update: (o, old) =>
        o.metadata?.labels?.['x'] === old.metadata?.labels?.['x'] ? [] : [`moved/${o.metadata?.name}`],
      delete: (o) => [`deleted/${o.metadata?.name}`],
    });
    informer.start();
    await clock.advance(0);
    expect(await drain(controller)).toEqual(['added/a']);
    script.emit('MODIFIED', obj('a', '2'));
    expect(await drain(controller)).toEqual([]);
    script.emit('MODIFIED', obj('a', '3', { x: 'y' }));
    script.emit('DELETED', obj('a', '4', { x: 'y' }));
    expect(await drain(controller)).toEqual(['moved/a', 'deleted/a']);
  });

  it('with a KeyMapper maps the new then the old version of an update', async () => {
    const { script, controller } = await ownerKeyed();
    script.emit('MODIFIED', obj('a', '2', { owner: 'q' }));
    expect(await drain(controller)).toEqual(['q', 'p']);
  });

  it('queues a key once per event, so a worker that takes it at once is not handed it again', async () => {
    const { script, controller } = await ownerKeyed();
    // A worker waiting for a key takes 'p' as soon as it is added; a second add of 'p' from the same
    // event would mark it dirty and make a second reconcile of it once the first is done.
    const taken = controller.queue.get();
    script.emit('MODIFIED', obj('a', '2', { owner: 'p' }));
    const key = await taken;
    expect(key).toBe('p');
    controller.queue.done(key!);
    expect(controller.queue.length).toBe(0);
  });
});
