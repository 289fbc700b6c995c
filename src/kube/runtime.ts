/**
 * What every controller is started with: clients, shared informers, the event recorder, logger and
 * metrics. Informers are shared by path and selectors, so the NodeOp and Skyhook controllers
 * watching Jobs hold one cache and one watch between them; readiness is "all of them synced".
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeClients } from './client.js';
import type { EventRecorder } from './events.js';
import { Informer, type ListWatch, type Selectors } from './informer.js';
import type { RuntimeMetrics } from './metrics.js';

export interface OperatorRuntime {
  kc: KubeConfig;
  clients: KubeClients;
  informers: InformerFactory;
  events: EventRecorder;
  logger: Logger;
  metrics: RuntimeMetrics;
  /** The operator's own namespace (Lease; NAMESPACE/POD_NAMESPACE). */
  namespace: string;
  /** This process's identity (lease holder, event source instance). */
  identity: string;
}

export interface SharedInformerOptions<T = KubernetesObject> extends Selectors {
  /** Name in logs and metrics; defaults to the path's last segment, plus the selectors. */
  resource?: string;
  resyncMs?: number;
  /**
   * Applied to every object before it is cached (default: drop managedFields). Part of what is
   * shared: asking for the same path and selectors with another transform is a programming error.
   */
  transform?: (object: T) => T;
}

export type ListWatchFactory = <T extends KubernetesObject>(path: string) => ListWatch<T>;

export class InformerFactory {
  private readonly informers = new Map<string, Informer<KubernetesObject>>();
  private readonly transforms = new Map<string, unknown>();
  private readonly makeListWatch: ListWatchFactory;
  private readonly logger: Logger;
  private readonly metrics: RuntimeMetrics | undefined;

  constructor(makeListWatch: ListWatchFactory, options: { logger: Logger; metrics?: RuntimeMetrics }) {
    this.makeListWatch = makeListWatch;
    this.logger = options.logger;
    this.metrics = options.metrics;
  }

  /**
   * The started informer for the list path `path` (e.g. `/apis/batch/v1/jobs`) with these selectors,
   * created and started on first use; handlers attached later get the cached objects replayed as adds.
   */
  informer<T extends KubernetesObject>(path: string, options: SharedInformerOptions<T> = {}): Informer<T> {
    const { labelSelector, fieldSelector, resyncMs, transform } = options;
    const id = JSON.stringify([path, labelSelector ?? '', fieldSelector ?? '']);
    const existing = this.informers.get(id);
    if (existing) {
      // A cache compacted by one caller's transform would lack what another caller reads.
      if (this.transforms.get(id) !== transform)
        throw new Error(`informer ${id} is already shared with another transform`);
      return existing as unknown as Informer<T>;
    }
    const selectors = [labelSelector, fieldSelector].filter(Boolean).join(',');
    const resource = options.resource ?? `${path.split('/').pop() ?? path}${selectors ? `{${selectors}}` : ''}`;
    const informer = new Informer<T>(this.makeListWatch<T>(path), {
      resource,
      logger: this.logger,
      ...(labelSelector ? { labelSelector } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
      ...(resyncMs !== undefined ? { resyncMs } : {}),
      ...(transform ? { transform } : {}),
      ...(this.metrics ? { metrics: this.metrics } : {}),
    });
    this.informers.set(id, informer as unknown as Informer<KubernetesObject>);
    this.transforms.set(id, transform);
    informer.start();
    return informer;
  }

  /** True when every informer made so far has synced (none made: true). */
  get synced(): boolean {
    return [...this.informers.values()].every((i) => i.synced);
  }

  /** Informers that have not synced yet, by resource name (for /readyz's message). */
  unsynced(): string[] {
    return [...this.informers.values()].filter((i) => !i.synced).map((i) => i.resource);
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}

/** Something started that must be stopped on shutdown. */
export interface Stoppable {
  /**
   * Stop taking new work at once (synchronously, before the first await), then wait up to
   * `deadlineMs` for work in flight. The Controller class in src/kube/controller.ts is one.
   */
  stop(deadlineMs: number): Promise<unknown>;
}

export interface ControllerFactory {
  name: string;
  /** Creates informers (runtime.informers), wires a Controller and starts it. */
  start(runtime: OperatorRuntime): Promise<Stoppable>;
}
