/**
 * The agent CLI as a process, chrooted into a minimal root under a temp dir, with small probe
 * packages: arguments, environment, working directory, exit codes, flags and idempotence,
 * check summaries, history, logs and their retention, expected config files, root_dir, SIGTERM.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  agentEnv,
  buildAgentCli,
  LOG_DIR,
  makeRootfs,
  packageConfig,
  runAgentProcess,
  STATE_DIR,
  writePackage,
  type StepSpec,
} from '../../agent/harness.js';

const COPY_DIR = '/var/lib/skyhook/demo/probe-2.0.0-0f0e-1';
let cli: ReturnType<typeof buildAgentCli>;
let root: string;

beforeAll(() => {
  cli = buildAgentCli();
});
afterAll(() => cli.cleanup());
beforeEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = makeRootfs();
});

/** Appends `<name> <args…>` to /probe/calls and dumps what the step saw into /probe/<name>.env. */
const PROBE = `#!/bin/sh
mkdir -p /probe
echo "$(basename "$0") $*" >> /probe/calls
{ echo "pwd=$(pwd)"; echo "SKYHOOK_DIR=$SKYHOOK_DIR"; echo "STEP_ROOT=$STEP_ROOT"; echo "STEP_VAR=\${STEP_VAR:-}";
  echo "CURRENT_VERSION=\${CURRENT_VERSION:-}"; echo "PREVIOUS_VERSION=\${PREVIOUS_VERSION:-}"; echo "SCR_VAR=\${SCR_VAR:-}"; echo "PATH=$PATH"; } > "/probe/$(basename "$0").env"
echo "out one"; echo "out two"; echo "err line" >&2
exit "\${PROBE_EXIT:-0}"
`;
// biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion for the probe script, not a template
const basename = 'basename() { echo "${1##*/}"; }\n';
const probe = PROBE.replace('#!/bin/sh\n', `#!/bin/sh\n${basename}`);

function install(
  modes: Record<string, StepSpec[]>,
  scripts: Record<string, string | { body: string; mode: number }>,
  extra: Record<string, unknown> = {},
): string {
  return writePackage(join(root, COPY_DIR), packageConfig(modes, extra), scripts);
}
const run = (args: string[], env: Record<string, string> = {}, onSpawn?: (pid: number) => void) =>
  runAgentProcess(cli.launcher, args, agentEnv(env), onSpawn);
const calls = (): string[] =>
  existsSync(join(root, 'probe/calls'))
    ? readFileSync(join(root, 'probe/calls'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.trimEnd())
    : [];
const seen = (script: string): string => readFileSync(join(root, 'probe', `${script}.env`), 'utf8');
const flags = (): string => join(root, STATE_DIR, 'flags');

describe('a step on the host', () => {
  it('runs chrooted by absolute path in the copy dir, with env: arguments, the step env and SKYHOOK_DIR/STEP_ROOT', async () => {
    install(
      {
        apply: [
          {
            path: 'a.sh',
            arguments: ['plain', 'env:PROBE_VALUE'],
            env: { STEP_VAR: 'from-step', SCR_VAR: 'step-wins' },
          },
        ],
        'apply-check': [{ path: 'a_check.sh' }],
      },
      { 'a.sh': { body: probe, mode: 0o644 }, 'a_check.sh': probe },
    );
    const result = await run(['apply', root, COPY_DIR], { PROBE_VALUE: 'v1', SCR_VAR: 'from-agent' });
    expect(result.code).toBe(0);
    expect(calls()).toEqual(['a.sh plain v1']);
    const env = seen('a.sh');
    expect(env).toContain(`pwd=${COPY_DIR}\n`);
    expect(env).toContain(`SKYHOOK_DIR=${COPY_DIR}\nSTEP_ROOT=${COPY_DIR}/skyhook_dir\nSTEP_VAR=from-step\n`);
    expect(env).toContain('SCR_VAR=step-wins\n');
    expect(env).toMatch(/PATH=.*\/usr\/sbin/);
    // The agent made the entry script executable (it was 0644).
    expect(statSync(join(root, COPY_DIR, 'skyhook_dir/a.sh')).mode & 0o111).toBe(0o111);
    // The flag name comes from the arguments as written, before substitution.
    const marker = Buffer.from("['plain', 'env:PROBE_VALUE']_[0]").toString('base64');
    expect(existsSync(join(flags(), 'probe/2.0.0', `a.sh_${marker}`))).toBe(true);
    expect(result.stdout).toContain("apply a.sh ['plain', 'env:PROBE_VALUE'] [0] Idempotence.Disabled True\n");
    expect(result.stdout).toContain('SUCEEDED: a.sh plain v1\n');
  });

  it('fails when an env: argument names a missing variable, without running the step', async () => {
    install(
      { apply: [{ path: 'a.sh', arguments: ['env:NOPE'] }], 'apply-check': [{ path: 'a_check.sh' }] },
      { 'a.sh': probe, 'a_check.sh': probe },
    );
    const result = await run(['apply', root, COPY_DIR]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('a.sh: Expected environment variable did not exist: NOPE');
    expect(calls()).toEqual([]);
  });

  it('succeeds exactly when the exit code is one of returncodes, and an action mode stops at the first failure', async () => {
    install(
      {
        apply: [{ path: 'three.sh', returncodes: [0, 3] }, { path: 'fails.sh' }, { path: 'never.sh' }],
        'apply-check': [{ path: 'a_check.sh' }],
      },
      {
        'three.sh': '#!/bin/sh\nexit 3\n',
        'fails.sh': '#!/bin/sh\nexit 2\n',
        'never.sh': probe,
        'a_check.sh': probe,
      },
    );
    const result = await run(['apply', root, COPY_DIR]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('SUCEEDED: three.sh \n');
    expect(result.stdout).toContain('FAILED: fails.sh  2\n');
    expect(calls()).toEqual([]);
    expect(readdirSync(join(flags(), 'probe/2.0.0'))).toEqual([
      `three.sh_${Buffer.from('[]_[0, 3]').toString('base64')}`,
    ]);
  });

  it('stamps output into <log dir>/<pkg>/<ver>//<step>-<ts>.log and .log.err, or writes none when logs are off', async () => {
    install(
      { apply: [{ path: 'a.sh' }], 'apply-check': [{ path: 'a_check.sh' }] },
      { 'a.sh': probe, 'a_check.sh': probe },
    );
    expect((await run(['apply', root, COPY_DIR])).code).toBe(0);
    const logDir = join(root, LOG_DIR, 'probe/2.0.0');
    const [log, ...others] = readdirSync(logDir).filter((n) => n.endsWith('.log'));
    expect(others).toEqual([]);
    const stamp = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?`;
    expect(readFileSync(join(logDir, log ?? ''), 'utf8')).toMatch(
      new RegExp(`^\\[out\\]${stamp} out one\\n\\[out\\]${stamp} out two\\n\\[out\\]${stamp} $`),
    );
    expect(readFileSync(join(logDir, `${log}.err`), 'utf8')).toMatch(new RegExp(`^\\[err\\]${stamp} err line\\n`));

    rmSync(join(root, LOG_DIR), { recursive: true });
    expect((await run(['apply', root, COPY_DIR], { SKYHOOK_AGENT_WRITE_LOGS: 'false' })).code).toBe(0);
    expect(existsSync(join(root, LOG_DIR))).toBe(false);
  });

  it('keeps only the 5 newest logs of a step and leaves .err files alone', async () => {
    install(
      { apply: [{ path: 'a.sh' }], 'apply-check': [{ path: 'a_check.sh' }] },
      { 'a.sh': probe, 'a_check.sh': probe },
    );
    const logDir = join(root, LOG_DIR, 'probe/2.0.0');
    mkdirSync(logDir, { recursive: true });
    const old = [1, 2, 3, 4, 5, 6].map((day) => `a.sh-2020-01-0${day}-000000.log`);
    old.forEach((name, i) => {
      writeFileSync(join(logDir, name), 'old');
      writeFileSync(join(logDir, `${name}.err`), '');
      utimesSync(join(logDir, name), 1_600_000_000 + i, 1_600_000_000 + i);
    });
    expect((await run(['apply', root, COPY_DIR])).code).toBe(0);
    const logs = readdirSync(logDir)
      .filter((n) => n.endsWith('.log'))
      .sort();
    expect(logs).toHaveLength(5);
    expect(logs.slice(0, 4)).toEqual(old.slice(2));
    expect(readdirSync(logDir).filter((n) => n.endsWith('.err'))).toHaveLength(7);
  });
});

describe('flags and idempotence', () => {
  it('skips an apply step with idempotence false once it succeeded, unless OVERLAY_ALWAYS_RUN_STEP; config always runs', async () => {
    install(
      {
        apply: [{ path: 'once.sh', idempotence: false }],
        'apply-check': [{ path: 'a_check.sh' }],
        config: [{ path: 'cfg.sh', idempotence: false }],
        'config-check': [{ path: 'a_check.sh' }],
      },
      { 'once.sh': probe, 'cfg.sh': probe, 'a_check.sh': probe },
    );
    for (let i = 0; i < 2; i++) expect((await run(['apply', root, COPY_DIR])).code).toBe(0);
    expect(calls()).toEqual(['once.sh']);
    const flag = readFileSync(join(flags(), 'probe/2.0.0/once.sh_W11fWzBd'), 'utf8');
    expect(flag).toMatch(/^last_run: \S+\nstep_always_runs: False$/);
    expect((await run(['apply', root, COPY_DIR], { OVERLAY_ALWAYS_RUN_STEP: 'true' })).code).toBe(0);
    for (let i = 0; i < 2; i++) expect((await run(['config', root, COPY_DIR])).code).toBe(0);
    expect(calls()).toEqual(['once.sh', 'once.sh', 'cfg.sh', 'cfg.sh']);
  });

  it('runs every check step, writes check_results, and writes <mode>_ALL_CHECKED only when all pass', async () => {
    install(
      { apply: [{ path: 'a.sh' }], 'apply-check': [{ path: 'bad_check.sh' }, { path: 'a_check.sh' }] },
      { 'a.sh': probe, 'a_check.sh': probe, 'bad_check.sh': '#!/bin/sh\nexit 1\n' },
    );
    const result = await run(['apply-check', root, COPY_DIR]);
    expect(result.code).toBe(1);
    expect(calls()).toEqual(['a_check.sh']);
    expect(readFileSync(join(flags(), 'check_results'), 'utf8')).toBe('bad_check.sh True\na_check.sh False');
    expect(existsSync(join(flags(), 'apply-check_ALL_CHECKED'))).toBe(false);
    expect(existsSync(join(root, STATE_DIR, 'history/probe.json'))).toBe(false);
    expect(readdirSync(flags())).toEqual(expect.not.arrayContaining(['probe']));
  });
});

describe('versions', () => {
  it('gives upgrade steps the previous and current versions, and records upgrade-check in the history', async () => {
    install(
      { upgrade: [{ path: 'up.sh', upgrade_step: true }], 'upgrade-check': [{ path: 'up_check.sh' }] },
      { 'up.sh': probe, 'up_check.sh': probe },
    );
    mkdirSync(join(root, STATE_DIR, 'history'), { recursive: true });
    writeFileSync(
      join(root, STATE_DIR, 'history/probe.json'),
      '{"current-version": "1.0.0", "history": [{"version": "1.0.0", "time": "2020-01-01T00:00:00+00:00"}]}',
    );
    expect((await run(['upgrade', root, COPY_DIR])).code).toBe(0);
    expect(calls()).toEqual(['up.sh 1.0.0 2.0.0']);
    expect(seen('up.sh')).toContain('CURRENT_VERSION=2.0.0\nPREVIOUS_VERSION=1.0.0\n');
    expect((await run(['upgrade-check', root, COPY_DIR])).code).toBe(0);
    const history = JSON.parse(readFileSync(join(root, STATE_DIR, 'history/probe.json'), 'utf8')) as {
      'current-version': string;
      history: { version: string }[];
    };
    expect(history['current-version']).toBe('2.0.0');
    expect(history.history.map((h) => h.version)).toEqual(['2.0.0', '1.0.0']);
  });

  it('records "uninstalled" after uninstall-check and removes the step flags of every mode', async () => {
    install(
      {
        apply: [{ path: 'a.sh' }],
        'apply-check': [{ path: 'a_check.sh' }],
        uninstall: [{ path: 'rm.sh' }],
        'uninstall-check': [{ path: 'rm_check.sh' }],
      },
      { 'a.sh': probe, 'a_check.sh': probe, 'rm.sh': probe, 'rm_check.sh': probe },
    );
    for (const mode of ['apply', 'apply-check', 'uninstall', 'uninstall-check'])
      expect((await run([mode, root, COPY_DIR])).code).toBe(0);
    expect(readdirSync(join(flags(), 'probe/2.0.0'))).toEqual([]);
    const history = JSON.parse(readFileSync(join(root, STATE_DIR, 'history/probe.json'), 'utf8')) as {
      'current-version': string;
      history: { version: string }[];
    };
    expect(history['current-version']).toBe('uninstalled');
    expect(history.history.map((h) => h.version)).toEqual(['uninstalled', '2.0.0']);
  });
});

describe('before the steps', () => {
  it('requires expected_config_files and copies root_dir outside uninstall modes only', async () => {
    const dir = install(
      {
        apply: [{ path: 'a.sh' }],
        'apply-check': [{ path: 'a_check.sh' }],
        uninstall: [{ path: 'a.sh' }],
        'uninstall-check': [{ path: 'a_check.sh' }],
      },
      { 'a.sh': probe, 'a_check.sh': probe },
      { expected_config_files: ['accelerator'] },
    );
    mkdirSync(join(dir, 'root_dir/etc/probe'), { recursive: true });
    writeFileSync(join(dir, 'root_dir/etc/probe/settings.conf'), 'x=1\n');

    expect((await run(['uninstall', root, COPY_DIR])).code).toBe(0);
    expect(existsSync(join(root, 'etc/probe/settings.conf'))).toBe(false);
    expect(calls()).toEqual(['a.sh']);

    const missing = await run(['apply', root, COPY_DIR]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Expected config file accelerator not found in configmaps directory.');
    expect(calls()).toEqual(['a.sh']);

    mkdirSync(join(dir, 'configmaps'), { recursive: true });
    writeFileSync(join(dir, 'configmaps/accelerator'), 'h100');
    expect((await run(['apply', root, COPY_DIR])).code).toBe(0);
    expect(readFileSync(join(root, 'etc/probe/settings.conf'), 'utf8')).toBe('x=1\n');
  });

  it('refuses an invalid package with every problem listed, exit 1', async () => {
    install({ apply: [{ path: 'gone.sh' }] }, {});
    const result = await run(['apply', root, COPY_DIR]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("step file 'gone.sh' does not exist");
    expect(result.stderr).toContain('There are no checks for any of the apply steps');
  });

  it('exits 0 on an unknown mode and 1 on a wrong argument count', async () => {
    const unknown = await run(['sideways', root, COPY_DIR]);
    expect(unknown.code).toBe(0);
    expect(unknown.stderr).toContain("WARNING:root:This version of the Agent doesn't support the sideways mode.");
    expect((await run(['apply'])).code).toBe(1);
  });
});

describe('SIGTERM', () => {
  it('lets the running step finish, starts no other, and exits 1', async () => {
    const slow = '#!/bin/sh\nmkdir -p /probe\ntouch /probe/started\nsleep 2\ntouch /probe/finished\n';
    install(
      { apply: [{ path: 'slow.sh' }, { path: 'a.sh' }], 'apply-check': [{ path: 'a_check.sh' }] },
      { 'slow.sh': slow, 'a.sh': probe, 'a_check.sh': probe },
    );
    const started = join(root, 'probe/started');
    const result = await run(['apply', root, COPY_DIR], {}, (pid) => {
      const poll = setInterval(() => {
        if (existsSync(started)) {
          clearInterval(poll);
          process.kill(pid, 'SIGTERM');
        }
      }, 50);
    });
    expect(result.code).toBe(1);
    expect(existsSync(join(root, 'probe/finished'))).toBe(true);
    expect(calls()).toEqual([]);
    expect(result.stdout).toContain('SUCEEDED: slow.sh');
  });
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});
