/**
 * `package logs … -f`: follows a package's stage containers as they run, as `kubectl logs -f` does
 * for one container: each container of each matching pod in the order they run (init containers
 * first), waiting until it has started, streaming its log until it ends, then the next. A container
 * that has already finished prints its whole log without following; Ctrl-C stops (exit 0).
 */
import { Log, type V1Pod } from '@kubernetes/client-node';
import { PassThrough } from 'node:stream';
import { finished } from 'node:stream/promises';
import { errorMessage, isNotFound } from '../../kube/client.js';
import type { PluginContext } from './context.js';
import { logHeader, podIdentity } from './package-logs.js';
import { nameOf } from '../../api/object-meta.js';

const POLL_MS = 1000;

function stateOf(pod: V1Pod, container: string) {
  return [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find(
    (status) => status.name === container,
  )?.state;
}

/** The pod once the container runs or ran; undefined when the pod is gone or finished without it. */
async function untilStarted(ctx: PluginContext, pod: V1Pod, container: string): Promise<V1Pod | undefined> {
  for (;;) {
    let current: V1Pod;
    try {
      current = await ctx.clients.core.readNamespacedPod({
        name: nameOf(pod),
        namespace: ctx.options.namespace,
      });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const state = stateOf(current, container);
    if (state?.running || state?.terminated) return current;
    if (current.status?.phase === 'Succeeded' || current.status?.phase === 'Failed') return undefined;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function finishedLog(ctx: PluginContext, pod: V1Pod, container: string): Promise<string> {
  const tail = ctx.options.tail;
  try {
    return await ctx.clients.core.readNamespacedPodLog({
      name: nameOf(pod),
      namespace: ctx.options.namespace,
      container,
      ...(tail !== undefined ? { tailLines: tail } : {}),
    });
  } catch (error) {
    return `(no log: ${errorMessage(error)})\n`;
  }
}

export async function followLogs(ctx: PluginContext, pods: V1Pod[]): Promise<number> {
  const log = new Log(ctx.clients.kc);
  let stopped = false;
  let sink: PassThrough | undefined;
  const stop = (): void => {
    stopped = true;
    sink?.end();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const tail = ctx.options.tail;
  let first = true;
  for (const pod of pods) {
    for (const { name } of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
      if (stopped) return 0;
      const started = await untilStarted(ctx, pod, name);
      process.stdout.write(`${first ? '' : '\n'}${logHeader({ ...podIdentity(pod), container: name })}\n`);
      first = false;
      if (!started) {
        process.stdout.write('(no log: the container never started)\n');
        continue;
      }
      if (stateOf(started, name)?.terminated) {
        // Finished: its whole log, without following (a kubelet would end the stream at once anyway).
        process.stdout.write(await finishedLog(ctx, started, name));
        continue;
      }
      sink = new PassThrough();
      sink.on('data', (chunk: Buffer) => process.stdout.write(chunk));
      try {
        const request = await log.log(ctx.options.namespace, nameOf(pod), name, sink, {
          follow: true,
          ...(tail !== undefined ? { tailLines: tail } : {}),
        });
        if (stopped) request.abort();
        await finished(sink);
      } catch (error) {
        process.stdout.write(`(no log: ${errorMessage(error)})\n`);
      }
    }
  }
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  return 0;
}
