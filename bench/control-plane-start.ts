/** How long the sandbox takes from nothing to a control plane with 3 Ready nodes (binaries cached). */
import { startControlPlane } from '../src/sandbox/control-plane.js';

export async function controlPlaneStart(): Promise<Record<string, unknown>> {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const cp = await startControlPlane({ nodes: 3 });
    runs.push(cp.startupMs);
    await cp.stop();
  }
  const sorted = [...runs].sort((a, b) => a - b);
  return { nodes: 3, runsMs: runs, medianMs: sorted[1], targetMs: 30_000 };
}
