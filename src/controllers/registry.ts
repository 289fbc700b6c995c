/**
 * The controllers `skyhook operator` runs while it leads. Each controller module appends its factory
 * to `controllers`; the operator starts them in order after winning the election and stops them on
 * shutdown. An empty list is valid (the operator then only elects, probes and serves metrics).
 */
import type { OperatorRuntime } from '../kube/runtime.js';
import { nodeOpControllerFactory } from './nodeop/controller.js';
import { skyhookControllerFactory } from './skyhook/skyhook-controller.js';

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

export const controllers: ControllerFactory[] = [nodeOpControllerFactory(), skyhookControllerFactory()];
