/**
 * `skyhook maintenance`'s loop on one node: watch its Node, the MaintenancePolicies and its own
 * maintenance Lease (watches, not polls: twenty or a thousand daemons cost the API server nothing
 * between changes), and every period observe the host, decide (state-machine.ts) and act. The Lease
 * is created owned by the Node, so a deleted node's Lease is garbage collected with it, and renewed
 * every heartbeat: the operator's lockTTL reads that renewal, not the Node, which every controller
 * watches and which a heartbeat would wake them all for.
 */
import { CoordinationV1Api, type KubeConfig, type V1Lease, type V1Node } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { MAINTENANCE_DEFAULTS, type MaintenancePolicy } from '../api/maintenance-policy.js';
import { leaseStateOf, MAINTENANCE_LEASE, maintenanceLeaseName } from '../api/maintenance-protocol.js';
import { effectiveProtocols, policyForNode, type EffectiveProtocols } from '../api/maintenance-settings.js';
import { API_GROUP, API_VERSION, KINDS } from '../api/names.js';
import { errorMessage, isAlreadyExists, MERGE_PATCH } from '../kube/client.js';
import { sleep, systemClock, type Clock } from '../kube/clock.js';
import { Informer } from '../kube/informer.js';
import { apiListWatch, customResourcePath } from '../kube/list-watch.js';
import { type HostFiles, runSentinelCommand } from './host.js';
import type { Rebooter } from './rebooter.js';
import { decide, type DaemonAction, type Observation } from './state-machine.js';

export interface PathOverrides {
  requiredPath?: string;
  inProgressPath?: string;
  rebootSentinel?: string;
}

export interface DaemonOptions {
  kc: KubeConfig;
  node: string;
  /** Namespace of the maintenance Leases (the operator's). */
  namespace: string;
  host: HostFiles;
  periodMs: number;
  heartbeatMs: number;
  /** Undefined: this daemon serves no reboot requests. */
  rebooter?: Rebooter;
  overrides?: PathOverrides;
  /**
   * How a policy's reboot sentinel command reaches the host (kured runs it with nsenter into PID 1's
   * mount namespace); default: as it is, in this process's own file system (simulated hosts).
   */
  onHost?: (command: string[]) => string[];
  logger: Logger;
  clock?: Clock;
}

/** A second reboot call in one process only after this long (a real reboot kills the process first). */
const REBOOT_RETRY_MS = 5 * 60_000;

const rvOf = (lease: V1Lease | undefined): bigint => BigInt(lease?.metadata?.resourceVersion || '0');

/** metav1.MicroTime wants six fractional digits. */
const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

function withOverrides(p: EffectiveProtocols, o: PathOverrides): EffectiveProtocols {
  return {
    ...(p.maintenance
      ? {
          maintenance: {
            requiredPath: o.requiredPath ?? p.maintenance.requiredPath,
            inProgressPath: o.inProgressPath ?? p.maintenance.inProgressPath,
          },
        }
      : {}),
    ...(p.reboot
      ? { reboot: o.rebootSentinel ? { ...p.reboot, sentinel: { path: o.rebootSentinel } } : p.reboot }
      : {}),
  };
}

export class MaintenanceDaemon {
  private readonly o: DaemonOptions;
  private readonly clock: Clock;
  private readonly coordination: CoordinationV1Api;
  private readonly leaseName: string;
  private readonly nodes: Informer<V1Node>;
  private readonly policies: Informer<MaintenancePolicy>;
  private readonly leases: Informer<V1Lease>;
  private written: V1Lease | undefined;
  private lastRenewMs = Number.NEGATIVE_INFINITY;
  private rebootCalledAtMs = Number.NEGATIVE_INFINITY;
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(options: DaemonOptions) {
    this.o = options;
    this.clock = options.clock ?? systemClock;
    this.coordination = options.kc.makeApiClient(CoordinationV1Api);
    this.leaseName = maintenanceLeaseName(options.node);
    const watch = { logger: options.logger };
    this.nodes = new Informer<V1Node>(apiListWatch(options.kc, '/api/v1/nodes'), {
      ...watch,
      resource: 'node',
      fieldSelector: `metadata.name=${options.node}`,
    });
    const policiesPath = customResourcePath(API_GROUP, API_VERSION, KINDS.maintenancePolicy.plural);
    this.policies = new Informer<MaintenancePolicy>(apiListWatch(options.kc, policiesPath), {
      ...watch,
      resource: 'maintenancepolicies',
    });
    const leasesPath = `/apis/coordination.k8s.io/v1/namespaces/${options.namespace}/leases`;
    this.leases = new Informer<V1Lease>(apiListWatch(options.kc, leasesPath), {
      ...watch,
      resource: 'lease',
      fieldSelector: `metadata.name=${this.leaseName}`,
    });
  }

  async start(syncTimeoutMs = 60_000): Promise<void> {
    for (const i of [this.nodes, this.policies, this.leases]) i.start();
    await Promise.all([this.nodes, this.policies, this.leases].map((i) => i.waitForSync(syncTimeoutMs)));
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    await Promise.all([this.nodes, this.policies, this.leases].map((i) => i.stop()));
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.tick();
      } catch (e) {
        this.o.logger.warn({ err: errorMessage(e) }, 'maintenance tick failed; trying again');
      }
      await sleep(this.clock, this.o.periodMs);
    }
  }

  /** The Lease as this process knows it best: the watch's copy or its own newer write. */
  private lease(): V1Lease | undefined {
    const cached = this.leases.get(this.leaseName, this.o.namespace);
    if (this.written && (!cached || rvOf(this.written) > rvOf(cached))) return this.written;
    return cached;
  }

  private async patchLease(body: object): Promise<void> {
    const { namespace } = this.o;
    this.written = await this.coordination.patchNamespacedLease({ name: this.leaseName, namespace, body }, MERGE_PATCH);
  }

  private annotate(annotations: Record<string, string | null>): Promise<void> {
    return this.patchLease({ metadata: { annotations } });
  }

  /** Creates the node's Lease, owned by the Node (garbage collected with it), unless it exists. */
  private async ensureLease(node: V1Node): Promise<void> {
    if (this.lease()) return;
    const { namespace } = this.o;
    const now = this.clock.now();
    try {
      this.written = await this.coordination.createNamespacedLease({
        namespace,
        body: {
          metadata: {
            name: this.leaseName,
            namespace,
            labels: { [MAINTENANCE_LEASE.nodeLabel]: this.o.node },
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.o.node, uid: node.metadata?.uid ?? '' }],
          },
          spec: {
            holderIdentity: `skyhook-maintenance/${this.o.node}`,
            leaseDurationSeconds: Math.ceil((this.o.heartbeatMs * 3) / 1000),
            renewTime: microTime(now) as unknown as Date,
          },
        },
      });
      this.lastRenewMs = now;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }

  private async observe(node: V1Node): Promise<Observation> {
    const { host } = this.o;
    const policy = policyForNode(this.policies.list(), node.metadata?.labels ?? {});
    const protocols = policy ? withOverrides(effectiveProtocols(policy.spec), this.o.overrides ?? {}) : undefined;
    const sentinel = protocols?.reboot?.sentinel;
    const rebootRequired =
      sentinel === undefined
        ? false
        : 'path' in sentinel
          ? await host.exists(sentinel.path)
          : await runSentinelCommand(this.o.onHost ? this.o.onHost(sentinel.command) : sentinel.command);
    const m = protocols?.maintenance;
    return {
      protocols,
      canReboot: this.o.rebooter !== undefined,
      requiredPresent: m ? await host.exists(m.requiredPath) : false,
      inProgressPresent: m ? await host.exists(m.inProgressPath) : false,
      rebootRequired,
      bootId: await host.bootId(),
      host: await host.readState(),
      lease: leaseStateOf(this.lease() ?? {}) ?? { node: this.o.node },
      now: this.clock.now(),
    };
  }

  async tick(): Promise<void> {
    const node = this.nodes.get(this.o.node);
    if (!node) return;
    await this.ensureLease(node);
    const observed = await this.observe(node);
    const decision = decide(observed);
    for (const action of decision.actions) await this.act(action, observed);
    const lease = leaseStateOf(this.lease() ?? {});
    const now = this.clock.now();
    const renew = now - this.lastRenewMs >= this.o.heartbeatMs;
    const progressChanged = lease?.progress !== decision.progress;
    if (renew || progressChanged) {
      await this.patchLease({
        ...(progressChanged ? { metadata: { annotations: { [MAINTENANCE_LEASE.progress]: decision.progress } } } : {}),
        ...(renew ? { spec: { renewTime: microTime(now) } } : {}),
      });
      if (renew) this.lastRenewMs = now;
    }
  }

  private async act(action: DaemonAction, observed: Observation): Promise<void> {
    const { host, logger } = this.o;
    const m = observed.protocols?.maintenance;
    switch (action.kind) {
      case 'request':
        logger.info({ request: action.request }, 'asking for a slot');
        return this.annotate({
          [MAINTENANCE_LEASE.request]: JSON.stringify(action.request),
          [MAINTENANCE_LEASE.done]: null,
        });
      case 'clear':
        return this.annotate({ [MAINTENANCE_LEASE.request]: null, [MAINTENANCE_LEASE.done]: null });
      case 'reportDone':
        logger.info({ done: action.done }, 'maintenance done');
        return this.annotate({ [MAINTENANCE_LEASE.done]: JSON.stringify(action.done) });
      case 'touchInProgress':
        if (m) await host.touch(m.inProgressPath);
        return;
      case 'removeInProgress':
        // A policy that no longer serves the protocol has no path: the default one is removed.
        await host.remove(m?.inProgressPath ?? MAINTENANCE_DEFAULTS.inProgressPath);
        return;
      case 'writeHostState':
        return host.writeState(action.host);
      case 'reboot':
        return this.reboot(action.delayMs);
    }
  }

  private async reboot(delayMs: number): Promise<void> {
    if (!this.o.rebooter || this.clock.now() - this.rebootCalledAtMs < REBOOT_RETRY_MS) return;
    if (delayMs > 0) await sleep(this.clock, delayMs);
    this.o.logger.info('rebooting the node');
    this.rebootCalledAtMs = this.clock.now();
    await this.o.rebooter.reboot();
  }
}
