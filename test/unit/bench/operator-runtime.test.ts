/**
 * The operator Deployment's runtime settings (NODE_OPTIONS, MALLOC_*): the V8 heap fits the
 * container's memory limit, and the benchmarks read exactly these settings from the manifest.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { MANAGER_MANIFEST, nodeOptionMb, operatorRuntimeOf, quantityToMb } from '../../../bench/operator-runtime.js';

const manifest = readFileSync(MANAGER_MANIFEST, 'utf8');

/** A minimal Deployment with one container `operator`. */
function deployment(env: string, limits = ''): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    spec:
      containers:
        - name: sidecar
          env: [{name: NODE_OPTIONS, value: --wrong}]
        - name: operator
          env:
${env}
${limits}`;
}

describe('config/manager/manager.yaml runtime settings', () => {
  const runtime = operatorRuntimeOf(manifest);
  const nodeOptions = runtime.env['NODE_OPTIONS'] ?? '';

  it('caps the old generation and the young generation explicitly (V8 would size them from the host)', () => {
    expect(nodeOptionMb(nodeOptions, 'max-old-space-size')).toBeGreaterThan(0);
    expect(nodeOptionMb(nodeOptions, 'max-semi-space-size')).toBeGreaterThan(0);
    expect(runtime.env['MALLOC_ARENA_MAX']).toBe('2');
  });

  it('leaves a quarter of the memory limit for code, native memory and the node binary', () => {
    expect(runtime.memoryLimitMb).toBeDefined();
    // V8 reserves three semi-spaces for the young generation (two and the new large-object space).
    const heapMb =
      nodeOptionMb(nodeOptions, 'max-old-space-size')! + 3 * nodeOptionMb(nodeOptions, 'max-semi-space-size')!;
    expect(heapMb).toBeLessThanOrEqual(0.75 * runtime.memoryLimitMb!);
  });

  it('are all options Node accepts in NODE_OPTIONS (it refuses most V8 flags there and does not start)', () => {
    const result = spawnSync(process.execPath, ['-e', '0'], {
      env: { ...process.env, ...runtime.env },
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('requests no more than the limit', () => {
    const requested = /requests:\s*\n\s*cpu: \S+\s*\n\s*memory: (\S+)/.exec(manifest)?.[1];
    expect(quantityToMb(requested ?? '0')).toBeLessThanOrEqual(runtime.memoryLimitMb!);
  });
});

describe('operatorRuntimeOf', () => {
  const env = `            - {name: NODE_OPTIONS, value: --max-old-space-size=300 --max-semi-space-size=8}
            - {name: MALLOC_ARENA_MAX, value: "2"}
            - {name: LOG_LEVEL, value: info}
            - name: NAMESPACE
              valueFrom: {fieldRef: {fieldPath: metadata.namespace}}`;
  const text = deployment(env, '          resources: {limits: {memory: 1Gi}}');

  it("takes the operator container's runtime env entries and memory limit, nothing else", () => {
    expect(operatorRuntimeOf(text)).toEqual({
      env: { NODE_OPTIONS: '--max-old-space-size=300 --max-semi-space-size=8', MALLOC_ARENA_MAX: '2' },
      memoryLimitMb: 1024,
      overrides: [],
    });
  });

  it('applies the benchmark overrides and says so', () => {
    const changed = operatorRuntimeOf(text, {
      BENCH_OPERATOR_HEAP_MB: '128',
      BENCH_OPERATOR_NODE_OPTIONS: '--heapsnapshot-signal=SIGUSR2',
    });
    expect(changed.env['NODE_OPTIONS']).toBe(
      '--max-semi-space-size=8 --max-old-space-size=128 --heapsnapshot-signal=SIGUSR2',
    );
    expect(changed.overrides).toEqual([
      'BENCH_OPERATOR_HEAP_MB=128',
      'BENCH_OPERATOR_NODE_OPTIONS=--heapsnapshot-signal=SIGUSR2',
    ]);
    expect(operatorRuntimeOf(deployment('            []'), { BENCH_OPERATOR_HEAP_MB: '64' }).env).toEqual({
      NODE_OPTIONS: '--max-old-space-size=64',
    });
  });

  it('reads quantities and flag values', () => {
    expect(quantityToMb('512Mi')).toBe(512);
    expect(quantityToMb('1G')).toBeCloseTo(953.67, 1);
    expect(nodeOptionMb('--a --max-old-space-size 96 --b', 'max-old-space-size')).toBe(96);
    expect(nodeOptionMb('--max-old-space-size=96', 'max-semi-space-size')).toBeUndefined();
    expect(() => quantityToMb('lots')).toThrow('not a memory quantity');
  });
});
