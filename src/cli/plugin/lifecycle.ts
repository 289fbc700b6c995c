/**
 * `pause`, `resume`, `disable`, `enable <skyhook>`: upstream's lifecycle commands. Each sets or
 * removes one SCR annotation (`skyhook.nvidia.com/pause` or `/disable`, value "true") and leaves the
 * other alone. Pausing and disabling stop a rollout, so they ask for confirmation.
 */
import { SKYHOOK_ANNOTATIONS } from '../../api/names.js';
import type { Skyhook } from '../../api/skyhook.js';
import type { ChangeSet } from './changes.js';
import { nameOf } from '../../api/object-meta.js';

export const LIFECYCLE_COMMANDS = {
  pause: { annotation: SKYHOOK_ANNOTATIONS.pause, set: true, state: 'paused' },
  resume: { annotation: SKYHOOK_ANNOTATIONS.pause, set: false, state: 'not paused' },
  disable: { annotation: SKYHOOK_ANNOTATIONS.disable, set: true, state: 'disabled' },
  enable: { annotation: SKYHOOK_ANNOTATIONS.disable, set: false, state: 'not disabled' },
} as const;

export type LifecycleCommand = keyof typeof LIFECYCLE_COMMANDS;

export const isLifecycleCommand = (name: string): name is LifecycleCommand => Object.hasOwn(LIFECYCLE_COMMANDS, name);

export function lifecycleChanges(command: LifecycleCommand, skyhook: Skyhook): ChangeSet {
  const { annotation, set, state } = LIFECYCLE_COMMANDS[command];
  const name = nameOf(skyhook);
  const current = skyhook.metadata.annotations?.[annotation] === 'true';
  const action = `${command} Skyhook ${name}`;
  if (current === set) return { action, destructive: set, changes: [], notes: [`Skyhook ${name} is already ${state}`] };
  return {
    action,
    destructive: set,
    changes: [
      {
        target: { kind: 'Skyhook', name },
        patch: { metadata: { annotations: { [annotation]: set ? 'true' : null } } },
        description: set ? `set annotation ${annotation}="true"` : `remove annotation ${annotation}`,
      },
    ],
  };
}
