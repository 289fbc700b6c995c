/** Names and contents of what the agent leaves on the host: flags, history, logs, timestamps. */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decideStepFlag, stepFlagContent, stepFlagMarker, stepFlagPath } from '../../../src/agent/step-flags.js';
import { installedVersion, parseHistory, recordVersion, serializeHistory } from '../../../src/agent/history.js';
import { logsToReap } from '../../../src/agent/log-retention.js';
import {
  allCheckedPath,
  historyPath,
  interruptFlagPath,
  interruptLogName,
  logFilePath,
  logTimestamp,
  startFlagPath,
  stepLogName,
} from '../../../src/agent/host-paths.js';
import {
  pyCenter,
  pyJsonDumps,
  pyLocalIsoformat,
  pyReprList,
  pyReprString,
  pyUtcIsoformat,
} from '../../../src/agent/python-format.js';
import { OutputStamper } from '../../../src/agent/output-stamper.js';
import { checkResultsText } from '../../../src/agent/host-state.js';
import { STEP_MODES } from '../../../src/agent/modes.js';

const layout = { rootMount: '/root', stateDir: '/var/lib/skyhook/demo', logDir: '/var/log/skyhook/demo' };

describe('step flag names', () => {
  it.each([
    [[], [0], 'W11fWzBd'],
    [['apply'], [0], 'WydhcHBseSddX1swXQ=='],
    [['apply_check'], [0], 'WydhcHBseV9jaGVjayddX1swXQ=='],
  ])('base64 of repr(%j)_repr(%j) is %s', (args, codes, marker) => {
    expect(stepFlagMarker({ arguments: args, returncodes: codes })).toBe(marker);
  });

  it('reprs like Python: quotes, separators, escapes', () => {
    expect(pyReprList(['a', 'b'])).toBe("['a', 'b']");
    expect(pyReprList([0, 1])).toBe('[0, 1]');
    expect(pyReprString("it's")).toBe('"it\'s"');
    expect(pyReprString('say "hi" it\'s')).toBe("'say \"hi\" it\\'s'");
    expect(pyReprString('a\\b\nc\td\u0001')).toBe("'a\\\\b\\nc\\td\\x01'");
    expect(pyReprString('ünï')).toBe("'ünï'");
  });

  it('lives under flags/<package>/<version>/<step path>_<marker>', () => {
    expect(
      stepFlagPath(layout, 'shellscript', '1.1.1', {
        path: 'shellscript_run.sh',
        arguments: ['apply'],
        returncodes: [0],
      }),
    ).toBe('/root/var/lib/skyhook/demo/flags/shellscript/1.1.1/shellscript_run.sh_WydhcHBseSddX1swXQ==');
    expect(startFlagPath(layout)).toBe('/root/var/lib/skyhook/demo/flags/START');
    expect(allCheckedPath(layout, 'apply-check')).toBe('/root/var/lib/skyhook/demo/flags/apply-check_ALL_CHECKED');
    expect(
      stepFlagPath({ ...layout, rootMount: 'local' }, 'p', '1.0.0', { path: 'a.sh', arguments: [], returncodes: [0] }),
    ).toBe('/var/lib/skyhook/demo/flags/p/1.0.0/a.sh_W11fWzBd');
  });

  it('records the last run in local time and whether the step always runs', () => {
    const at = new Date(2026, 2, 4, 5, 6, 7, 89);
    expect(stepFlagContent(at, true)).toBe('last_run: 2026-03-04T05:06:07.089000\nstep_always_runs: True');
    expect(stepFlagContent(new Date(2026, 2, 4, 5, 6, 7, 0), false)).toBe(
      'last_run: 2026-03-04T05:06:07\nstep_always_runs: False',
    );
  });

  it('skips a step only when flagged, not overridden, in a mode that honours flags, and left to the agent', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom(...STEP_MODES.filter((m) => !m.endsWith('-check'))),
        fc.boolean(),
        (flagExists, alwaysRunStep, mode, stepManagesItself) => {
          const { skip } = decideStepFlag({
            flagExists,
            flagPath: 'f',
            stepPath: 's',
            alwaysRunStep,
            mode,
            stepManagesItself,
          });
          const honoursFlags = mode === 'apply' || mode === 'post-interrupt';
          expect(skip).toBe(flagExists && !alwaysRunStep && honoursFlags && !stepManagesItself);
        },
      ),
    );
  });
});

describe('check results', () => {
  it('has one `<path> <True|False>` line per check, True meaning failed, without a trailing newline', () => {
    expect(
      checkResultsText([
        { path: 'a_check.sh', failed: false },
        { path: 'b.sh', failed: true },
      ]),
    ).toBe('a_check.sh False\nb.sh True');
  });
});

describe('history', () => {
  const now = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 600));

  it('starts from nothing and puts the newest entry first', () => {
    const first = recordVersion(parseHistory(undefined), '1.0.0', now);
    expect(serializeHistory(first)).toBe(
      '{"current-version": "1.0.0", "history": [{"version": "1.0.0", "time": "2026-01-02T03:04:05.600000+00:00"}]}',
    );
    const second = recordVersion(parseHistory(serializeHistory(first)), 'uninstalled', new Date(Date.UTC(2026, 0, 3)));
    expect(second['current-version']).toBe('uninstalled');
    expect(second.history.map((h) => h.version)).toEqual(['uninstalled', '1.0.0']);
    expect(second.history[0]?.time).toBe('2026-01-03T00:00:00+00:00');
  });

  it('keeps keys it does not know', () => {
    const read = parseHistory('{"current-version": "1.0.0", "history": [], "note": "kept"}');
    expect(serializeHistory(recordVersion(read, '2.0.0', now))).toContain('"note": "kept"');
  });

  it('knows the installed version: unknown without history, empty after a corrupt one', () => {
    expect(installedVersion(parseHistory(undefined))).toBe('unknown');
    expect(installedVersion(parseHistory('{not json'))).toBe('');
    expect(installedVersion(parseHistory('[]'))).toBe('');
    expect(installedVersion(parseHistory('{"current-version": "1.2.3", "history": []}'))).toBe('1.2.3');
    expect(recordVersion(parseHistory('{broken'), '1.0.0', now).history).toHaveLength(1);
  });

  it('lives at history/<package>.json and dumps JSON the way Python does', () => {
    expect(historyPath(layout, 'tuning')).toBe('/root/var/lib/skyhook/demo/history/tuning.json');
    expect(pyJsonDumps({ a: [1, 'é'], b: { c: null } })).toBe('{"a": [1, "\\u00e9"], "b": {"c": null}}');
  });
});

describe('logs', () => {
  it('are named <log dir>/<pkg>/<ver>//<step>-<UTC stamp>.log, interrupts under interrupts/', () => {
    const stamp = logTimestamp(new Date(Date.UTC(2026, 10, 2, 3, 4, 5)));
    expect(stamp).toBe('2026-11-02-030405');
    expect(logFilePath(layout, 'shellscript', '1.1.1', stepLogName('shellscript_run.sh'), stamp)).toBe(
      '/root/var/log/skyhook/demo/shellscript/1.1.1//shellscript_run.sh-2026-11-02-030405.log',
    );
    expect(logFilePath(layout, 'tuning', '1.1.0', interruptLogName('node_restart_0'), stamp)).toBe(
      '/root/var/log/skyhook/demo/tuning/1.1.0/interrupts/node_restart_0-2026-11-02-030405.log',
    );
    expect(interruptFlagPath(layout, 'demo-1_tuning_1.1.0', 'no_op')).toBe(
      '/root/var/lib/skyhook/demo/interrupts/flags/demo-1_tuning_1.1.0/no_op.complete',
    );
  });

  it('keeps the 5 newest logs of the step, ignoring .err files and other steps', () => {
    const entries = [
      ...[1, 2, 3, 4, 5, 6, 7].map((i) => ({ name: `a.sh-2026-01-0${i}-000000.log`, mtimeMs: i })),
      { name: 'a.sh-2026-01-01-000000.log.err', mtimeMs: 0 },
      { name: 'b.sh-2026-01-01-000000.log', mtimeMs: 0 },
      { name: 'a.sh-extra-2026-01-01-000000.log', mtimeMs: 0 },
    ];
    expect(logsToReap(entries, 'a.sh')).toEqual(['a.sh-2026-01-02-000000.log', 'a.sh-2026-01-01-000000.log']);
    expect(logsToReap(entries.slice(0, 5), 'a.sh')).toEqual([]);
  });

  it('never keeps more than 5 and never deletes one of the 5 newest', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 1e6 }), { maxLength: 20 }), (mtimes) => {
        const entries = mtimes.map((m, i) => ({
          name: `s.sh-2026-01-01-${String(i).padStart(6, '0')}.log`,
          mtimeMs: m,
        }));
        const reaped = new Set(logsToReap(entries, 's.sh'));
        expect(entries.length - reaped.size).toBe(Math.min(5, entries.length));
        const newest = [...entries].sort((a, b) => b.mtimeMs - a.mtimeMs).slice(0, 5);
        for (const e of newest) expect(reaped.has(e.name)).toBe(false);
      }),
    );
  });

  it('stamps the first chunk and every line after a newline, across chunks', () => {
    const stamper = new OutputStamper('[out]');
    const at = new Date(2026, 0, 2, 3, 4, 5, 6);
    const ts = pyLocalIsoformat(at);
    expect(stamper.stamp(Buffer.from('one\ntw'), at)).toBe(`[out]${ts} one\n[out]${ts} tw`);
    expect(stamper.stamp(Buffer.from('o\n'), at)).toBe(`o\n[out]${ts} `);
    const split = Buffer.from('é');
    const err = new OutputStamper('[err]');
    expect(err.stamp(split.subarray(0, 1), at) + err.stamp(split.subarray(1), at)).toBe(`[err]${ts} é`);
  });
});

describe('python formats', () => {
  it('formats timestamps like isoformat()', () => {
    expect(pyUtcIsoformat(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02T03:04:05.006000+00:00');
    expect(pyLocalIsoformat(new Date(2026, 0, 2, 3, 4, 5))).toBe('2026-01-02T03:04:05');
  });

  it('centers like str.center', () => {
    expect(pyCenter('CLI CONFIGURATION', 20, '-')).toBe('-CLI CONFIGURATION--');
    expect(pyCenter('ab', 5, '*')).toBe('**ab*');
    expect(pyCenter('abc', 6, '*')).toBe('*abc**');
    expect(pyCenter('Directory CONFIGURATION', 20, '-')).toBe('Directory CONFIGURATION');
  });
});
