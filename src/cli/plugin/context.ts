/**
 * What a plugin command runs with: its options, the API clients (made on first use, so `--help` and
 * usage errors never need a cluster), and the reads several commands share, with errors that say
 * what to do.
 */
import type { V1Node } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, KINDS } from '../../api/names.js';
import { nameOf, type HasMetadata } from '../../api/object-meta.js';
import type { Skyhook } from '../../api/skyhook.js';
import { retryWhileBusy } from '../../kube/busy-retry.js';
import { isNotFound, loadKubeConfig, makeClients, type KubeClients } from '../../kube/client.js';
import { CustomObjects } from '../../kube/custom-objects.js';
import { CommandError, type PluginOptions } from './options.js';
import { compareText } from '../../util/compare.js';

const SKYHOOKS = { group: API_GROUP, version: API_VERSION, plural: KINDS.skyhook.plural };

/** Where one SCR lives (watch.ts and completion.ts call CustomObjectsApi with it directly). */
export const skyhookRef = (name: string) => ({ ...SKYHOOKS, name });

const byName = (a: HasMetadata, b: HasMetadata): number => compareText(nameOf(a), nameOf(b));

export class PluginContext {
  private made: KubeClients | undefined;

  readonly options: PluginOptions;

  constructor(options: PluginOptions) {
    this.options = options;
  }

  get clients(): KubeClients {
    this.made ??= makeClients(loadKubeConfig(this.options.kubeconfig));
    return this.made;
  }

  /** The SCRs (cluster-scoped), typed. */
  get skyhooks(): CustomObjects<Skyhook> {
    return new CustomObjects<Skyhook>(this.clients.custom, SKYHOOKS);
  }

  async getSkyhook(name: string): Promise<Skyhook> {
    try {
      return await retryWhileBusy(() => this.skyhooks.get(name));
    } catch (error) {
      if (isNotFound(error))
        throw new CommandError(`Skyhook '${name}' not found; \`skyhook status\` lists the Skyhooks of this cluster`);
      throw error;
    }
  }

  async listSkyhooks(): Promise<Skyhook[]> {
    const items = await retryWhileBusy(() => this.skyhooks.list());
    return [...items].sort(byName);
  }

  async listNodes(): Promise<V1Node[]> {
    const list = await retryWhileBusy(() => this.clients.core.listNode());
    return [...list.items].sort(byName);
  }
}
