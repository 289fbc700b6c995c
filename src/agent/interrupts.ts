/**
 * Interrupt data (base64 of `{"type": ..., ...}`) and the commands each type runs. Pure: the
 * commands come from the settings, so tests point them at harmless stubs.
 */
import type { InterruptCommands } from './settings.js';

export const INTERRUPT_TYPES = [
  'node_restart',
  'service_restart',
  'restart_all_services',
  'no_op',
  'script_interrupt',
] as const;
export type InterruptType = (typeof INTERRUPT_TYPES)[number];

export interface InterruptPlan {
  type: InterruptType;
  /** Run in order; command i is recorded by the flag `<type>_<i>.complete`. */
  commands: string[][];
}

export function decodeInterrupt(base64: string | undefined, commands: InterruptCommands): InterruptPlan {
  const usage = "Serialized interrupt must be base64 encoded {'type': str, **kwargs: dict[str, any]}";
  if (base64 === undefined || base64 === '') throw new Error(`interrupt mode needs interrupt data. ${usage}`);
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(base64, 'base64').toString('utf8'));
  } catch {
    throw new Error(usage);
  }
  if (typeof data !== 'object' || data === null || typeof (data as { type?: unknown }).type !== 'string')
    throw new Error(usage);
  const { type, ...kwargs } = data as { type: string } & Record<string, unknown>;
  if (!(INTERRUPT_TYPES as readonly string[]).includes(type)) {
    throw new Error(`Unknown interrupt ${type} must be one of: ${INTERRUPT_TYPES.join(', ')}`);
  }
  return { type: type as InterruptType, commands: commandsFor(type as InterruptType, kwargs, commands) };
}

export function commandsFor(
  type: InterruptType,
  kwargs: Record<string, unknown>,
  commands: InterruptCommands,
): string[][] {
  switch (type) {
    case 'node_restart':
      return [commands.reboot];
    case 'service_restart': {
      const services = kwargs['services'];
      if (!Array.isArray(services) || !services.every((s): s is string => typeof s === 'string')) {
        throw new Error('service_restart needs "services": a list of service names');
      }
      return [commands.daemonReload, ...services.map((service) => [...commands.restartService, service])];
    }
    case 'restart_all_services':
      return [commands.restartAllServices];
    case 'no_op':
    case 'script_interrupt':
      return [];
  }
}

/** The flag name of command `index`: `<type>_<index>`. A no-op records just `no_op`. */
export function interruptId(type: InterruptType, index: number): string {
  return `${type}_${index}`;
}

/** Exit status of a command killed by SIGTERM, in Python's convention. */
export const KILLED_BY_SIGTERM = -15;

/**
 * A reboot tears the agent down with SIGTERM before the command returns. That is the reboot
 * happening, so its flag is kept and a later run does not reboot again.
 */
export function keepsFlagAfterFailure(type: InterruptType, returnCode: number): boolean {
  return type === 'node_restart' && returnCode === KILLED_BY_SIGTERM;
}
