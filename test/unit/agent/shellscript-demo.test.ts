/**
 * Acceptance: the configMap of our demo sample, run by our shellscript package through the real agent
 * CLI with a real chroot into a minimal root filesystem. Checks what the scripts wrote inside that
 * root, and the flags, history and logs at upstream's paths and in upstream's formats.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  agentEnv,
  buildAgentCli,
  LOG_DIR,
  makeRootfs,
  placePackage,
  REPO,
  runAgentProcess,
  SHELLSCRIPT_PACKAGE,
  STATE_DIR,
} from '../../agent/harness.js';

/** Our sample SCR (config/samples/demo.yaml): its one shellscript package's configMap. */
function demoConfigMap(): Record<string, string> {
  const file = join(REPO, 'config/samples/demo.yaml');
  const scr = parse(readFileSync(file, 'utf8')) as {
    spec: { packages: Record<string, { configMap: Record<string, string> }> };
  };
  const [pkg] = Object.values(scr.spec.packages);
  if (!pkg) throw new Error(`${file} has no package`);
  return pkg.configMap;
}

/**
 * What the demo's apply.sh and config.sh write: each `echo "<text>" >[>] <file>` line, in order,
 * as a pattern (a `$(...)` in the text matches anything). Keeps the test true to the sample as it changes.
 */
function expectedWrites(configMap: Record<string, string>): { file: string; lines: RegExp[] } {
  const writes = ['apply.sh', 'config.sh'].flatMap((key) =>
    [...(configMap[key] ?? '').matchAll(/^\s*echo "([^"]*)" >>? (\S+)\s*$/gm)].map((m) => ({
      text: m[1] ?? '',
      file: m[2] ?? '',
    })),
  );
  const [first] = writes;
  if (!first || writes.some((w) => w.file !== first.file)) throw new Error('the demo should echo lines into one file');
  const toPattern = (text: string): RegExp =>
    new RegExp(
      `^${text
        .split(/\$\([^)]*\)/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.+')}$`,
    );
  return { file: first.file, lines: writes.map((w) => toPattern(w.text)) };
}

const COPY_DIR = '/var/lib/skyhook/demo/tuning-1.1.0-0f0e-1';
let cli: ReturnType<typeof buildAgentCli>;
let root: string;
const runs: Record<string, Awaited<ReturnType<typeof runAgentProcess>>> = {};

beforeAll(async () => {
  cli = buildAgentCli();
  root = makeRootfs();
  placePackage(root, COPY_DIR, SHELLSCRIPT_PACKAGE, demoConfigMap());
  for (const mode of ['apply', 'apply-check', 'config', 'config-check']) {
    // No pause between runs (agentEnv sets SKYHOOK_AGENT_STEP_DELAY_MS=0): the four runs of the one
    // step fall within a few seconds, and each still gets its own per-second log name.
    runs[mode] = await runAgentProcess(cli.launcher, [mode, root, COPY_DIR], agentEnv());
  }
}, 120_000);

afterAll(() => {
  cli.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('the demo through packages/shellscript', () => {
  it('succeeds in every stage', () => {
    for (const [mode, run] of Object.entries(runs)) {
      expect({ mode, code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ mode, code: 0, stderr: '' });
      expect(run.stdout).toContain(`SUCEEDED: shellscript_run.sh ${mode.replace('-', '_')}`);
    }
  });

  it('leaves exactly the lines the scripts write in the chroot, not on the real host', () => {
    const { file, lines } = expectedWrites(demoConfigMap());
    const written = readFileSync(join(root, file), 'utf8');
    expect(written.endsWith('\n')).toBe(true);
    const actual = written.slice(0, -1).split('\n');
    expect(actual).toHaveLength(lines.length);
    for (const [i, pattern] of lines.entries()) expect(actual[i]).toMatch(pattern);
  });

  it('writes START, one flag per action step with upstream names, and the check summaries', () => {
    const flags = join(root, STATE_DIR, 'flags');
    expect(readFileSync(join(flags, 'START'), 'utf8')).toBe('');
    // Flags and logs use config.json's name and version (shellscript/1.1.1), not the SCR's (tuning/1.1.0).
    expect(readdirSync(join(flags, 'shellscript/1.1.1')).sort()).toEqual([
      'shellscript_run.sh_WydhcHBseSddX1swXQ==', // ['apply']_[0]
      'shellscript_run.sh_Wydjb25maWcnXV9bMF0=', // ['config']_[0]
    ]);
    expect(readFileSync(join(flags, 'shellscript/1.1.1/shellscript_run.sh_WydhcHBseSddX1swXQ=='), 'utf8')).toMatch(
      /^last_run: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\nstep_always_runs: True$/,
    );
    expect(readFileSync(join(flags, 'check_results'), 'utf8')).toBe('shellscript_run.sh False');
    expect(existsSync(join(flags, 'apply-check_ALL_CHECKED'))).toBe(true);
    expect(existsSync(join(flags, 'config-check_ALL_CHECKED'))).toBe(true);
  });

  it('records the installed version after apply-check only', () => {
    const history = readFileSync(join(root, STATE_DIR, 'history/shellscript.json'), 'utf8');
    expect(history).toMatch(
      /^\{"current-version": "1\.1\.1", "history": \[\{"version": "1\.1\.1", "time": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00"\}\]\}$/,
    );
  });

  it('writes one stamped log pair per step run under <log dir>/<pkg>/<ver>/', () => {
    const logDir = join(root, LOG_DIR, 'shellscript/1.1.1');
    const names = readdirSync(logDir).sort();
    const logs = names.filter((n) => n.endsWith('.log'));
    expect(logs).toHaveLength(4);
    for (const log of logs) {
      expect(log).toMatch(/^shellscript_run\.sh-\d{4}-\d\d-\d\d-\d{6}\.log$/);
      expect(names).toContain(`${log}.err`);
    }
  });

  it('prints the configuration banner with the operator paths', () => {
    expect(runs['apply']?.stdout).toContain('-CLI CONFIGURATION--\nmode: apply\n');
    expect(runs['apply']?.stdout).toContain(
      'flag_dir: /var/lib/skyhook/demo/flags/tuning/1.1.0\nlog_dir: /var/log/skyhook/demo/tuning/1.1.0\n',
    );
  });
});
