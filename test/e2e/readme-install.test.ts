/**
 * The README's install, verify, first-Skyhook, watch and uninstall commands, exactly as written,
 * against the local control plane: each is read from README.md's fenced block marked
 * `<!-- readme-test: NAME -->` and run by bash, so a README edit that breaks a command fails here.
 * Round one installs with kustomize, round two with Helm; each verifies, runs the demo Skyhook to
 * completion, watches it and uninstalls, and the test checks what the README promises of each step.
 *
 * What stands in for a real cluster: nodes are simulated (KWOK), so the operator Deployment's pods
 * are scheduled and become Ready but run no code. The operator they would run, `skyhook operator`
 * from dist/ with leader election in namespace skyhook, runs as a child process of this test from
 * each install to its uninstall. `<node>` in the README is replaced by a node's name. The image build
 * (`docker build`) is not run: KWOK pulls nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LEASE_NAME } from '../../src/cli/operator.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { findHelm, REPO_ROOT } from '../helm-binary.js';
import { waitForValue } from './eventually.js';

const NS = 'skyhook';
const NODES = ['node-0', 'node-1', 'node-2'];
const CRDS = ['skyhooks', 'deploymentpolicies', 'nodeops', 'disruptionbudgets', 'maintenancepolicies'].map(
  (plural) => `${plural}.skyhook.nvidia.com`,
);

/** The README's marked blocks by name: `<!-- readme-test: NAME -->` right before a fenced block. */
function readmeBlocks(readme: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const match of readme.matchAll(/<!-- readme-test: ([a-z-]+) -->\n```[a-z]*\n([\s\S]*?)\n```/g))
    blocks.set(match[1]!, match[2]!);
  return blocks;
}

let cp: ControlPlane;
let operator: ChildProcess | undefined;
const blocks = readmeBlocks(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'));

/** Runs one README block in bash with the cluster's kubectl and helm first on PATH; resolves to its stdout. */
function runBlock(name: string, node = NODES[0]!): Promise<string> {
  const block = blocks.get(name);
  if (block === undefined) throw new Error(`README.md has no block marked <!-- readme-test: ${name} -->`);
  const script = block.replaceAll('<node>', node);
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      KUBECONFIG: cp.kubeconfigPath,
      PATH: [dirname(cp.binaries.kubectl), dirname(findHelm()), process.env['PATH']].join(':'),
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(`README block ${name} failed (${code}):\n${script}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`),
        );
    });
  });
}

async function kubectl(args: string[]): Promise<{ code: number; stdout: string }> {
  return cp.kubectl(args);
}

/** The operator the Deployment would run, as this test's child; ready once it holds the leader Lease. */
async function startOperator(): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'bin/skyhook.js'),
      'operator',
      '--kubeconfig',
      cp.kubeconfigPath,
      '--namespace',
      NS,
      '--health-port',
      '127.0.0.1:0',
      '--metrics-port',
      '127.0.0.1:0',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  operator = child;
  return waitForValue(
    `the operator holding Lease ${NS}/${LEASE_NAME}`,
    async () => {
      if (child.exitCode !== null) throw new Error(`skyhook operator exited with ${child.exitCode}`);
      const lease = await kubectl(['-n', NS, 'get', 'lease', LEASE_NAME, '-o', 'jsonpath={.spec.holderIdentity}']);
      return lease.code === 0 && lease.stdout !== '' ? lease.stdout : undefined;
    },
    { timeoutMs: 60_000 },
  );
}

async function stopOperator(): Promise<void> {
  const child = operator;
  operator = undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

async function nodeAnnotations(node: string): Promise<Record<string, string>> {
  const result = await kubectl(['get', 'node', node, '-o', 'jsonpath={.metadata.annotations}']);
  return JSON.parse(result.stdout || '{}') as Record<string, string>;
}

beforeAll(async () => {
  cp = await startControlPlane({ nodes: NODES.length, podDurationMs: 250 });
}, 180_000);

afterAll(async () => {
  await stopOperator();
  await cp?.stop();
}, 120_000);

describe('the README, as a new user follows it, on the local control plane', () => {
  it('marks every step the test runs', () => {
    expect([...blocks.keys()].sort()).toEqual(
      [
        'first-skyhook',
        'install-helm',
        'install-kustomize',
        'uninstall-helm',
        'uninstall-kustomize',
        'verify',
        'watch',
      ].sort(),
    );
  });

  it('kustomize: install, verify, a first Skyhook to completion, watch, uninstall', async () => {
    await runBlock('install-kustomize');
    const image = await kubectl([
      '-n',
      NS,
      'get',
      'deploy',
      'skyhook-operator',
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    ]);
    expect(image.stdout).toBe('registry.example/skyhook:0.1.0');

    const leader = await startOperator();
    // The five CRDs are Established and the Lease names the leading operator.
    expect(await runBlock('verify')).toContain(leader);

    await runBlock('first-skyhook', NODES[0]);
    const status = await kubectl(['get', 'skyhook', 'demo', '-o', 'jsonpath={.status.status} {.status.completeNodes}']);
    expect(status.stdout).toBe('complete 1/1');
    expect(Object.keys(await nodeAnnotations(NODES[0]!))).toContain('skyhook.nvidia.com/nodeState_demo');

    const watched = await runBlock('watch');
    expect(watched).toMatch(/demo\s+complete/);
    expect(watched).toContain('nodeop.skyhook.nvidia.com/');

    await runBlock('uninstall-kustomize');
    await stopOperator();
    // Deleting the Skyhook first cleared its state from the node; `delete -k` took the CRDs and namespace.
    expect(Object.keys(await nodeAnnotations(NODES[0]!)).filter((key) => key.includes('_demo'))).toEqual([]);
    for (const crd of CRDS) expect((await kubectl(['get', 'crd', crd])).code).not.toBe(0);
    expect((await kubectl(['get', 'namespace', NS])).code).not.toBe(0);
  }, 900_000);

  it('Helm: install, verify, a first Skyhook to completion, watch, uninstall keeping the CRDs', async () => {
    await runBlock('install-helm');
    const leader = await startOperator();
    expect(await runBlock('verify')).toContain(leader);

    await runBlock('first-skyhook', NODES[1]);
    const status = await kubectl(['get', 'skyhook', 'demo', '-o', 'jsonpath={.status.status} {.status.completeNodes}']);
    // The label of the first round stays on node-0 (a user's label): the demo selects both nodes.
    expect(status.stdout).toBe('complete 2/2');
    expect(await runBlock('watch')).toMatch(/demo\s+complete/);

    await runBlock('uninstall-helm');
    await stopOperator();
    expect((await kubectl(['get', 'skyhooks', '-o', 'name'])).stdout).toBe('');
    expect((await kubectl(['-n', NS, 'get', 'deploy', 'skyhook-operator'])).code).not.toBe(0);
    for (const crd of CRDS) expect((await kubectl(['get', 'crd', crd])).code).toBe(0);
    expect(Object.keys(await nodeAnnotations(NODES[1]!)).filter((key) => key.includes('_demo'))).toEqual([]);
  }, 900_000);
});
