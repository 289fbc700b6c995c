/**
 * `status --watch` (`-w`), as `kubectl get -w`: the list first, then one more line per change of a
 * Skyhook (one document with -o json|yaml, one name with -o name) until interrupted (Ctrl-C ends it
 * with exit 0). A watch the server closes (its timeout) starts again from the last resourceVersion
 * seen; an expired one (410) lists again, printing only what changed meanwhile.
 */
import { Watch } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { Skyhook } from '../../api/skyhook.js';
import { customResourcePath } from '../../kube/list-watch.js';
import { skyhookRef, type PluginContext } from './context.js';
import { render, renderTable } from './output.js';
import { SKYHOOK_COLUMNS, skyhookName, summarizeSkyhook, type SkyhookSummary } from './status.js';
import { nameOf } from '../../api/object-meta.js';
import { compareText } from '../../util/compare.js';

type SkyhookList = { metadata?: { resourceVersion?: string }; items: Skyhook[] };

function formatOne(summary: SkyhookSummary, output: PluginContext['options']['output']): string {
  if (output === 'json') return JSON.stringify(summary, null, 2);
  if (output === 'yaml') return `---\n${stringify(summary).trimEnd()}`;
  if (output === 'name') return skyhookName(summary);
  // The row without its header, as kubectl -w prints changes.
  return renderTable([summary], SKYHOOK_COLUMNS, output === 'wide').split('\n')[1] ?? '';
}

async function list(ctx: PluginContext): Promise<SkyhookList> {
  const { group, version, plural } = skyhookRef('');
  return (await ctx.clients.custom.listClusterCustomObject({ group, version, plural })) as SkyhookList;
}

export async function watchStatus(ctx: PluginContext, names: string[]): Promise<number> {
  const wanted = (s: Skyhook): boolean => names.length === 0 || names.includes(nameOf(s));
  const { output } = ctx.options;
  const initial = await list(ctx);
  const items = initial.items.filter(wanted).sort((a, b) => compareText(nameOf(a), nameOf(b)));
  const summaries = items.map(summarizeSkyhook);
  if (output === 'table' || output === 'wide' || output === 'name') {
    if (summaries.length > 0) console.log(render(summaries, SKYHOOK_COLUMNS, output, skyhookName));
  } else for (const summary of summaries) console.log(formatOne(summary, output));
  const seen = new Map(items.map((s) => [nameOf(s), s.metadata.resourceVersion ?? '']));
  let resourceVersion = initial.metadata?.resourceVersion ?? '';
  const { group, version, plural } = skyhookRef('');
  const path = customResourcePath(group, version, plural);
  const watcher = new Watch(ctx.clients.kc);
  let current: AbortController | undefined;
  let stopped = false;

  const print = (skyhook: Skyhook): void => {
    const name = nameOf(skyhook);
    if (!wanted(skyhook) || seen.get(name) === skyhook.metadata.resourceVersion) return;
    seen.set(name, skyhook.metadata.resourceVersion ?? '');
    console.log(formatOne(summarizeSkyhook(skyhook), output));
  };

  return new Promise<number>((resolve, reject) => {
    const stop = (): void => {
      stopped = true;
      current?.abort();
      resolve(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const start = async (): Promise<void> => {
      if (stopped) return;
      current = await watcher.watch(
        path,
        { resourceVersion, allowWatchBookmarks: true },
        (type: string, object: Skyhook & { code?: number }) => {
          if (type === 'ERROR') {
            resourceVersion = '';
            return;
          }
          resourceVersion = object.metadata?.resourceVersion ?? resourceVersion;
          if (type !== 'BOOKMARK') print(object);
        },
        () => void restart(),
      );
    };
    const restart = async (): Promise<void> => {
      if (stopped) return;
      try {
        if (!resourceVersion) {
          const again = await list(ctx);
          for (const skyhook of again.items) print(skyhook);
          resourceVersion = again.metadata?.resourceVersion ?? '';
        }
        await start();
      } catch (error) {
        reject(error);
      }
    };
    start().catch(reject);
  });
}
