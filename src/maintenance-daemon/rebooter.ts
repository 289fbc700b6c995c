/**
 * How the daemon reboots its node, behind one interface: the daemon decides when (a granted, drained
 * reboot slot), a Rebooter does it. `--reboot-method` picks one by name. The simulated one serves
 * simulated nodes (the sandbox and the e2e tests, where a node is a KWOK object and a host root is a
 * temp directory): it "reboots" the way a real boot looks from the host files, with a new boot ID and
 * an emptied /var/run (a tmpfs on real nodes, so the reboot sentinel is gone after a boot), and it
 * records each reboot in a log under the host root for the tests to count.
 */
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, readdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BOOT_ID_PATH, type HostFiles } from './host.js';
import { hostRebooter } from './host-rebooter.js';

export interface Rebooter {
  /** Starts the reboot; may resolve before the node goes down (the daemon then waits for the new boot ID). */
  reboot(): Promise<void>;
}

/** What a reboot method is built from. */
export interface RebooterContext {
  host: HostFiles;
}

/** Each reboot of the simulated rebooter appends a line (the old and new boot IDs) to this host file. */
export const SIMULATED_REBOOT_LOG = '/var/log/skyhook-maintenance-reboots.log';

export function simulatedRebooter({ host }: RebooterContext): Rebooter {
  return {
    reboot: async () => {
      const before = await host.bootId().catch(() => '');
      const after = randomUUID();
      const runDir = host.path('/var/run');
      await mkdir(runDir, { recursive: true });
      for (const entry of await readdir(runDir)) await rm(`${runDir}/${entry}`, { recursive: true, force: true });
      await mkdir(dirname(host.path(SIMULATED_REBOOT_LOG)), { recursive: true });
      await appendFile(host.path(SIMULATED_REBOOT_LOG), `${new Date().toISOString()} ${before} ${after}\n`);
      await host.writeAtomic(BOOT_ID_PATH, `${after}\n`);
    },
  };
}

/** The reboot methods by `--reboot-method` name. */
export const REBOOT_METHODS: Record<string, (ctx: RebooterContext) => Rebooter> = {
  simulated: simulatedRebooter,
  // Real nodes: the host command of a Skyhook reboot interrupt through nsenter into PID 1 (host-rebooter.ts).
  host: () => hostRebooter(),
};
