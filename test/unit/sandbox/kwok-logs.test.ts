import { describe, it, expect } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { kwokConfigYaml, SIMULATED_LOG_LINE, simulatedLogFile } from '../../../src/sandbox/kwok-stages.js';

describe('simulated container logs', () => {
  it('add one ClusterLogs rule for every pod and container when a log file is given', () => {
    const docs = parseAllDocuments(kwokConfigYaml({ podDurationMs: 1, logsFile: '/run/sim.log' })).map(
      (d) => d.toJS() as { kind: string; spec: unknown },
    );
    expect(docs.filter((d) => d.kind === 'ClusterLogs').map((d) => d.spec)).toEqual([
      { logs: [{ logsFile: '/run/sim.log' }] },
    ]);
    expect(
      parseAllDocuments(kwokConfigYaml({ podDurationMs: 1 })).some(
        (d) => (d.toJS() as { kind: string }).kind === 'ClusterLogs',
      ),
    ).toBe(false);
  });

  it('write the log in the CRI format kwok reads', () => {
    expect(simulatedLogFile()).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z stdout F ${SIMULATED_LOG_LINE}\\n$`),
    );
  });
});
