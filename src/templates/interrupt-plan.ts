/**
 * What the reboot pod of a NodeOp runs on the host once the node's Job has succeeded: a plain
 * `rebootOnSuccess`, or `spec.interrupt` (reboot, service restart, …; a Skyhook interrupt stage sets
 * it), with the same host commands the agent uses for that interrupt type.
 */
import { commandsFor, type InterruptType as AgentInterruptType } from '../agent/interrupts.js';
import type { InterruptCommands } from '../agent/settings.js';
import type { NodeOpSpec } from '../api/nodeop.js';
import type { Interrupt, InterruptType } from '../api/skyhook.js';

export interface InterruptPlan {
  /** Run in order in the host's namespaces; empty for a no-op. */
  commands: string[][];
  /** True when the commands reboot the node: done is then judged by the node's bootID, not the pod. */
  rebootsNode: boolean;
}

/** The SCR's interrupt type → the agent's (as upstream maps them for the agent's interrupt argument). */
export const AGENT_INTERRUPT_TYPES: Readonly<Record<InterruptType, AgentInterruptType>> = {
  reboot: 'node_restart',
  service: 'service_restart',
  restartAllServices: 'restart_all_services',
  noop: 'no_op',
};

export function planForInterrupt(interrupt: Interrupt, commands: InterruptCommands): InterruptPlan {
  const type = AGENT_INTERRUPT_TYPES[interrupt.type];
  return {
    commands: commandsFor(type, { services: interrupt.services ?? [] }, commands),
    rebootsNode: type === 'node_restart',
  };
}

/**
 * `command` run in the host's namespaces from a privileged container with hostPID: nsenter into
 * PID 1's mount, UTS, IPC, network and PID namespaces. The one way every interrupt reaches the host:
 * the reboot pod's script and the maintenance daemon's reboot both go through here.
 */
export function inHostNamespaces(command: readonly string[]): string[] {
  return ['nsenter', '-t', '1', '-m', '-u', '-i', '-n', '-p', '--', ...command];
}

/** What a reboot runs on the host: a Skyhook `reboot` interrupt's commands (SKYHOOK_AGENT_REBOOT_COMMAND). */
export function rebootPlan(commands: InterruptCommands): InterruptPlan {
  return planForInterrupt({ type: 'reboot' }, commands);
}

/** The interrupt a NodeOp asks for after its Job, or undefined when it asks for none. */
export function interruptPlanFor(spec: NodeOpSpec, commands: InterruptCommands): InterruptPlan | undefined {
  if (spec.interrupt) return planForInterrupt(spec.interrupt, commands);
  if (spec.rebootOnSuccess) return { commands: [commands.reboot], rebootsNode: true };
  return undefined;
}
