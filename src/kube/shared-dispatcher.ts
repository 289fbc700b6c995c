/**
 * The operator's one connection to the API server: a KubeConfig whose typed API calls and watches
 * share one undici dispatcher per cluster and user, with HTTP/2 flow-control windows as client-go
 * sets them.
 *
 * One dispatcher: client-node 2.0.1 builds a new undici Agent for every typed API call
 * (applySecurityAuthentication → its private createDispatcher, uncached), so every call opened its
 * own TLS connection with its own TLS context, kept alive for seconds after the answer. Under load
 * that was hundreds of live TLS sockets and most of the operator's RSS (outside the JS heap: a
 * 200-node rollout had a 77 MB live heap and 690 MB RSS). That factory is replaced on the instance
 * (its TypeScript type is private, so it cannot be overridden as a method): it hands every call
 * the one Agent of the cluster and user. It used to be left to build its Agent and the Agent closed
 * at once; building and closing one per call (the close makes an Error with its stack) was 2 % of
 * the operator's CPU in `rollout-1000`. The TLS options (CA, client certificate) are those of the
 * first call: a rotated client certificate file is picked up by a restart (bearer tokens are
 * headers, read per call). shared-dispatcher.test.ts fails if a client-node upgrade renames the
 * factory.
 *
 * The windows: the API server speaks HTTP/2, so every watch of every informer and every request
 * share that one connection, as in client-go. undici's default windows are 256 KiB per stream and
 * 512 KiB for the whole connection; client-go's (golang.org/x/net/http2) are 4 MiB and 1 GiB. Once
 * the operator, busy planning, leaves 512 KiB of events unread (twenty 25 KiB node updates), the
 * API server may send nothing more on any stream: the pod event that ends a stage waits behind node
 * events, and so does every answer to a write. In `rollout-1000x5` (1000 nodes, 5 SCRs) the audit
 * log showed the NodeOp controller reacting to a stage pod's end 24 s (p50) after the pod ended;
 * stages held their budget slots that long, and each late NodeOp got a second status write. With
 * client-go's stream window and a 32 MiB connection window (which also bounds what the operator may
 * hold unread: well inside its memory limit) the same 240 s of that rollout finished 15 % more
 * stages for 13 % less CPU per stage (docs/design/history.md).
 */
import type { AgentOptions } from 'node:https';
import { type Cluster, KubeConfig, type RequestContext } from '@kubernetes/client-node';
import { Agent, type Client } from 'undici';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/** client-go's per-stream window (golang.org/x/net/http2 transportDefaultStreamFlow). */
export const HTTP2_STREAM_WINDOW_BYTES = 4 * 2 ** 20;
/** The whole connection's window: client-go's is 1 GiB; this bounds the unread data the operator may hold. */
export const HTTP2_CONNECTION_WINDOW_BYTES = 32 * 2 ** 20;

/** client-node's per-call dispatcher factory (`KubeConfig.createDispatcher`, private in its types). */
type DispatcherFactory = (cluster: Cluster | null, agentOptions: AgentOptions) => Dispatcher | undefined;

export class SharedDispatcherKubeConfig extends KubeConfig {
  private readonly dispatchers = new Map<string, Dispatcher>();

  constructor() {
    super();
    const own = (this as unknown as { createDispatcher: DispatcherFactory }).createDispatcher.bind(this);
    const shared: DispatcherFactory = (cluster, agentOptions) => this.sharedDispatcher(cluster, agentOptions, own);
    Object.defineProperty(this, 'createDispatcher', { value: shared });
  }

  /**
   * The one Agent of this cluster and user, with client-go's HTTP/2 windows, made on the first call;
   * client-node's own dispatcher for a proxy or SOCKS connection, and none for plain http (the
   * global dispatcher, already shared).
   */
  private sharedDispatcher(
    cluster: Cluster | null,
    agentOptions: AgentOptions,
    own: DispatcherFactory,
  ): Dispatcher | undefined {
    const options = this.createDispatcherOptions(cluster, agentOptions);
    if (options.type !== 'agent') return own(cluster, agentOptions);
    const key = JSON.stringify([cluster?.name ?? '', this.getCurrentUser()?.name ?? '']);
    let dispatcher = this.dispatchers.get(key);
    if (dispatcher === undefined) {
      dispatcher = windowedAgent(options.connect);
      this.dispatchers.set(key, dispatcher);
    }
    return dispatcher;
  }
}

/** An Agent with client-go's HTTP/2 windows. */
function windowedAgent(connect: Agent.Options['connect']): Dispatcher {
  // undici 8 reads the stream window from `h2Options.initialWindowSize`, although its types and
  // docs name `h2Options.settings.initialWindowSize` (validated, then not used): both are given,
  // and shared-dispatcher-windows.test.ts checks what the server is told.
  const h2Options: NonNullable<Client.Options['h2Options']> & { initialWindowSize: number } = {
    settings: { initialWindowSize: HTTP2_STREAM_WINDOW_BYTES },
    initialWindowSize: HTTP2_STREAM_WINDOW_BYTES,
    connectionWindowSize: HTTP2_CONNECTION_WINDOW_BYTES,
  };
  return new Agent({ connect, h2Options });
}
