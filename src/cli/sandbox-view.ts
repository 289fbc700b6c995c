/**
 * The live progress `skyhook sandbox` prints: on a terminal a picture redrawn in place, otherwise one
 * plain line per change (for logs and tests). Its own file so sandbox.ts reads as start, run, stop.
 */
import type { V1Node } from '@kubernetes/client-node';
import { selectorMatches } from '../api/label-selector.js';
import type { Skyhook } from '../api/skyhook.js';
import { hasInterrupt } from '../controllers/skyhook/plan/package-rules.js';
import type { Informer } from '../kube/informer.js';
import { nodeLine, overallLine, type ProgressSkyhook } from '../sandbox/progress.js';
import { nameOf } from '../api/object-meta.js';

function progressOf(skyhook: Skyhook): ProgressSkyhook {
  const packages = Object.fromEntries(
    Object.entries(skyhook.spec?.packages ?? {}).map(([name, pkg]) => [
      name,
      { version: pkg.version, interrupts: hasInterrupt(pkg, undefined) },
    ]),
  );
  return {
    name: nameOf(skyhook),
    status: skyhook.status?.status,
    completeNodes: skyhook.status?.completeNodes,
    packages,
  };
}

export interface SandboxView {
  /** The Skyhooks applied from the file: drawn until each is complete. */
  skyhooks: Skyhook[];
  nodes: Informer<V1Node>;
  live: Informer<Skyhook>;
  tty: boolean;
  started: number;
  say: (message: string) => void;
  /** Called once, on the first render that finds every Skyhook complete. */
  onComplete: () => void;
}

/** Per Skyhook an overall line, then one line per node it selects. */
function progressLines({ skyhooks, nodes, live, started }: SandboxView): string[] {
  const lines: string[] = [];
  for (const wanted of skyhooks) {
    const skyhook = live.get(nameOf(wanted)) ?? wanted;
    const progress = progressOf(skyhook);
    const selected = nodes.list().filter((n) => selectorMatches(skyhook.spec?.nodeSelectors, n.metadata?.labels ?? {}));
    const nodeLines = selected.map((n) =>
      nodeLine({ name: nameOf(n), annotations: n.metadata?.annotations ?? {} }, progress),
    );
    lines.push(overallLine(progress, nodeLines, Date.now() - started), ...nodeLines.map((l) => `  ${l.text}`));
  }
  return lines;
}

/** A render function to call on a timer: it draws the current picture and reports completion once. */
export function sandboxRenderer(view: SandboxView): () => void {
  let drawn = 0;
  let lastPlain = new Map<string, string>();
  let announced = false;
  return () => {
    const lines = progressLines(view);
    if (view.tty) {
      process.stdout.write(`${drawn ? `\x1b[${drawn}A` : ''}${lines.map((l) => `\x1b[2K${l}`).join('\n')}\n`);
      drawn = lines.length;
    } else {
      // Plain output: a line is printed again only when it changed beyond its elapsed-seconds suffix.
      const next = new Map(
        lines.map((l) => [
          l
            .replace(/\s+[\d.]+ s$/, '')
            .trim()
            .split(/\s+/)[0] ?? l,
          l,
        ]),
      );
      for (const [key, line] of next)
        if (lastPlain.get(key)?.replace(/\s+[\d.]+ s$/, '') !== line.replace(/\s+[\d.]+ s$/, '')) view.say(line.trim());
      lastPlain = next;
    }
    const done = view.skyhooks.every((s) => view.live.get(nameOf(s))?.status?.status === 'complete');
    if (done && !announced) {
      announced = true;
      view.onComplete();
    }
  };
}
