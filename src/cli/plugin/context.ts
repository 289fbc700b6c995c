/**
 * What a plugin command runs with: its options, the API clients (made on first use, so `--help` and
 * usage errors never need a cluster), and the reads several commands share, with errors that say
 * what to do.
 */
import type { V1Node } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, KINDS } from '../../api/names.js';
import type { Skyhook } from '../../api/skyhook.js';
import { retryWhileBusy } from '../../kube/busy-retry.js';
import { isNotFound, loadKubeConfig, makeClients, type KubeClients } from '../../kube/client.js';
import { CommandError, type PluginOptions } from './options.js';

export const skyhookRef = (name: string) => ({
  group: API_GROUP,
  version: API_VERSION,
  plural: KINDS.skyhook.plural,
  name,
});

export class PluginContext {
  private made: KubeClients | undefined;

  constructor(readonly options: PluginOptions) {}

  get clients(): KubeClients {
    this.made ??= makeClients(loadKubeConfig(this.options.kubeconfig));
    return this.made;
  }

  async getSkyhook(name: string): Promise<Skyhook> {
    try {
      return (await retryWhileBusy(() => this.clients.custom.getClusterCustomObject(skyhookRef(name)))) as Skyhook;
    } catch (error) {
      if (isNotFound(error))
        throw new CommandError(`Skyhook '${name}' not found; \`skyhook status\` lists the Skyhooks of this cluster`);
      throw error;
    }
  }

  async listSkyhooks(): Promise<Skyhook[]> {
    const { group, version, plural } = skyhookRef('');
    const list = (await retryWhileBusy(() =>
      this.clients.custom.listClusterCustomObject({ group, version, plural }),
    )) as { items: Skyhook[] };
    return [...list.items].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
  }

  async listNodes(): Promise<V1Node[]> {
    const list = await retryWhileBusy(() => this.clients.core.listNode());
    return [...list.items].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  }
}
