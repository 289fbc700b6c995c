/**
 * Where the machine's CPU went during a benchmark: each process's CPU seconds (from /proc/<pid>/stat)
 * and the machine's busy time (from /proc/stat), read at the start and end of the measured window,
 * and the sentence saying what limited the run. The machine is shared (other runs, other helpers),
 * so what our processes used is set against what the whole machine was busy with. The parsing and
 * the arithmetic are pure and unit-tested; `readCpuSample` is the only part that reads /proc.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/** Linux reports CPU times in clock ticks, 100 per second on every common kernel config. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a /proc/<pid>/stat line, in ticks (the command name may hold spaces and parentheses). */
export function processTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After "pid (comm) ", utime and stime are the 12th and 13th fields (stat(5) numbers them 14 and 15).
  return Number(fields[11]) + Number(fields[12]);
}

export interface MachineTicks {
  busy: number;
  total: number;
}

/** The aggregate `cpu` line of /proc/stat: idle and iowait are idle, the rest busy (guest is inside user). */
export function machineTicks(procStat: string): MachineTicks {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('no aggregate cpu line in /proc/stat');
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map((n) => Number(n) || 0) as number[];
  const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  return { busy, total: busy + (idle ?? 0) + (iowait ?? 0) };
}

export interface CpuSample {
  at: number;
  machine: MachineTicks;
  /** Ticks per process name; a process that has exited is left out. */
  processes: Record<string, number>;
}

export interface ProcessCpu {
  cpuSeconds: number;
  /** Of the machine's busy time over the window. */
  shareOfBusyPct: number;
  /** Of one core over the window (100 = one core the whole time). */
  ofOneCorePct: number;
}

export interface CpuReport {
  windowS: number;
  cores: number;
  machineBusyPct: number;
  machineBusyCpuSeconds: number;
  processes: Record<string, ProcessCpu>;
  /** Busy time of processes outside the benchmark (other runs sharing the machine). */
  otherProcesses: { cpuSeconds: number; shareOfBusyPct: number };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** The CPU use between two samples. */
export function cpuReport(before: CpuSample, after: CpuSample, cores: number): CpuReport {
  const busyTicks = after.machine.busy - before.machine.busy;
  const totalTicks = after.machine.total - before.machine.total;
  const windowS = (after.at - before.at) / 1000;
  const processes: Record<string, ProcessCpu> = {};
  let ours = 0;
  for (const [name, ticks] of Object.entries(after.processes)) {
    const used = ticks - (before.processes[name] ?? 0);
    ours += used;
    processes[name] = {
      cpuSeconds: round1(used / CLOCK_TICKS_PER_SECOND),
      shareOfBusyPct: busyTicks > 0 ? Math.round((100 * used) / busyTicks) : 0,
      ofOneCorePct: windowS > 0 ? Math.round((100 * used) / CLOCK_TICKS_PER_SECOND / windowS) : 0,
    };
  }
  const other = Math.max(0, busyTicks - ours);
  return {
    windowS: round1(windowS),
    cores,
    machineBusyPct: totalTicks > 0 ? Math.round((100 * busyTicks) / totalTicks) : 0,
    machineBusyCpuSeconds: round1(busyTicks / CLOCK_TICKS_PER_SECOND),
    processes,
    otherProcesses: {
      cpuSeconds: round1(other / CLOCK_TICKS_PER_SECOND),
      shareOfBusyPct: busyTicks > 0 ? Math.round((100 * other) / busyTicks) : 0,
    },
  };
}

/** At or above this the machine, not our code's waiting, is what the run waited on. */
const SATURATED_PCT = 90;
/** A Node.js process's JavaScript runs on one thread: near one full core it is CPU-bound. */
const ONE_THREAD_BOUND_PCT = 85;

/** One sentence saying what limited the run, from the CPU report and the load average. */
export function limitedBy(report: CpuReport, load1: number, operatorName = 'operator'): string {
  const ranked = Object.entries(report.processes)
    .map(([name, p]) => [name, p.shareOfBusyPct] as const)
    .concat([['other processes', report.otherProcesses.shareOfBusyPct]])
    .sort((a, b) => b[1] - a[1])
    .filter(([, share]) => share > 0)
    .slice(0, 3)
    .map(([name, share]) => `${name} ${share} %`)
    .join(', ');
  const machine = `machine ${report.machineBusyPct} % busy (load ${load1.toFixed(1)} on ${report.cores} cores)`;
  if (report.machineBusyPct >= SATURATED_PCT) return `CPU: ${machine}; of it ${ranked}`;
  const operator = report.processes[operatorName];
  if (operator && operator.ofOneCorePct >= ONE_THREAD_BOUND_PCT)
    return `the operator's one JavaScript thread: ${operator.ofOneCorePct} % of a core (${machine}; of it ${ranked})`;
  return `not CPU: ${machine}, the operator ${operator?.ofOneCorePct ?? 0} % of a core; waits (API round trips, pacing, the simulated stages) set the pace (of the busy time: ${ranked})`;
}

/** Reads /proc now; a process that has exited is left out of `processes`. */
export function readCpuSample(processes: { name: string; pid: number }[]): CpuSample {
  const ticks: Record<string, number> = {};
  for (const { name, pid } of processes) {
    try {
      ticks[name] = (ticks[name] ?? 0) + processTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      // Exited: its time is lost with it (its parent reaps it), which the report then shows as other.
    }
  }
  return { at: Date.now(), machine: machineTicks(readFileSync('/proc/stat', 'utf8')), processes: ticks };
}

export function cores(): number {
  return availableParallelism();
}

export function load1(): number {
  return loadavg()[0] ?? 0;
}
