import { describe, it, expect } from '@jest/globals';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { IGNORE_NODE_LABEL, nodeAnnotations, nodeLabels, SKYHOOK_ANNOTATIONS } from '../../../src/api/names.js';
import type { Skyhook } from '../../../src/api/skyhook.js';
import { lifecycleChanges } from '../../../src/cli/plugin/lifecycle.js';
import { ignoreChanges, resetChanges } from '../../../src/cli/plugin/node.js';
import { nodeMatcher } from '../../../src/cli/plugin/node-patterns.js';
import { nodeResetChange } from '../../../src/cli/plugin/node-reset.js';
import { parsePluginArgs, UsageError } from '../../../src/cli/plugin/options.js';
import { render, renderTable } from '../../../src/cli/plugin/output.js';
import { packageRows, rerunChanges } from '../../../src/cli/plugin/package.js';
import { formatLogs, stagePods } from '../../../src/cli/plugin/package-logs.js';
import { batchResetChange, skyhookResetChanges } from '../../../src/cli/plugin/reset.js';
import { summarizeNode } from '../../../src/cli/plugin/node-summary.js';
import { SKYHOOK_COLUMNS, skyhookName, summarizeSkyhook } from '../../../src/cli/plugin/status.js';

const entry = (stage: string, state: string): string =>
  `{"motd|1.1.0":{"name":"motd","version":"1.1.0","image":"img","stage":"${stage}","state":"${state}"}}`;

function node(name: string, annotations: Record<string, string> = {}, labels: Record<string, string> = {}): V1Node {
  return { metadata: { name, annotations, labels, resourceVersion: '7' } };
}

function skyhook(annotations: Record<string, string> = {}, status: Skyhook['status'] = undefined): Skyhook {
  const scr: Skyhook = {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'Skyhook',
    metadata: { name: 'demo', annotations },
    spec: { packages: { motd: { version: '1.1.0', image: 'img' } } },
  };
  if (status) scr.status = status;
  return scr;
}

describe('plugin arguments', () => {
  it('parse the shared flags, with --confirm as an alias of --yes', () => {
    const { options, positionals } = parsePluginArgs([
      'reset',
      'demo',
      '-o',
      'json',
      '--confirm',
      '-n',
      'ops',
      '--tail',
      '5',
    ]);
    expect(positionals).toEqual(['reset', 'demo']);
    expect(options).toMatchObject({ output: 'json', yes: true, namespace: 'ops', tail: 5, dryRun: false });
    expect(parsePluginArgs([]).options).toMatchObject({ output: 'table', namespace: 'skyhook', yes: false });
  });

  it('name the bad flag or value', () => {
    expect(() => parsePluginArgs(['-o', 'xml'])).toThrow(
      new UsageError("--output must be one of table, wide, json, yaml, name, not 'xml'"),
    );
    expect(() => parsePluginArgs(['--tail', 'all'])).toThrow('--tail must be a whole number of lines');
    expect(() => parsePluginArgs(['--bogus'])).toThrow(UsageError);
  });

  it('read node arguments as exact names, or anchored regular expressions when they have metacharacters', () => {
    expect(nodeMatcher('node-1')('node-1')).toBe(true);
    expect(nodeMatcher('node-1')('node-10')).toBe(false);
    const regex = nodeMatcher('node-[12]');
    expect(['node-1', 'node-2', 'node-3', 'xnode-1', 'node-12'].filter(regex)).toEqual(['node-1', 'node-2']);
    expect(() => nodeMatcher('node-[')).toThrow("node pattern 'node-[' is not a valid regular expression");
  });
});

describe('plugin output', () => {
  const columns = [
    { header: 'NAME', value: (r: { name: string; n: number }) => r.name },
    { header: 'N', value: (r: { name: string; n: number }) => String(r.n) },
    { header: 'EXTRA', value: () => 'x', wide: true },
  ];

  it('aligns tables kubectl-style, wide columns with -o wide only', () => {
    expect(
      renderTable(
        [
          { name: 'a', n: 10 },
          { name: 'long-name', n: 2 },
        ],
        columns,
      ),
    ).toBe('NAME       N\na          10\nlong-name  2');
    expect(renderTable([{ name: 'a', n: 1 }], columns, true)).toBe('NAME  N  EXTRA\na     1  x');
  });

  it('prints records as JSON or YAML', () => {
    expect(JSON.parse(render([{ name: 'a', n: 1 }], columns, 'json'))).toEqual([{ name: 'a', n: 1 }]);
    expect(render([{ name: 'a', n: 1 }], columns, 'yaml')).toBe('- name: a\n  n: 1');
    expect(render([], columns, 'yaml')).toBe('[]');
  });

  it('prints -o name as kubectl does: one resource/name per line, each once', () => {
    const rows = [
      { name: 'a', n: 1 },
      { name: 'b', n: 2 },
      { name: 'a', n: 3 },
    ];
    expect(render(rows, columns, 'name', (r) => `node/${r.name}`)).toBe('node/a\nnode/b');
    expect(render(rows, columns, 'name')).toBe('a\nb');
  });
});

describe('plugin changes', () => {
  it('pause sets and resume removes the pause annotation; already-set is a note, not a change', () => {
    expect(lifecycleChanges('pause', skyhook()).changes).toEqual([
      {
        target: { kind: 'Skyhook', name: 'demo' },
        patch: { metadata: { annotations: { [SKYHOOK_ANNOTATIONS.pause]: 'true' } } },
        description: `set annotation ${SKYHOOK_ANNOTATIONS.pause}="true"`,
      },
    ]);
    expect(lifecycleChanges('pause', skyhook()).destructive).toBe(true);
    const resume = lifecycleChanges('resume', skyhook({ [SKYHOOK_ANNOTATIONS.pause]: 'true' }));
    expect(resume.changes[0]!.patch).toEqual({ metadata: { annotations: { [SKYHOOK_ANNOTATIONS.pause]: null } } });
    expect(resume.destructive).toBe(false);
    expect(lifecycleChanges('enable', skyhook())).toMatchObject({
      changes: [],
      notes: ['Skyhook demo is already not disabled'],
    });
    expect(lifecycleChanges('disable', skyhook({ [SKYHOOK_ANNOTATIONS.pause]: 'true' })).changes[0]!.patch).toEqual({
      metadata: { annotations: { [SKYHOOK_ANNOTATIONS.disable]: 'true' } },
    });
  });

  it('ignore labels only the nodes not ignored yet', () => {
    const set = ignoreChanges([node('a'), node('b', {}, { [IGNORE_NODE_LABEL]: 'true' })], true);
    expect(set.changes.map((c) => [c.target.name, c.patch])).toEqual([
      ['a', { metadata: { labels: { [IGNORE_NODE_LABEL]: 'true' } } }],
    ]);
    expect(set.notes).toEqual(['node b is already ignored']);
    expect(ignoreChanges([node('b', {}, { [IGNORE_NODE_LABEL]: 'true' })], false).changes[0]!.patch).toEqual({
      metadata: { labels: { [IGNORE_NODE_LABEL]: null } },
    });
  });

  it('node reset removes the SCR annotations, its status label and autoTaint markers, and nothing of other SCRs', () => {
    const annotations = {
      [nodeAnnotations.nodeState('demo')]: '{}',
      [nodeAnnotations.status('demo')]: 'complete',
      [nodeAnnotations.version('demo')]: 'v1',
      [nodeAnnotations.cordon('demo')]: 'true',
      [nodeAnnotations.autoTaint('skyhook.nvidia.com')]: 'true',
      [nodeAnnotations.nodeState('other')]: '{}',
    };
    const change = nodeResetChange(
      node('a', annotations, { [nodeLabels.status('demo')]: 'complete', [nodeLabels.status('other')]: 'complete' }),
      'demo',
    );
    expect(change?.patch).toEqual({
      metadata: {
        annotations: {
          [nodeAnnotations.nodeState('demo')]: null,
          [nodeAnnotations.status('demo')]: null,
          [nodeAnnotations.version('demo')]: null,
          [nodeAnnotations.cordon('demo')]: null,
          [nodeAnnotations.autoTaint('skyhook.nvidia.com')]: null,
        },
        labels: { [nodeLabels.status('demo')]: null },
      },
    });
    expect(nodeResetChange(node('b', { [nodeAnnotations.nodeState('other')]: '{}' }), 'demo')).toBeUndefined();
    expect(resetChanges([node('b')], 'demo')).toMatchObject({
      changes: [],
      notes: ['node b has no state of Skyhook demo'],
    });
  });

  it('rerun removes the entry, or sets it to {stage, in_progress}, guarded by the resourceVersion', () => {
    const nodes = [node('a', { [nodeAnnotations.nodeState('demo')]: entry('config', 'complete') }), node('b')];
    const removed = rerunChanges(nodes, skyhook(), 'motd', undefined);
    expect(removed.changes).toHaveLength(1);
    // The operator's copy changes with it, so a later unreadable edit is restored to the rerun, not to before it.
    expect(removed.changes[0]!.patch).toEqual({
      metadata: {
        resourceVersion: '7',
        annotations: { [nodeAnnotations.nodeState('demo')]: '{}', [nodeAnnotations.nodeStateCopy('demo')]: '{}' },
      },
    });
    expect(removed.notes).toEqual(['node b has no entry for motd:1.1.0; nothing to rerun']);
    const staged = rerunChanges(nodes, skyhook(), 'motd', 'apply');
    expect(
      staged.changes.map(
        (c) =>
          (c.patch as { metadata: { annotations: Record<string, string> } }).metadata.annotations[
            nodeAnnotations.nodeState('demo')
          ],
      ),
    ).toEqual([entry('apply', 'in_progress'), entry('apply', 'in_progress')]);
    expect(() => rerunChanges(nodes, skyhook(), 'nope', undefined)).toThrow(
      "Skyhook demo has no package 'nope'; its packages: motd",
    );
  });

  it('package rows and node summaries read the entries through the operator parsers', () => {
    const a = node('a', {
      [nodeAnnotations.nodeState('demo')]: entry('config', 'complete'),
      [nodeAnnotations.status('demo')]: 'complete',
    });
    expect(packageRows([a], 'demo', 'motd')).toEqual([
      { node: 'a', package: 'motd', version: '1.1.0', stage: 'config', state: 'complete', restarts: 0, image: 'img' },
    ]);
    expect(summarizeNode(a, skyhook())).toMatchObject({ status: 'complete', packagesComplete: '1/1', ignored: false });
    expect(summarizeNode(node('b', { [nodeAnnotations.nodeState('demo')]: 'not json' }), skyhook()).status).toBe(
      'malformed',
    );
  });

  it('batch reset restarts every compartment at batch 1; reset also clears the pick order unless skipped', () => {
    const status = {
      nodePriority: { a: '2025-01-01T00:00:00Z' },
      compartmentStatuses: {
        __default__: {
          matched: 2,
          ceiling: 1,
          inProgress: 0,
          completed: 1,
          progressPercent: 50,
          batchState: { currentBatch: 3 },
        },
      },
    };
    const fresh = {
      currentBatch: 1,
      consecutiveFailures: 0,
      completedNodes: 0,
      failedNodes: 0,
      shouldStop: false,
      lastBatchSize: 0,
      lastBatchFailed: false,
    };
    expect(batchResetChange(skyhook({}, status), false)?.patch).toEqual({
      status: { compartmentStatuses: { __default__: { batchState: fresh } } },
    });
    expect(batchResetChange(skyhook({}, status), true)?.patch).toEqual({
      status: { compartmentStatuses: { __default__: { batchState: fresh } }, nodePriority: null },
    });
    expect(batchResetChange(skyhook(), true)).toBeUndefined();
    expect(skyhookResetChanges(skyhook({}, status), [], true).changes).toEqual([]);
  });
});

describe('package logs', () => {
  const pod = (name: string, nodeName: string, stage: string, pkg: string, created: string): V1Pod => ({
    metadata: {
      name,
      creationTimestamp: new Date(created),
      labels: {
        'skyhook.nvidia.com/package': pkg,
        'skyhook.nvidia.com/stage': stage,
        'batch.kubernetes.io/job-name': `${name}-job`,
      },
    },
    spec: { nodeName, containers: [] },
  });

  it('select the package pods by version label, node and stage, by node then in the order they ran', () => {
    const pods = [
      pod('config-a', 'a', 'config', 'motd-1.1.0', '2025-01-01T00:00:02Z'),
      pod('apply-a', 'a', 'apply', 'motd-1.1.0', '2025-01-01T00:00:01Z'),
      pod('apply-b', 'b', 'apply', 'motd-1.1.0', '2025-01-01T00:00:00Z'),
      pod('other', 'a', 'apply', 'motd-extra-1.1.0', '2025-01-01T00:00:00Z'),
    ];
    const names = (selected: V1Pod[]) => selected.map((p) => p.metadata?.name);
    expect(names(stagePods(pods, { packageLabels: new Set(['motd-1.1.0']) }))).toEqual([
      'apply-a',
      'config-a',
      'apply-b',
    ]);
    expect(names(stagePods(pods, { packageLabels: new Set(['motd-1.1.0']), stage: 'config' }))).toEqual(['config-a']);
    expect(names(stagePods(pods, { packageLabels: new Set(['motd-1.1.0']), node: (n) => n === 'b' }))).toEqual([
      'apply-b',
    ]);
  });

  it('head each log with where it came from', () => {
    expect(
      formatLogs([
        { node: 'a', stage: 'apply', job: 'j', pod: 'p', container: 'c1', log: 'one\n' },
        { node: 'a', stage: 'apply', job: '', pod: 'r', container: 'c2', log: 'two' },
      ]),
    ).toBe(
      '==> node a · stage apply · job j · pod p · container c1 <==\none\n\n==> node a · stage apply · pod r · container c2 <==\ntwo\n',
    );
  });
});

describe('status of a Skyhook waiting for a maintenance window', () => {
  it('shows when the next window opens with -o wide', () => {
    const summary = summarizeSkyhook({
      apiVersion: 'skyhook.nvidia.com/v1alpha1',
      kind: 'Skyhook',
      metadata: { name: 'kernel' },
      spec: { deploymentPolicy: 'nights', packages: {} },
      status: { status: 'in_progress', nextMaintenanceWindow: '2026-11-24T21:00:00Z' },
    });
    expect(summary.nextMaintenanceWindow).toBe('2026-11-24T21:00:00Z');
    const wide = render([summary], SKYHOOK_COLUMNS, 'wide', skyhookName);
    expect(wide.split('\n')[0]).toMatch(/POLICY +NEXT-WINDOW$/);
    expect(wide.split('\n')[1]).toMatch(/nights +2026-11-24T21:00:00Z$/);
    expect(render([summary], SKYHOOK_COLUMNS, 'table', skyhookName)).not.toContain('NEXT-WINDOW');
  });
});
