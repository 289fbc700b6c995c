/**
 * Controller wiring: informer events become keys (own key, owner references, a label; both old
 * and new owner on update), reconciles run through the queue, and stop shuts the queue at once
 * then drains. Also the small pure helpers of the runtime (keys, errors, bind addresses).
 */
import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Controller, ownerKeys, parseKey } from '../../../src/kube/controller.js';
import {
  errorMessage,
  errorReason,
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTooManyRequests,
} from '../../../src/kube/errors.js';
import { Informer, type ListWatch } from '../../../src/kube/informer.js';
import { silentLogger } from '../../../src/kube/logger.js';
import { FakeClock } from './fake-clock.js';

const jobOf = (
  name: string,
  owner: { kind: string; name: string; apiVersion?: string },
  labels: Record<string, string> = {},
): KubernetesObject => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: {
    name,
    namespace: 'ns',
    resourceVersion: '1',
    labels,
    ownerReferences: [
      { apiVersion: owner.apiVersion ?? 'skyhook.nvidia.com/v1alpha1', kind: owner.kind, name: owner.name, uid: 'u' },
    ],
  },
});

describe('key mappers', () => {
  it('ownerKeys maps a child to owners of the kind (and group), namespaced or not', () => {
    const job = jobOf('j', { kind: 'NodeOp', name: 'op' });
    expect(ownerKeys('NodeOp')(job)).toEqual(['ns/op']);
    expect(ownerKeys('NodeOp', { apiGroup: 'skyhook.nvidia.com' })(job)).toEqual(['ns/op']);
    expect(ownerKeys('NodeOp', { apiGroup: 'other.io' })(job)).toEqual([]);
    expect(ownerKeys('Skyhook', { ownerNamespaced: false })(jobOf('j', { kind: 'Skyhook', name: 'demo' }))).toEqual([
      'demo',
    ]);
    expect(ownerKeys('Pod', { apiGroup: '' })(jobOf('j', { kind: 'Pod', name: 'p', apiVersion: 'v1' }))).toEqual([
      'ns/p',
    ]);
    expect(ownerKeys('NodeOp')({ metadata: { name: 'x' } })).toEqual([]);
  });

  it('parseKey splits namespace/name and bare names', () => {
    expect(parseKey('ns/a')).toEqual({ namespace: 'ns', name: 'a' });
    expect(parseKey('node-1')).toEqual({ name: 'node-1' });
  });
});

describe('errors', () => {
  const apiException = (code: number, reason?: string, message?: string) =>
    Object.assign(new Error(`HTTP-Code: ${code}\nMessage: ...\nHeaders: {}`), {
      code,
      body: JSON.stringify({ kind: 'Status', reason, message, code }),
    });
  it('reads the Status reason and message from ApiException bodies', () => {
    expect(errorReason(apiException(409, 'AlreadyExists'))).toBe('AlreadyExists');
    expect(errorReason(Object.assign(new Error('x'), { code: 500, body: 'not json' }))).toBe('500');
    expect(errorReason(new Error('network'))).toBeUndefined();
    expect(errorMessage(apiException(422, 'Invalid', 'spec.x: Required value'))).toBe(
      'Invalid: spec.x: Required value',
    );
    expect(errorMessage(new Error('first line\nsecond'))).toBe('first line');
  });
  it('classifies by status code, telling a conflict from an existing name', () => {
    expect(isNotFound(apiException(404, 'NotFound'))).toBe(true);
    expect(isConflict(apiException(409, 'Conflict'))).toBe(true);
    expect(isConflict(apiException(409, 'AlreadyExists'))).toBe(false);
    expect(isAlreadyExists(apiException(409, 'AlreadyExists'))).toBe(true);
    expect(isTooManyRequests(apiException(429, 'TooManyRequests'))).toBe(true);
    expect(isNotFound(Object.assign(new Error('watch'), { statusCode: 404 }))).toBe(true);
    expect(isNotFound(new Error('x'))).toBe(false);
  });
});

describe('Controller', () => {
  it('reconciles the owners of watched objects, old and new owner on update, and stops cleanly', async () => {
    const clock = new FakeClock();
    let emit: (type: string, object: unknown) => void = () => undefined;
    const source: ListWatch<KubernetesObject> = {
      list: async () => ({ items: [jobOf('j1', { kind: 'NodeOp', name: 'a' })], metadata: { resourceVersion: '1' } }),
      watch: async (_o, onEvent) => {
        emit = onEvent;
        return { abort: () => undefined };
      },
    };
    const informer = new Informer(source, { resource: 'jobs', logger: silentLogger(), clock, resyncMs: 0 });
    const reconciled: string[] = [];
    const controller = new Controller({
      name: 'nodeop',
      workers: 2,
      logger: silentLogger(),
      clock,
      reconcile: async (key) => {
        reconciled.push(key);
      },
    }).watch(informer, ownerKeys('NodeOp'));
    controller.start();
    informer.start();
    await clock.advance(0);
    expect(reconciled).toEqual(['ns/a']);
    const moved = jobOf('j1', { kind: 'NodeOp', name: 'b' });
    moved.metadata!.resourceVersion = '2';
    emit('MODIFIED', moved);
    await clock.advance(0);
    expect(reconciled.slice(1).sort()).toEqual(['ns/a', 'ns/b']);
    emit('DELETED', moved);
    await clock.advance(0);
    expect(reconciled.at(-1)).toBe('ns/b');
    expect(await controller.stop(1000)).toBe(true);
    emit('ADDED', jobOf('j2', { kind: 'NodeOp', name: 'c' }));
    await clock.advance(0);
    expect(reconciled).not.toContain('ns/c');
  });
});
