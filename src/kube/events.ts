/**
 * core/v1 Events (what `kubectl describe` shows) with aggregation of repeats: the same object, type,
 * reason and message make one Event whose `count` and `lastTimestamp` grow, and repeats within
 * `windowMs` of the last write are written together later, so a reconcile that fails in a loop
 * costs at most one write per window instead of one Event object per attempt.
 * Recording never throws and never blocks a reconcile; a failed write is logged and dropped.
 */
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Api,
  type CoreV1Event,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { errorMessage } from './errors.js';
import { ignoreNotFound } from './writes.js';

export type EventType = 'Normal' | 'Warning';

/** The two writes the recorder makes; coreEventSink is the real one. */
export interface EventSink {
  create(namespace: string, event: CoreV1Event): Promise<unknown>;
  patch(namespace: string, name: string, patch: { count: number; lastTimestamp: Date }): Promise<unknown>;
}

export function coreEventSink(core: CoreV1Api): EventSink {
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return {
    create: (namespace, body) => core.createNamespacedEvent({ namespace, body }),
    patch: (namespace, name, body) => core.patchNamespacedEvent({ namespace, name, body }, mergePatch),
  };
}

export interface EventRecorderOptions {
  /** `source.component` and `reportingComponent`, e.g. `skyhook-operator`. */
  component: string;
  /** `reportingInstance` (the pod or process identity). */
  instance?: string;
  logger: Logger;
  clock?: Clock;
  /** Repeats within this long after a write wait and go out together. Default 10 s. */
  windowMs?: number;
  /** Distinct events remembered for aggregation. Default 4096. */
  cacheSize?: number;
}

interface Aggregate {
  namespace: string;
  /** Name of the Event object once created. */
  name?: string;
  event: CoreV1Event;
  count: number;
  written: number;
  lastWriteAt: number;
  last: Date;
  writing: boolean;
  timer?: TimerHandle;
}

export class EventRecorder {
  private readonly sink: EventSink;
  private readonly options: EventRecorderOptions;
  private readonly clock: Clock;
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(sink: EventSink, options: EventRecorderOptions) {
    this.sink = sink;
    this.options = options;
    this.clock = options.clock ?? systemClock;
  }

  /** Records that `reason` happened to `object`. Fire and forget. */
  record(object: KubernetesObject, type: EventType, reason: string, message: string): void {
    const meta = object.metadata ?? {};
    const key = [meta.uid ?? '', object.kind, meta.namespace ?? '', meta.name, type, reason, message].join('\u0000');
    const now = new Date(this.clock.now());
    let aggregate = this.aggregates.get(key);
    if (aggregate) {
      this.aggregates.delete(key); // re-insert: Map order is the LRU order
    } else {
      aggregate = this.newAggregate(object, type, reason, message, now);
      this.evictOldest();
    }
    this.aggregates.set(key, aggregate);
    aggregate.count++;
    aggregate.last = now;
    this.schedule(aggregate);
  }

  /** Writes every pending repeat now and waits for all writes (shutdown, tests). */
  async flush(): Promise<void> {
    for (const aggregate of this.aggregates.values()) {
      if (aggregate.timer !== undefined) this.clock.clearTimeout(aggregate.timer);
      aggregate.timer = undefined;
      if (aggregate.count > aggregate.written && !aggregate.writing) this.write(aggregate);
    }
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private newAggregate(
    object: KubernetesObject,
    type: EventType,
    reason: string,
    message: string,
    now: Date,
  ): Aggregate {
    const meta = object.metadata ?? {};
    // Events of cluster-scoped objects (Node, Skyhook) go to `default`, as kubectl describe expects.
    const namespace = meta.namespace || 'default';
    const { component, instance } = this.options;
    const event: CoreV1Event = {
      metadata: { namespace },
      involvedObject: {
        ...(object.apiVersion ? { apiVersion: object.apiVersion } : {}),
        ...(object.kind ? { kind: object.kind } : {}),
        ...(meta.name ? { name: meta.name } : {}),
        ...(meta.namespace ? { namespace: meta.namespace } : {}),
        ...(meta.uid ? { uid: meta.uid } : {}),
        ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      },
      type,
      reason,
      message,
      source: { component },
      reportingComponent: component,
      ...(instance ? { reportingInstance: instance } : {}),
      firstTimestamp: now,
    };
    return { namespace, event, count: 0, written: 0, lastWriteAt: Number.NEGATIVE_INFINITY, last: now, writing: false };
  }

  /** First occurrence: write now. Repeats: write now if the window since the last write passed, else at its end. */
  private schedule(aggregate: Aggregate): void {
    if (aggregate.writing || aggregate.timer !== undefined) return;
    const windowMs = this.options.windowMs ?? 10_000;
    const wait = aggregate.lastWriteAt + windowMs - this.clock.now();
    if (wait <= 0) {
      this.write(aggregate);
      return;
    }
    aggregate.timer = this.clock.setTimeout(() => {
      aggregate.timer = undefined;
      this.write(aggregate);
    }, wait);
  }

  private write(aggregate: Aggregate): void {
    aggregate.writing = true;
    aggregate.lastWriteAt = this.clock.now();
    const count = aggregate.count;
    const lastTimestamp = aggregate.last;
    const done = this.send(aggregate, count, lastTimestamp)
      .then(
        () => {
          aggregate.written = count;
        },
        (e: unknown) => {
          aggregate.written = count; // dropped: retrying could flood just as badly
          this.options.logger.warn(
            { reason: aggregate.event.reason, object: aggregate.event.involvedObject.name, err: errorMessage(e) },
            'could not record event',
          );
        },
      )
      .finally(() => {
        aggregate.writing = false;
        this.inFlight.delete(done);
        if (aggregate.count > aggregate.written) this.schedule(aggregate);
      });
    this.inFlight.add(done);
  }

  private async send(aggregate: Aggregate, count: number, lastTimestamp: Date): Promise<void> {
    if (aggregate.name) {
      const patch = { count, lastTimestamp };
      // NotFound: the Event expired (the API server keeps them about an hour); a new one is started below.
      const patched = await ignoreNotFound(
        this.sink.patch(aggregate.namespace, aggregate.name, patch).then(() => true),
      );
      if (patched) return;
    }
    const objectName = aggregate.event.involvedObject.name ?? 'object';
    // client-go names events `<object>.<unix nanos in hex>`; the random low digits avoid collisions.
    const name = `${objectName}.${(BigInt(this.clock.now()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1_000_000))).toString(16)}`;
    await this.sink.create(aggregate.namespace, {
      ...aggregate.event,
      metadata: { name, namespace: aggregate.namespace },
      count,
      lastTimestamp,
    });
    aggregate.name = name;
  }

  private evictOldest(): void {
    const limit = this.options.cacheSize ?? 4096;
    for (const [key, aggregate] of this.aggregates) {
      if (this.aggregates.size < limit) return;
      if (aggregate.writing || aggregate.timer !== undefined) continue;
      this.aggregates.delete(key);
    }
  }
}
