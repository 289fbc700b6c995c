/**
 * The kubectl plugin commands and `skyhook plan`, run as the built CLI (`node bin/skyhook.js`)
 * against a real control plane: each command's changes to labels and annotations, confirmation and
 * --dry-run, `package logs` returning a stage Job's log (kwok serves the simulated log), and `plan`
 * printing the batches and blockers of a fixture cluster while changing nothing.
 */
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type V1Job, type V1Node } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  IGNORE_NODE_LABEL,
  nodeAnnotations,
  nodeLabels,
  SKYHOOK_ANNOTATIONS,
} from '../../src/api/names.js';
import type { NodeOp } from '../../src/api/nodeop.js';
import type { Skyhook } from '../../src/api/skyhook.js';
import { readSkyhookSettings } from '../../src/controllers/skyhook/skyhook-settings.js';
import { buildStageNodeOp } from '../../src/controllers/skyhook/build/stage-nodeop.js';
import { mergePatchNode } from '../../src/kube/client.js';
import { waitForList } from '../../src/kube/wait.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { SIMULATED_LOG_LINE } from '../../src/sandbox/kwok-stages.js';
import { buildNodeJob } from '../../src/templates/nodeop-job.js';
import { readNodeOpSettings } from '../../src/templates/nodeop-settings.js';
import { nodeJobName } from '../../src/templates/object-names.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NAMESPACE = 'skyhook';
const DEMO = 'demo';
const STATE = nodeAnnotations.nodeState(DEMO);
const motdEntry = (stage: string, state: string): string =>
  `{"motd|1.1.0":{"name":"motd","version":"1.1.0","image":"ghcr.io/nvidia/skyhook-packages/shellscript","stage":"${stage}","state":"${state}"}}`;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

let cp: ControlPlane;
let core: CoreV1Api;
let custom: CustomObjectsApi;

function skyhookCli(...args: string[]): Promise<CliResult> {
  return new Promise((resolveRun) => {
    // stdin closed and not a TTY, as in CI: destructive commands must refuse without --yes.
    const child = execFile(
      process.execPath,
      [join(ROOT, 'bin/skyhook.js'), ...args, '--kubeconfig', cp.kubeconfigPath],
      { cwd: ROOT },
      (error, stdout, stderr) => {
        resolveRun({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

/** The CLI with exactly these arguments (no --kubeconfig added) and extra environment. */
function runCli(args: string[], env: Record<string, string> = {}, entry = 'bin/skyhook.js'): Promise<CliResult> {
  return new Promise((resolveRun) => {
    const child = execFile(
      process.execPath,
      [join(ROOT, entry), ...args],
      { cwd: ROOT, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        resolveRun({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

async function ok(...args: string[]): Promise<string> {
  const result = await skyhookCli(...args);
  if (result.code !== 0) throw new Error(`skyhook ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

const readNode = (name: string): Promise<V1Node> => core.readNode({ name });
const readSkyhook = async (name: string): Promise<Skyhook> =>
  (await custom.getClusterCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    plural: 'skyhooks',
    name,
  })) as Skyhook;

async function kubectl(args: string[], input?: string): Promise<string> {
  const result = await cp.kubectl(args, input === undefined ? undefined : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** What the operator would have written for `demo` on a node: state, status (annotation and label), version, cordon. */
async function writeDemoState(node: string, stage = 'config', state = 'complete'): Promise<void> {
  await mergePatchNode(core, node, {
    metadata: {
      annotations: {
        [STATE]: motdEntry(stage, state),
        [nodeAnnotations.status(DEMO)]: 'complete',
        [nodeAnnotations.version(DEMO)]: 'v0.13.0',
        [nodeAnnotations.cordon(DEMO)]: 'true',
      },
      labels: { [nodeLabels.status(DEMO)]: 'complete' },
    },
  });
}

/** resourceVersions of everything `plan` could touch. */
async function resourceVersions(): Promise<string> {
  const listed = await kubectl([
    'get',
    'nodes,skyhooks,configmaps,pods,jobs,nodeops',
    '-A',
    '-o',
    'jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}={.metadata.resourceVersion}{"\\n"}{end}',
  ]);
  return listed.split('\n').sort().join('\n');
}

beforeAll(async () => {
  cp = await startControlPlane({
    // node-a first, so it is the oldest node and the first one a budget of 1 picks.
    nodes: [{ name: 'node-a', labels: { 'skyhook.nvidia.com/test-node': 'demo' } }],
    podDurationMs: 200,
  });
  await cp.addNodes([
    { name: 'node-b', labels: { 'skyhook.nvidia.com/test-node': 'demo' } },
    {
      name: 'node-c',
      labels: { 'skyhook.nvidia.com/test-node': 'demo' },
      taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }],
    },
    { name: 'node-d', labels: { 'skyhook.nvidia.com/test-node': 'demo', [IGNORE_NODE_LABEL]: 'true' } },
    { name: 'node-e' },
    { name: 'node-f', labels: { 'skyhook.nvidia.com/test-node': 'demo', early: 'yes' } },
  ]);
  core = cp.kubeConfig.makeApiClient(CoreV1Api);
  custom = cp.kubeConfig.makeApiClient(CustomObjectsApi);
  await kubectl(['apply', '--server-side', '-k', join(ROOT, 'config/crd')]);
  await waitCrdsEstablished(cp, ['crd', '--all']);
  await kubectl(['create', 'namespace', NAMESPACE]);
  // A paused Skyhook of priority 1 on node-f: every later Skyhook waits for it there.
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: 'Skyhook',
      metadata: { name: 'early', annotations: { [SKYHOOK_ANNOTATIONS.pause]: 'true' } },
      spec: {
        priority: 1,
        nodeSelectors: { matchLabels: { early: 'yes' } },
        packages: { tools: { version: '1.0.0', image: 'example.com/tools' } },
      },
    }),
  );
  // A pod plan-demo's podNonInterruptLabels protect, on node-b (not a Job pod: it runs until deleted).
  await kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'protected', namespace: 'default', labels: { dontmess: 'withme' } },
      spec: { nodeName: 'node-b', containers: [{ name: 'app', image: 'example.com/app' }] },
    }),
  );
  await kubectl(['wait', '--for=condition=Ready', 'pod/protected', '--timeout=60s']);
}, 120_000);

afterAll(async () => {
  await cp?.stop();
});

describe('skyhook plan', () => {
  it('prints the batches, stages, interrupts and blockers of the fixture, and changes nothing', async () => {
    const before = await resourceVersions();
    const stdout = await ok('plan', '-f', join(ROOT, 'test/e2e/fixtures/plan-interrupt.yaml'));
    // node-b: cordoned for kernel's reboot, which the protected pod holds; motd (no interrupt) still runs.
    expect(
      stdout,
    ).toBe(`Skyhook plan-demo (priority 200) selects 5 of 6 node(s); at most 1 of 5 at once in compartment __default__.

BATCH  NODE    ON APPLY     STAGES                                                                           CORDON  DRAIN  INTERRUPT  AT END
1      node-a  in_progress  motd:1.1.0 apply, config; kernel:2.0.0 apply, config, interrupt, post-interrupt  yes     yes    reboot     complete
2      node-b  waiting      motd:1.1.0 apply, config                                                         yes     no     -          in_progress
-      node-c  blocked      -                                                                                no      no     -          blocked
-      node-d  blocked      -                                                                                no      no     -          blocked
-      node-f  waiting      -                                                                                no      no     -          waiting

Held back:
  node-b  NonInterruptPodsRunning: default/protected
  node-c  TaintNotTolerable: gpu=true:NoSchedule
  node-d  NodeIgnored: label skyhook.nvidia.com/ignore=true
  node-f  HigherPrioritySkyhook: early

Not selected: node-e

Not every selected node would end complete (see Held back).
`);
    expect(await resourceVersions()).toBe(before);
  });

  it('plans the demo sample: every eligible node in one batch, blockers named', async () => {
    const before = await resourceVersions();
    const report = JSON.parse(await ok('plan', '-f', join(ROOT, 'config/samples/demo.yaml'), '-o', 'json')) as {
      selected: number;
      nodes: { node: string; batch?: number; stages: string; cordon: boolean; drain: boolean; blockers: string[] }[];
      notSelected: string[];
    };
    expect(report.selected).toBe(5);
    expect(report.notSelected).toEqual(['node-e']);
    const byNode = Object.fromEntries(report.nodes.map((node) => [node.node, node]));
    expect(byNode['node-a']).toMatchObject({
      batch: 1,
      stages: 'motd:1.1.0 apply, config',
      cordon: false,
      drain: false,
      blockers: [],
    });
    expect(byNode['node-b']).toMatchObject({ batch: 1, stages: 'motd:1.1.0 apply, config', blockers: [] });
    expect(byNode['node-c']!.blockers).toEqual(['TaintNotTolerable: gpu=true:NoSchedule']);
    expect(byNode['node-c']!.batch).toBeUndefined();
    expect(byNode['node-d']!.blockers).toEqual([`NodeIgnored: label ${IGNORE_NODE_LABEL}=true`]);
    expect(byNode['node-f']!.blockers).toEqual(['HigherPrioritySkyhook: early']);
    expect(await resourceVersions()).toBe(before);
  });

  it('names the missing flag and exits 2 without -f', async () => {
    const result = await skyhookCli('plan');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('-f FILE is required');
  });
});

describe('kubectl plugin commands', () => {
  beforeAll(async () => {
    await kubectl(['apply', '-f', join(ROOT, 'config/samples/demo.yaml')]);
    await writeDemoState('node-a');
    await writeDemoState('node-b');
  });

  it('status lists the Skyhooks with pause and disable', async () => {
    const summaries = JSON.parse(await ok('status', '-o', 'json')) as {
      name: string;
      paused: boolean;
      disabled: boolean;
      priority: number;
    }[];
    expect(summaries.map((s) => s.name)).toEqual(['demo', 'early']);
    expect(summaries.find((s) => s.name === 'early')).toMatchObject({ paused: true, disabled: false, priority: 1 });
    expect(await ok('status', DEMO)).toMatch(/^NAME\s+STATUS\s+PRIORITY.*\ndemo\s+unknown\s+200/);
  });

  it('-o name prints kubectl-style names, one per line', async () => {
    expect(await ok('status', '-o', 'name')).toBe(`skyhook.${API_GROUP}/demo\nskyhook.${API_GROUP}/early\n`);
    expect(await ok('node', 'list', '--skyhook', DEMO, '-o', 'name')).toBe(
      ['node-a', 'node-b', 'node-c', 'node-d', 'node-f'].map((n) => `node/${n}\n`).join(''),
    );
    expect(await ok('pause', DEMO, '--dry-run', '-o', 'name')).toBe(`skyhook.${API_GROUP}/demo\n`);
  });

  it('status --watch prints the list, then a line per change, until interrupted', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/skyhook.js'), 'status', DEMO, '--watch'], {
      cwd: ROOT,
      env: { ...process.env, KUBECONFIG: cp.kubeconfigPath },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolveExit) => child.on('exit', (code) => resolveExit(code)));
    const waitFor = async (pattern: RegExp): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (!pattern.test(out)) {
        if (Date.now() > deadline) throw new Error(`no ${pattern} in: ${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      await waitFor(/^NAME\s+STATUS.*\ndemo\s+unknown\s+200\s+0\s+\S+\s+no\s+no/);
      await kubectl(['annotate', 'skyhook', DEMO, `${SKYHOOK_ANNOTATIONS.pause}=true`]);
      await waitFor(/\ndemo\s+unknown\s+200\s+0\s+\S+\s+yes\s+no/);
      await kubectl(['annotate', 'skyhook', DEMO, `${SKYHOOK_ANNOTATIONS.pause}-`]);
      await waitFor(/yes\s+no.*\n(.*\n)*demo\s+unknown\s+200\s+0\s+\S+\s+no\s+no/);
      expect(out.split('\n').filter((line) => line.startsWith('NAME'))).toHaveLength(1);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });

  it("version prints the client's, the Kubernetes and the operator's versions, as kubectl version does", async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(await ok('version', '--client')).toBe(`Client Version: ${version}\n`);
    const before = await ok('version');
    expect(before).toMatch(new RegExp(`^Client Version: ${version}\nKubernetes Version: v1\\.\\d+\\.\\d+`));
    expect(before).toContain(`Operator Version: not installed (no Deployment skyhook-operator in ${NAMESPACE})`);
    await kubectl(['apply', '-n', NAMESPACE, '-f', join(ROOT, 'config/manager/manager.yaml')]);
    try {
      const report = JSON.parse(await ok('version', '-o', 'json')) as {
        clientVersion: string;
        kubernetesVersion: string;
        operator: { version: string; image: string; replicas: number };
      };
      expect(report).toMatchObject({
        clientVersion: version,
        operator: { version, image: `ghcr.io/skyhook-ts/skyhook:${version}`, replicas: 2 },
      });
      expect(report.kubernetesVersion).toMatch(/^v1\.\d+\.\d+/);
    } finally {
      await kubectl(['delete', '-n', NAMESPACE, 'deployment', 'skyhook-operator', '--wait=true']);
    }
    const unreachable = await runCli(['version', '--kubeconfig', '/nonexistent/kubeconfig']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toBe(`Client Version: ${version}\n`);
  });

  it('completes commands, flags and Skyhook names for the shells and for kubectl (Cobra __complete)', async () => {
    const env = { KUBECONFIG: cp.kubeconfigPath };
    expect((await runCli(['__complete', 'pa'], env)).stdout).toBe('package\npause\n:4\n');
    expect((await runCli(['__complete', 'pause', ''], env)).stdout).toBe('demo\nearly\n:4\n');
    expect((await runCli(['__complete', 'node', 'ignore', 'node-'], env)).stdout).toBe(
      ['node-a', 'node-b', 'node-c', 'node-d', 'node-e', 'node-f', ':4', ''].join('\n'),
    );
    // kubectl >= 1.26 runs kubectl_complete-skyhook for `kubectl skyhook <TAB>`.
    const viaKubectl = await runCli(['status', '-o', 'w'], env, 'bin/kubectl_complete-skyhook');
    expect(viaKubectl.stdout).toBe('wide\n:4\n');
    // The bash script, sourced into a real bash with `skyhook` on PATH.
    const pathDir = mkdtempSync(join(tmpdir(), 'skyhook-path-'));
    symlinkSync(join(ROOT, 'bin/skyhook.js'), join(pathDir, 'skyhook'));
    const script = (await runCli(['completion', 'bash'])).stdout;
    const bash = await new Promise<string>((resolveRun, reject) => {
      execFile(
        'bash',
        ['-c', `${script}\nCOMP_WORDS=(skyhook pause d); COMP_CWORD=2; _skyhook_complete; echo "\${COMPREPLY[*]}"`],
        { env: { ...process.env, ...env, PATH: `${pathDir}:${dirname(process.execPath)}:${process.env['PATH']}` } },
        (error, stdout, stderr) => (error ? reject(new Error(stderr)) : resolveRun(stdout)),
      );
    });
    expect(bash.trim()).toBe('demo');
    expect((await runCli(['completion', 'zsh'])).stdout).toContain('compdef _skyhook skyhook kubectl-skyhook');
  });

  it('pause, resume, disable and enable set and remove their own annotation only; destructive ones need --yes without a TTY', async () => {
    const annotations = async () => (await readSkyhook(DEMO)).metadata.annotations ?? {};
    expect(await ok('pause', DEMO, '--dry-run')).toContain(`would set annotation ${SKYHOOK_ANNOTATIONS.pause}="true"`);
    expect((await annotations())[SKYHOOK_ANNOTATIONS.pause]).toBeUndefined();

    const refused = await skyhookCli('pause', DEMO);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('refusing to pause Skyhook demo without confirmation');
    expect(refused.stderr).toContain('--yes');
    expect((await annotations())[SKYHOOK_ANNOTATIONS.pause]).toBeUndefined();

    await ok('pause', DEMO, '--yes');
    expect(await annotations()).toMatchObject({ [SKYHOOK_ANNOTATIONS.pause]: 'true' });
    await ok('disable', DEMO, '-y');
    expect(await annotations()).toMatchObject({
      [SKYHOOK_ANNOTATIONS.pause]: 'true',
      [SKYHOOK_ANNOTATIONS.disable]: 'true',
    });
    await ok('resume', DEMO);
    expect((await annotations())[SKYHOOK_ANNOTATIONS.pause]).toBeUndefined();
    expect((await annotations())[SKYHOOK_ANNOTATIONS.disable]).toBe('true');
    await ok('enable', DEMO);
    expect((await annotations())[SKYHOOK_ANNOTATIONS.disable]).toBeUndefined();
    expect((await skyhookCli('enable', DEMO)).stderr).toContain('already not disabled');
  });

  it('node list and node status show status and packages from the node annotations', async () => {
    const list = JSON.parse(await ok('node', 'list', '--skyhook', DEMO, '-o', 'json')) as {
      node: string;
      status: string;
      packagesComplete: string;
      ignored: boolean;
      cordoned: boolean;
    }[];
    expect(list.map((row) => row.node)).toEqual(['node-a', 'node-b', 'node-c', 'node-d', 'node-f']);
    expect(list[0]).toMatchObject({ node: 'node-a', status: 'complete', packagesComplete: '1/1' });
    expect(list.find((row) => row.node === 'node-d')).toMatchObject({
      status: 'unknown',
      packagesComplete: '0/1',
      ignored: true,
    });
    const status = parseYaml(await ok('node', 'status', 'node-[ab]', '-o', 'yaml')) as {
      node: string;
      skyhook: string;
    }[];
    expect(status.map((row) => `${row.node}/${row.skyhook}`)).toEqual(['node-a/demo', 'node-b/demo']);
  });

  it('node ignore and unignore set and remove the ignore label on the matching nodes', async () => {
    await ok('node', 'ignore', 'node-[ab]');
    expect((await readNode('node-a')).metadata?.labels?.[IGNORE_NODE_LABEL]).toBe('true');
    expect((await readNode('node-b')).metadata?.labels?.[IGNORE_NODE_LABEL]).toBe('true');
    expect((await readNode('node-c')).metadata?.labels?.[IGNORE_NODE_LABEL]).toBeUndefined();
    await ok('node', 'unignore', 'node-a');
    expect((await readNode('node-a')).metadata?.labels?.[IGNORE_NODE_LABEL]).toBeUndefined();
    expect((await readNode('node-b')).metadata?.labels?.[IGNORE_NODE_LABEL]).toBe('true');
    await ok('node', 'unignore', 'node-b');
    expect((await readNode('node-b')).metadata?.labels?.[IGNORE_NODE_LABEL]).toBeUndefined();
    expect((await skyhookCli('node', 'ignore', 'nope')).stderr).toContain("no node matches 'nope'");
  });

  it('package status and rerun: rerun removes the entry, or sets {stage, in_progress} with --stage', async () => {
    const rows = JSON.parse(await ok('package', 'status', 'motd', '--skyhook', DEMO, '-o', 'json')) as {
      node: string;
      stage: string;
      state: string;
    }[];
    expect(rows).toEqual([
      expect.objectContaining({ node: 'node-a', stage: 'config', state: 'complete' }),
      expect.objectContaining({ node: 'node-b', stage: 'config', state: 'complete' }),
    ]);
    expect((await skyhookCli('package', 'rerun', 'motd', '--skyhook', DEMO, '--node', 'node-b')).code).toBe(1);
    await ok('package', 'rerun', 'motd', '--skyhook', DEMO, '--node', 'node-b', '--stage', 'config', '--yes');
    expect((await readNode('node-b')).metadata?.annotations?.[STATE]).toBe(motdEntry('config', 'in_progress'));
    await ok('package', 'rerun', 'motd', '--skyhook', DEMO, '--node', 'node-b', '--yes');
    expect((await readNode('node-b')).metadata?.annotations?.[STATE]).toBe('{}');
    expect((await readNode('node-a')).metadata?.annotations?.[STATE]).toBe(motdEntry('config', 'complete'));
    const bad = await skyhookCli(
      'package',
      'rerun',
      'motd',
      '--skyhook',
      DEMO,
      '--node',
      'node-b',
      '--stage',
      'bogus',
      '--yes',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--stage must be one of apply, config, interrupt, post-interrupt');
  });

  it('node reset removes the Skyhook state from the matching nodes only', async () => {
    await mergePatchNode(core, 'node-a', { metadata: { annotations: { [nodeAnnotations.nodeState('other')]: '{}' } } });
    await ok('node', 'reset', 'node-a', '--skyhook', DEMO, '--yes');
    const a = await readNode('node-a');
    for (const key of [
      STATE,
      nodeAnnotations.status(DEMO),
      nodeAnnotations.version(DEMO),
      nodeAnnotations.cordon(DEMO),
    ])
      expect(a.metadata?.annotations?.[key]).toBeUndefined();
    expect(a.metadata?.labels?.[nodeLabels.status(DEMO)]).toBeUndefined();
    expect(a.metadata?.annotations?.[nodeAnnotations.nodeState('other')]).toBe('{}');
    expect((await readNode('node-b')).metadata?.annotations?.[nodeAnnotations.cordon(DEMO)]).toBe('true');
  });

  it('reset clears every node of the Skyhook and restarts its batches; deployment-policy reset restarts the batches only', async () => {
    await writeDemoState('node-a');
    const batchState = {
      currentBatch: 3,
      consecutiveFailures: 1,
      completedNodes: 2,
      failedNodes: 1,
      shouldStop: true,
      lastBatchSize: 2,
      lastBatchFailed: true,
    };
    const setStatus = (currentBatch: number) =>
      kubectl([
        'patch',
        'skyhook',
        DEMO,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: {
            nodePriority: { 'node-a': '2025-01-01T00:00:00Z' },
            compartmentStatuses: {
              __default__: {
                matched: 5,
                ceiling: 5,
                inProgress: 0,
                completed: 2,
                progressPercent: 40,
                batchState: { ...batchState, currentBatch },
              },
            },
          },
        }),
      ]);
    await setStatus(3);
    expect((await skyhookCli('reset', DEMO)).code).toBe(1);
    await ok('reset', DEMO, '--yes');
    for (const name of ['node-a', 'node-b']) {
      const node = await readNode(name);
      expect(Object.keys(node.metadata?.annotations ?? {}).filter((key) => key.endsWith(`_${DEMO}`))).toEqual([]);
      expect(node.metadata?.labels?.[nodeLabels.status(DEMO)]).toBeUndefined();
    }
    let status = (await readSkyhook(DEMO)).status;
    expect(status?.compartmentStatuses?.['__default__']?.batchState).toEqual({
      currentBatch: 1,
      consecutiveFailures: 0,
      completedNodes: 0,
      failedNodes: 0,
      shouldStop: false,
      lastBatchSize: 0,
      lastBatchFailed: false,
    });
    expect(status?.nodePriority).toBeUndefined();

    await setStatus(4);
    await ok('dp', 'reset', DEMO, '--dry-run');
    expect((await readSkyhook(DEMO)).status?.compartmentStatuses?.['__default__']?.batchState?.currentBatch).toBe(4);
    await ok('deployment-policy', 'reset', DEMO, '--yes');
    status = (await readSkyhook(DEMO)).status;
    expect(status?.compartmentStatuses?.['__default__']?.batchState?.currentBatch).toBe(1);
    expect(status?.nodePriority).toEqual({ 'node-a': '2025-01-01T00:00:00Z' });
  });

  it('package logs prints the log of each stage Job of the package on the node, or of one stage', async () => {
    const skyhook = await readSkyhook(DEMO);
    const settings = readSkyhookSettings({}, NAMESPACE);
    const jobs = await Promise.all(
      (['apply', 'config'] as const).map(async (stage) => {
        const nodeOp: NodeOp = buildStageNodeOp({
          op: {
            kind: 'createStageOp',
            skyhook: DEMO,
            node: 'node-a',
            package: { name: 'motd', version: '1.1.0', image: 'ghcr.io/nvidia/skyhook-packages/shellscript' },
            stage,
            previousRestarts: 0,
          },
          skyhook,
          settings,
        });
        nodeOp.metadata.uid = `uid-${stage}`;
        const job: V1Job = buildNodeJob({
          nodeOp,
          node: 'node-a',
          jobName: nodeJobName(nodeOp.metadata.name ?? '', `uid-${stage}`, 'node-a'),
          // No operator runs here: the Job controller runs these Jobs.
          settings: readNodeOpSettings({ NODEOP_JOB_RUNNER: 'kubernetes' }),
          writesSentinel: false,
        });
        // The NodeOp is not created, so no owner: the garbage collector would delete the Job at once.
        delete job.metadata!.ownerReferences;
        return (await cp.kubeConfig.makeApiClient(BatchV1Api).createNamespacedJob({ namespace: NAMESPACE, body: job }))
          .metadata!.name!;
      }),
    );
    await waitForList<V1Job>(
      cp.kubeConfig,
      `/apis/batch/v1/namespaces/${NAMESPACE}/jobs`,
      (all) => all.filter((job) => (job.status?.succeeded ?? 0) > 0).length === 2,
      60_000,
      'both stage Jobs to succeed',
    );

    const all = await ok('package', 'logs', 'motd', '--skyhook', DEMO, '--node', 'node-a');
    for (const [i, stage] of ['apply', 'config'].entries()) {
      expect(all).toContain(`==> node node-a · stage ${stage} · job ${jobs[i]} · pod ${jobs[i]}-`);
      expect(all).toMatch(
        new RegExp(
          `stage ${stage} · job ${jobs[i]} · pod \\S+ · container motd-${stage}check <==\\n${SIMULATED_LOG_LINE}\\n`,
        ),
      );
    }
    const config = JSON.parse(
      await ok('package', 'logs', 'motd', '--skyhook', DEMO, '--stage', 'config', '-o', 'json'),
    ) as { job: string; stage: string; container: string; log: string }[];
    expect(new Set(config.map((entry) => entry.job))).toEqual(new Set([jobs[1]]));
    expect(config.map((entry) => entry.container)).toEqual(['motd-init', 'motd-config', 'motd-configcheck', 'nodeop']);
    expect(config.every((entry) => entry.log === `${SIMULATED_LOG_LINE}\n`)).toBe(true);
    // -f follows each container until it ends; these have ended, so it prints the same logs and exits.
    const followed = await ok('package', 'logs', 'motd', '--skyhook', DEMO, '--node', 'node-a', '-f');
    expect(followed).toBe(all);
    const none = await skyhookCli('package', 'logs', 'motd', '--skyhook', DEMO, '--node', 'node-b');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'no stage pods in namespace skyhook for Skyhook demo, package motd (version 1.1.0), node node-b',
    );
  }, 90_000);
});
