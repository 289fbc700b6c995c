/** The CPU figures of the benchmarks: /proc parsing, shares of the machine's busy time, what limited a run. */
import { describe, expect, it } from '@jest/globals';
import { type CpuSample, cpuReport, limitedBy, machineTicks, processTicks } from '../../../bench/cpu-usage.js';

describe('processTicks', () => {
  it('adds utime and stime, whatever the command name holds', () => {
    const stat = '4242 (kube (api) server) S 1 4242 4242 0 -1 4194560 100 0 0 0 1500 250 0 0 20 0 12 0 100 0 0';
    expect(processTicks(stat)).toBe(1750);
  });
});

describe('machineTicks', () => {
  it('counts idle and iowait as idle and the rest (not guest, inside user) as busy', () => {
    const procStat = 'cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 50 2 25 400 10 1 1 5 3 0\nintr 1\n';
    expect(machineTicks(procStat)).toEqual({ busy: 170, total: 990 });
  });
});

const sample = (at: number, busy: number, total: number, processes: Record<string, number>): CpuSample => ({
  at,
  machine: { busy, total },
  processes,
});

describe('cpuReport', () => {
  const before = sample(0, 1000, 2000, { 'kube-apiserver': 100, operator: 50 });
  const after = sample(100_000, 1000 + 18_000, 2000 + 20_000, { 'kube-apiserver': 8100, operator: 4050, etcd: 900 });
  const report = cpuReport(before, after, 2);

  it('gives each process its seconds, its share of the busy time and of one core', () => {
    expect(report.windowS).toBe(100);
    expect(report.machineBusyPct).toBe(90);
    expect(report.machineBusyCpuSeconds).toBe(180);
    expect(report.processes['kube-apiserver']).toEqual({ cpuSeconds: 80, shareOfBusyPct: 44, ofOneCorePct: 80 });
    expect(report.processes['operator']).toEqual({ cpuSeconds: 40, shareOfBusyPct: 22, ofOneCorePct: 40 });
    // A process first seen at the end counts from zero.
    expect(report.processes['etcd']?.cpuSeconds).toBe(9);
  });

  it('puts the busy time of processes outside the benchmark apart', () => {
    expect(report.otherProcesses).toEqual({ cpuSeconds: 51, shareOfBusyPct: 28 });
  });
});

describe('limitedBy', () => {
  it('names the machine and the largest users when it is saturated', () => {
    const report = cpuReport(
      sample(0, 0, 0, {}),
      sample(10_000, 1940, 2000, { 'kube-apiserver': 800, operator: 300, kwok: 200 }),
      2,
    );
    expect(limitedBy(report, 5.23)).toBe(
      'CPU: machine 97 % busy (load 5.2 on 2 cores); of it kube-apiserver 41 %, other processes 33 %, operator 15 %',
    );
  });

  it('names the operator’s one thread when it uses a whole core on a machine with room', () => {
    const report = cpuReport(sample(0, 0, 0, {}), sample(10_000, 1200, 2000, { operator: 950, etcd: 100 }), 2);
    expect(limitedBy(report, 1.5)).toMatch(/^the operator's one JavaScript thread: 95 % of a core \(machine 60 % busy/);
  });

  it('says it was not CPU when neither is', () => {
    const report = cpuReport(sample(0, 0, 0, {}), sample(10_000, 600, 2000, { operator: 200 }), 2);
    expect(limitedBy(report, 0.8)).toMatch(
      /^not CPU: machine 30 % busy \(load 0\.8 on 2 cores\), the operator 20 % of a core/,
    );
  });
});
