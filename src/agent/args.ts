/** The agent's positional arguments, in the forms upstream accepts. Pure. */

export interface AgentInvocation {
  mode: string;
  rootMount: string;
  copyDir: string;
  interruptData?: string;
}

/** Legacy forms assume the host root is mounted here. */
const LEGACY_ROOT_MOUNT = '/root';

export function parseAgentArgs(args: readonly string[]): AgentInvocation {
  const [a = '', b = '', c = '', d = ''] = args;
  switch (args.length) {
    case 2:
      return { mode: a, rootMount: LEGACY_ROOT_MOUNT, copyDir: b };
    case 3:
      return a === 'interrupt'
        ? { mode: a, rootMount: LEGACY_ROOT_MOUNT, copyDir: b, interruptData: c }
        : { mode: a, rootMount: b, copyDir: c };
    case 4:
      return { mode: a, rootMount: b, copyDir: c, interruptData: d };
    default:
      throw new Error(`expected <mode> <rootMount> <copyDir> [interruptBase64], got ${args.length} argument(s)`);
  }
}
