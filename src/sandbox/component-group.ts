/**
 * The components of one control plane as a group: started in order and each recorded with its
 * flags (so a restart reuses them), health-checked with port-clash detection, stopped in reverse.
 * Free ports are picked before the components bind them, so another process may take one first:
 * that shows as "address already in use" in the log and becomes a PortClashError, which the start
 * retries afresh.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Binaries } from './binaries.js';
import { type TlsClient, waitHealthy } from './http-probe.js';
import { type Component, startComponent, stopComponent } from './processes.js';

export class PortClashError extends Error {}

export class ComponentGroup {
  /** In start order; a restarted component takes its predecessor's place. */
  readonly components: Component[] = [];
  private readonly argsOf = new Map<string, string[]>();
  /** The client certificate health probes use unless told otherwise; set once the PKI exists. */
  tls: TlsClient | undefined;

  private readonly runDir: string;
  private readonly binaries: Binaries;
  private readonly timeoutMs: number;
  /** Called when a component is ready, with its name. */
  private readonly onReady: (name: string) => void;

  constructor(runDir: string, binaries: Binaries, timeoutMs: number, onReady: (name: string) => void) {
    this.runDir = runDir;
    this.binaries = binaries;
    this.timeoutMs = timeoutMs;
    this.onReady = onReady;
  }

  start(name: keyof Binaries, args: string[]): Component {
    const component = startComponent(this.runDir, name, this.binaries[name], args);
    this.components.push(component);
    this.argsOf.set(name, args);
    return component;
  }

  /** Throws a PortClashError when the component's log says another process held its port. */
  clashCheck(component: Component): void {
    const log = existsSync(component.logFile) ? readFileSync(component.logFile, 'utf8') : '';
    if (/address already in use/.test(log)) throw new PortClashError(`${component.name}: address already in use`);
  }

  async healthy(component: Component, url: string, tls = this.tls): Promise<void> {
    try {
      await waitHealthy(component, url, this.timeoutMs, tls);
    } catch (error) {
      this.clashCheck(component);
      throw error;
    }
    this.onReady(component.name);
  }

  /**
   * A component that lost its port to another process exits after its health check passed
   * against the other one: make sure every component is still ours and running.
   */
  assertAllRunning(): void {
    for (const component of this.components) {
      if (component.child.exitCode !== null || component.child.signalCode !== null) {
        this.clashCheck(component);
        throw new Error(`${component.name} exited right after start; see ${component.logFile}`);
      }
    }
  }

  /** Stops one component and starts it with the same flags; resolves once `probeUrl` answers. */
  async restart(name: keyof Binaries, probeUrl: string): Promise<void> {
    const index = this.components.findIndex((c) => c.name === name);
    if (index < 0) throw new Error(`cannot restart ${name}: not running`);
    await stopComponent(this.components[index]!);
    const fresh = startComponent(this.runDir, name, this.binaries[name], this.argsOf.get(name)!);
    this.components[index] = fresh;
    await this.healthy(fresh, probeUrl);
  }

  async stopAll(): Promise<void> {
    for (const component of [...this.components].reverse()) await stopComponent(component);
  }
}
