/**
 * The pure builders of a NodeOp's Job and reboot pod: pinning, privileges, host mount, limits,
 * labels and owner; the operation in init containers and the sentinel after it when an interrupt
 * follows; the reboot script's once-only behaviour, run for real in a shell with a stub nsenter.
 */
import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readSettings } from '../../../src/agent/settings.js';
import { CHILD_LABELS, NODEOP_NAMES } from '../../../src/api/names.js';
import type { NodeOp, NodeOpSpec } from '../../../src/api/nodeop.js';
import type { Skyhook } from '../../../src/api/skyhook.js';
import { readSkyhookSettings } from '../../../src/controllers/skyhook/skyhook-settings.js';
import { buildStageNodeOp, NODE_METADATA_MOUNT } from '../../../src/controllers/skyhook/build/stage-nodeop.js';
import { interruptPlanFor } from '../../../src/templates/interrupt-plan.js';
import { buildNodeJob, OPERATION_CONTAINER, SENTINEL_CONTAINER } from '../../../src/templates/nodeop-job.js';
import { readNodeOpSettings } from '../../../src/templates/nodeop-settings.js';
import { labelValue, nodeJobName, rebootPodName } from '../../../src/templates/object-names.js';
import { buildRebootPod, rebootScript } from '../../../src/templates/reboot-pod.js';

const settings = readNodeOpSettings({});
const commands = readSettings({}).interruptCommands;

function nodeOp(spec: Partial<NodeOpSpec> = {}): NodeOp {
  return {
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'NodeOp',
    metadata: { name: 'upgrade', namespace: 'ops', uid: 'uid-1' },
    spec: { command: ['/bin/sh', '-c', 'do-it'], ...spec },
  };
}

describe('names', () => {
  it('gives each NodeOp and node one Job name of at most 63 chars that changes with the NodeOp UID', () => {
    const name = nodeJobName('upgrade', 'uid-1', 'worker.example.com');
    expect(name).toBe(nodeJobName('upgrade', 'uid-1', 'worker.example.com'));
    expect(name).toMatch(/^upgrade-worker-example-com-[0-9a-f]{8}$/);
    expect(nodeJobName('upgrade', 'uid-2', 'worker.example.com')).not.toBe(name);
    const long = nodeJobName('x'.repeat(200), 'uid-1', 'n'.repeat(200));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(rebootPodName(name)).toBe(`${name}-reboot`);
  });

  it('keeps label values valid and distinct', () => {
    expect(labelValue('short')).toBe('short');
    const a = labelValue(`${'a'.repeat(70)}1`);
    const b = labelValue(`${'a'.repeat(70)}2`);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
  });
});

describe('buildNodeJob', () => {
  it("is run by the NodeOp controller (spec.managedBy), unless NODEOP_JOB_RUNNER=kubernetes leaves it to Kubernetes' Job controller", () => {
    const input = { nodeOp: nodeOp(), node: 'n1', jobName: 'j', writesSentinel: false };
    expect(buildNodeJob({ ...input, settings }).spec?.managedBy).toBe('skyhook.nvidia.com/nodeop-controller');
    const builtIn = readNodeOpSettings({ NODEOP_JOB_RUNNER: 'kubernetes' });
    expect(buildNodeJob({ ...input, settings: builtIn }).spec?.managedBy).toBeUndefined();
    expect(() => readNodeOpSettings({ NODEOP_JOB_RUNNER: 'kubelet' })).toThrow(
      /NODEOP_JOB_RUNNER must be 'operator' or 'kubernetes', got 'kubelet'/,
    );
  });

  it("gets backoffLimit 0 when Kubernetes' Job controller runs it and a reboot follows: the operator asks the reboot pod before any retry", () => {
    const input = { nodeOp: nodeOp({ backoffLimit: 3 }), node: 'n1', jobName: 'j', writesSentinel: true };
    const builtIn = readNodeOpSettings({ NODEOP_JOB_RUNNER: 'kubernetes' });
    expect(buildNodeJob({ ...input, settings: builtIn, rebootsNode: true }).spec?.backoffLimit).toBe(0);
    expect(buildNodeJob({ ...input, settings: builtIn, rebootsNode: false }).spec?.backoffLimit).toBe(3);
    expect(buildNodeJob({ ...input, settings, rebootsNode: true }).spec?.backoffLimit).toBe(3);
  });

  it('runs the command as the main container, pinned, privileged, with the host root mounted, without an interrupt', () => {
    const job = buildNodeJob({
      nodeOp: nodeOp({ image: 'busybox:1.37' }),
      node: 'n1',
      jobName: 'j',
      settings,
      writesSentinel: false,
    });
    const pod = job.spec?.template.spec;
    expect(job.metadata?.name).toBe('j');
    expect(pod?.nodeName).toBe('n1');
    expect(pod?.restartPolicy).toBe('Never');
    expect(pod?.initContainers).toBeUndefined();
    expect(pod?.containers.map((c) => c.name)).toEqual([OPERATION_CONTAINER]);
    const main = pod?.containers[0];
    expect(main?.command).toEqual(['/bin/sh', '-c', 'do-it']);
    expect(main?.image).toBe('busybox:1.37');
    expect(main?.securityContext?.privileged).toBe(true);
    // A failure's log tail is kept in the pod's status, whatever becomes of the log file.
    expect(main?.terminationMessagePolicy).toBe('FallbackToLogsOnError');
    expect(main?.volumeMounts).toContainEqual(expect.objectContaining({ name: 'host-root', mountPath: '/host' }));
    expect(main?.env).toContainEqual({ name: 'HOST_DIR', value: '/host' });
    expect(pod?.volumes).toEqual([{ name: 'host-root', hostPath: { path: '/' } }]);
    expect(job.spec?.backoffLimit).toBe(6);
    // Created with the success TTL (1 h); the controller lengthens it to 24 h when the Job fails.
    expect(job.spec?.ttlSecondsAfterFinished).toBe(3600);
    expect(settings.jobTtlFailedSeconds).toBe(86_400);
    expect(job.spec?.suspend).toBeUndefined();
    expect(job.spec?.activeDeadlineSeconds).toBeUndefined();
    expect(job.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'skyhook.nvidia.com/v1alpha1',
        kind: 'NodeOp',
        name: 'upgrade',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it('creates the Job suspended for a held NodeOp', () => {
    const job = buildNodeJob({
      nodeOp: nodeOp(),
      node: 'n1',
      jobName: 'j',
      settings,
      writesSentinel: false,
      suspend: true,
    });
    expect(job.spec?.suspend).toBe(true);
  });

  it("reads the Job TTLs as upstream's durations and refuses less than a minute", () => {
    expect(readNodeOpSettings({ JOB_TTL_SUCCEEDED: '90m', JOB_TTL_FAILED: '48h' })).toMatchObject({
      jobTtlSucceededSeconds: 5400,
      jobTtlFailedSeconds: 172_800,
    });
    expect(() => readNodeOpSettings({ JOB_TTL_FAILED: '30s' })).toThrow(/JOB_TTL_FAILED must be at least 1m/);
  });

  it('moves the operation into init containers after the init steps and writes the sentinel in the main container when an interrupt follows', () => {
    const spec: Partial<NodeOpSpec> = {
      initSteps: [
        {
          name: 'copy',
          image: 'pkg:1',
          command: ['cp'],
          resources: { cpuRequest: '100m', cpuLimit: '200m', memoryRequest: '10Mi', memoryLimit: '20Mi' },
        },
      ],
      hostMountPath: '/root',
      backoffLimit: 2,
      imagePullSecrets: [{ name: 'regcred' }],
      tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
      stageTimeout: '1m30s',
    };
    const job = buildNodeJob({ nodeOp: nodeOp(spec), node: 'n1', jobName: 'j-1', settings, writesSentinel: true });
    const pod = job.spec?.template.spec;
    expect(pod?.initContainers?.map((c) => c.name)).toEqual(['copy', OPERATION_CONTAINER]);
    expect(pod?.initContainers?.[0]?.resources).toEqual({
      requests: { cpu: '100m', memory: '10Mi' },
      limits: { cpu: '200m', memory: '20Mi' },
    });
    expect(pod?.initContainers?.[1]?.image).toBe(settings.defaultImage);
    expect(pod?.initContainers?.every((c) => c.volumeMounts?.some((m) => m.mountPath === '/root'))).toBe(true);
    const sentinel = pod?.containers[0];
    expect(sentinel?.name).toBe(SENTINEL_CONTAINER);
    expect(sentinel?.env).toEqual([{ name: 'JOB_NAME', value: 'j-1' }]);
    expect(sentinel?.command?.[2]).toContain('/sentinel/$JOB_NAME');
    expect(pod?.volumes).toContainEqual({
      name: 'sentinel',
      hostPath: { path: NODEOP_NAMES.sentinelHostDir, type: 'DirectoryOrCreate' },
    });
    expect(pod?.tolerations).toEqual([
      { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    expect(pod?.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(job.spec?.backoffLimit).toBe(2);
    expect(job.spec?.activeDeadlineSeconds).toBe(90);
  });

  it('labels Jobs and pods with the NodeOp, node and childLabels (a Skyhook stage: skyhook, package and stage); host network and ConfigMap mounts on request', () => {
    const job = buildNodeJob({
      nodeOp: nodeOp({
        targetNodes: ['n1'],
        childLabels: {
          [CHILD_LABELS.name]: 'demo',
          [CHILD_LABELS.package]: 'tuning-1.2.3',
          [CHILD_LABELS.stage]: 'apply',
          // The NodeOp's own labels win.
          [NODEOP_NAMES.nodeOpLabel]: 'other',
        },
        hostNetwork: true,
        configMapMounts: [
          { name: 'package-config', configMap: 'demo-tuning-1.2.3', mountPath: '/skyhook-package/configmaps' },
        ],
      }),
      node: 'n1',
      jobName: 'j',
      settings,
      writesSentinel: false,
    });
    const expected = {
      [NODEOP_NAMES.nodeOpLabel]: 'upgrade',
      [CHILD_LABELS.node]: 'n1',
      [CHILD_LABELS.name]: 'demo',
      [CHILD_LABELS.package]: 'tuning-1.2.3',
      [CHILD_LABELS.stage]: 'apply',
    };
    expect(job.metadata?.labels).toEqual(expected);
    expect(Object.keys(job.metadata?.labels ?? {})).toEqual(Object.keys(expected));
    expect(job.spec?.template.metadata?.labels).toEqual(expected);
    expect(job.spec?.template.spec?.hostNetwork).toBe(true);
    expect(job.spec?.template.spec?.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(job.spec?.template.spec?.volumes).toContainEqual({
      name: 'package-config',
      configMap: { name: 'demo-tuning-1.2.3' },
    });
    const plain = buildNodeJob({ nodeOp: nodeOp(), node: 'n1', jobName: 'j', settings, writesSentinel: false });
    expect(plain.spec?.template.spec?.hostNetwork).toBeUndefined();
    expect(plain.spec?.template.spec?.dnsPolicy).toBeUndefined();
  });

  it("mounts the node's metadata ConfigMap read-only at /skyhook-package/node-metadata in every host container, not the sentinel", () => {
    const configMapMounts = [
      { name: 'node-metadata', configMap: 'demo-n1-metadata-0123abcd', mountPath: NODE_METADATA_MOUNT },
    ];
    const initSteps = [{ name: 'tuning-init' }, { name: 'tuning-apply' }, { name: 'tuning-applycheck' }];
    const mount = { name: 'node-metadata', mountPath: NODE_METADATA_MOUNT, readOnly: true };
    for (const writesSentinel of [false, true]) {
      const job = buildNodeJob({
        nodeOp: nodeOp({ targetNodes: ['n1'], initSteps, configMapMounts }),
        node: 'n1',
        jobName: 'j',
        settings,
        writesSentinel,
      });
      const pod = job.spec?.template.spec;
      expect(pod?.volumes?.filter((v) => v.name === 'node-metadata')).toEqual([
        { name: 'node-metadata', configMap: { name: 'demo-n1-metadata-0123abcd' } },
      ]);
      const host = [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])].filter(
        (c) => c.name !== SENTINEL_CONTAINER,
      );
      expect(host.map((c) => c.name)).toEqual([
        'tuning-init',
        'tuning-apply',
        'tuning-applycheck',
        OPERATION_CONTAINER,
      ]);
      for (const container of host) expect(container.volumeMounts).toContainEqual(mount);
      const sentinel = pod?.containers?.find((c) => c.name === SENTINEL_CONTAINER);
      expect(sentinel === undefined || !sentinel.volumeMounts?.some((m) => m.name === 'node-metadata')).toBe(true);
    }
    expect(NODE_METADATA_MOUNT).toBe('/skyhook-package/node-metadata');
    const without = buildNodeJob({
      nodeOp: nodeOp({ targetNodes: ['n1'], initSteps }),
      node: 'n1',
      jobName: 'j',
      settings,
      writesSentinel: false,
    });
    expect(without.spec?.template.spec?.volumes?.some((v) => v.name === 'node-metadata')).toBe(false);
    expect(
      without.spec?.template.spec?.initContainers?.every(
        (c) => !c.volumeMounts?.some((m) => m.mountPath === NODE_METADATA_MOUNT),
      ),
    ).toBe(true);
  });

  it("gives every container of a Skyhook stage's Job the package's resources, the copy container and the main one included", () => {
    const resources = { cpuRequest: '50m', cpuLimit: '100m', memoryRequest: '32Mi', memoryLimit: '64Mi' };
    const skyhook: Skyhook = {
      apiVersion: 'skyhook.nvidia.com/v1alpha1',
      kind: 'Skyhook',
      metadata: { name: 'res', uid: 'u' },
      spec: { packages: { small: { version: '1.0.0', image: 'pkg', resources } } },
    };
    const want = { requests: { cpu: '50m', memory: '32Mi' }, limits: { cpu: '100m', memory: '64Mi' } };
    for (const [stage, writesSentinel] of [
      ['apply', false],
      ['config', true],
      ['interrupt', true],
    ] as const) {
      const op = buildStageNodeOp({
        op: {
          kind: 'createStageOp',
          skyhook: 'res',
          node: 'n1',
          stage,
          previousRestarts: 0,
          package: { name: 'small', version: '1.0.0', image: 'pkg' },
          ...(stage === 'interrupt' ? { interrupt: { type: 'reboot' as const } } : {}),
        },
        skyhook,
        settings: readSkyhookSettings({}, 'skyhook'),
      });
      const served = { ...op, metadata: { ...op.metadata, uid: 'op-uid' } };
      const pod = buildNodeJob({ nodeOp: served, node: 'n1', jobName: 'j', settings, writesSentinel }).spec?.template
        .spec;
      const all = [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])];
      expect(all.map((c) => c.name)).toContain('small-init');
      for (const container of all)
        expect([stage, container.name, container.resources]).toEqual([stage, container.name, want]);
    }
    // Without package resources no container sets any (the namespace's LimitRange applies, as upstream).
    const plain = buildStageNodeOp({
      op: {
        kind: 'createStageOp',
        skyhook: 'res',
        node: 'n1',
        stage: 'apply',
        previousRestarts: 0,
        package: { name: 'small', version: '1.0.0', image: 'pkg' },
      },
      skyhook: { ...skyhook, spec: { packages: { small: { version: '1.0.0', image: 'pkg' } } } },
      settings: readSkyhookSettings({}, 'skyhook'),
    });
    const pod = buildNodeJob({
      nodeOp: { ...plain, metadata: { ...plain.metadata, uid: 'op-uid' } },
      node: 'n1',
      jobName: 'j',
      settings,
      writesSentinel: false,
    }).spec?.template.spec;
    for (const container of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])])
      expect(container.resources).toBeUndefined();
  });
});

describe('interrupt plans', () => {
  it('reboots for rebootOnSuccess and maps Skyhook interrupts to the agent commands', () => {
    expect(interruptPlanFor(nodeOp().spec, commands)).toBeUndefined();
    expect(interruptPlanFor(nodeOp({ rebootOnSuccess: true }).spec, commands)).toEqual({
      commands: [['reboot']],
      rebootsNode: true,
    });
    const stage = (interrupt: NodeOpSpec['interrupt']): NodeOpSpec => nodeOp({ interrupt }).spec;
    expect(interruptPlanFor(stage({ type: 'service', services: ['containerd', 'cron'] }), commands)).toEqual({
      commands: [
        ['systemctl', 'daemon-reload'],
        ['systemctl', 'restart', 'containerd'],
        ['systemctl', 'restart', 'cron'],
      ],
      rebootsNode: false,
    });
    expect(interruptPlanFor(stage({ type: 'noop' }), commands)).toEqual({ commands: [], rebootsNode: false });
  });
});

describe('buildRebootPod', () => {
  const plan = { commands: [['systemctl', 'reboot']], rebootsNode: true };
  const pod = buildRebootPod({
    nodeOp: nodeOp({ rebootOnSuccess: true, imagePullSecrets: [{ name: 'regcred' }] }),
    node: 'n1',
    jobName: 'j-1',
    plan,
    settings,
  });

  it('is pinned, survives node taints, reaches the host PID 1, needs no API access and says what it will run', () => {
    expect(pod.metadata?.name).toBe('j-1-reboot');
    expect(pod.metadata?.labels).toMatchObject({
      [NODEOP_NAMES.rebootLabel]: 'true',
      [NODEOP_NAMES.nodeOpLabel]: 'upgrade',
      [CHILD_LABELS.node]: 'n1',
    });
    expect(pod.metadata?.annotations).toEqual({
      [NODEOP_NAMES.jobAnnotation]: 'j-1',
      [NODEOP_NAMES.interruptAnnotation]: JSON.stringify(plan),
    });
    expect(pod.spec?.nodeName).toBe('n1');
    expect(pod.spec?.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.spec?.restartPolicy).toBe('OnFailure');
    expect(pod.spec?.hostPID).toBe(true);
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
    expect(pod.spec?.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(pod.spec?.containers[0]?.securityContext?.privileged).toBe(true);
    expect(pod.spec?.containers[0]?.command?.[2]).toContain('nsenter -t 1 -m -u -i -n -p -- systemctl reboot');
  });
});

describe('the reboot script, run in a shell', () => {
  const exec = promisify(execFile);

  /** The script with its sentinel dir moved to a temp dir and nsenter replaced by a stub that logs and runs the command. */
  function prepare(): { sentinelDir: string; run: () => Promise<{ stdout: string }>; log: string } {
    const dir = mkdtempSync(join(tmpdir(), 'reboot-script-'));
    const sentinelDir = join(dir, 'sentinel');
    const bin = join(dir, 'bin');
    const log = join(dir, 'commands.log');
    mkdirSync(sentinelDir);
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'nsenter'),
      `#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift\necho "$@" >> ${log}\nexec "$@"\n`,
    );
    chmodSync(join(bin, 'nsenter'), 0o755);
    const script = rebootScript({ commands: [['echo', 'it is done']], rebootsNode: false }).replaceAll(
      '/sentinel',
      sentinelDir,
    );
    const env = { PATH: `${bin}:${process.env['PATH'] ?? ''}`, JOB_NAME: 'j-1' };
    return { sentinelDir, log, run: () => exec('/bin/sh', ['-c', script], { env, timeout: 10_000 }) };
  }

  it('runs the commands once after the sentinel appears, and exits 0 without running them again when restarted', async () => {
    const { sentinelDir, run, log } = prepare();
    // A sentinel of another Job whose name merely starts alike is not ours.
    writeFileSync(join(sentinelDir, 'j-1-other'), '');
    const first = run();
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(log)).toBe(false);
    writeFileSync(join(sentinelDir, 'j-1'), 'Job j-1 succeeded');
    expect((await first).stdout).toContain('interrupt done');
    expect(readFileSync(log, 'utf8')).toBe('echo it is done\n');
    expect(existsSync(join(sentinelDir, 'j-1'))).toBe(false);
    expect(readFileSync(join(sentinelDir, 'j-1.done'), 'utf8').trim()).toBe(
      readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    );

    // The kubelet's restart after the reboot: the marker makes it finish at once.
    const again = await run();
    expect(again.stdout).toContain('already ran');
    expect(readFileSync(log, 'utf8')).toBe('echo it is done\n');
  }, 20_000);
});

describe('terminationGracePeriodSeconds', () => {
  const plan = { commands: [['systemctl', 'reboot']], rebootsNode: true };
  it("is the grace period of every pod of the node: the Job's and the reboot pod", () => {
    const op = nodeOp({ rebootOnSuccess: true, terminationGracePeriodSeconds: 46 });
    const job = buildNodeJob({ nodeOp: op, node: 'n1', jobName: 'j', settings, writesSentinel: true });
    expect(job.spec?.template.spec?.terminationGracePeriodSeconds).toBe(46);
    const pod = buildRebootPod({ nodeOp: op, node: 'n1', jobName: 'j', plan, settings });
    expect(pod.spec?.terminationGracePeriodSeconds).toBe(46);
  });

  it("leaves Kubernetes' default to the Job pods when unset", () => {
    const job = buildNodeJob({ nodeOp: nodeOp(), node: 'n1', jobName: 'j', settings, writesSentinel: false });
    expect(job.spec?.template.spec?.terminationGracePeriodSeconds).toBeUndefined();
  });
});
