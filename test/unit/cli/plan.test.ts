import { describe, it, expect } from '@jest/globals';
import { asApplied, planSkyhook, readSkyhookDocument } from '../../../src/cli/plan.js';
import { renderPlan } from '../../../src/cli/plan/render.js';
import { buildPlanReport, describeInterrupt, formatStages } from '../../../src/cli/plan/report.js';
import { simulateRollout } from '../../../src/cli/plan/simulation.js';
import { SKYHOOK_ANNOTATIONS } from '../../../src/api/names.js';
import { node, pkg, plannerInput, policy, scr, world } from '../controllers/skyhook/plan/world.js';

describe('plan simulation (the controller planner played forward)', () => {
  it('runs one node at a time with a budget of 1, in node age order, through every stage', () => {
    const spec = {
      interruptionBudget: { count: 1 },
      packages: { kernel: pkg('2.0.0', { interrupt: { type: 'reboot' as const } }) },
    };
    const w = world([scr('k', spec)], [node('n2', 2), node('n1', 1), node('n3', 3)]);
    const simulation = simulateRollout(plannerInput(w), 'k');
    expect(Object.fromEntries(Object.entries(simulation.nodes).map(([name, n]) => [name, n.batch]))).toEqual({
      n1: 1,
      n2: 2,
      n3: 3,
    });
    expect(simulation.nodes['n1']!.stages.map((s) => s.stage)).toEqual([
      'apply',
      'config',
      'interrupt',
      'post-interrupt',
    ]);
    expect(simulation.nodes['n1']!.stages[2]!.interrupt).toEqual({ type: 'reboot' });
    expect(simulation.statusOnApply).toEqual({ n1: 'in_progress', n2: 'waiting', n3: 'waiting' });
    expect(simulation.statusAtEnd).toEqual({ n1: 'complete', n2: 'complete', n3: 'complete' });
    expect(simulation.truncated).toBe(false);
    // The input is left as it was.
    expect(w.nodes.every((n) => Object.keys(n.annotations).length === 0)).toBe(true);
  });

  it('lets an earlier SCR finish on a node first, and never starts a paused one', () => {
    const first = scr('first', { priority: 1, packages: { a: pkg('1.0.0') } });
    const second = scr('second', { packages: { b: pkg('1.0.0') } });
    const started = simulateRollout(plannerInput(world([first, second], [node('n1')])), 'second');
    expect(started.statusOnApply).toEqual({ n1: 'waiting' });
    expect(started.nodes['n1']).toMatchObject({
      batch: 1,
      stages: [
        { package: 'b', stage: 'apply' },
        { package: 'b', stage: 'config' },
      ],
    });
    const paused = scr(
      'first',
      { priority: 1, packages: { a: pkg('1.0.0') } },
      { [SKYHOOK_ANNOTATIONS.pause]: 'true' },
    );
    const held = simulateRollout(plannerInput(world([paused, second], [node('n1')])), 'second');
    expect(held.nodes['n1']).toEqual({ stages: [], holds: ['HigherPrioritySkyhook: first'] });
    expect(held.statusAtEnd).toEqual({ n1: 'waiting' });
  });
});

describe('plan report', () => {
  it("names what holds each node in the planner's words: taint, ignore label, protected pod on a node to interrupt", () => {
    const spec = {
      podNonInterruptLabels: { matchLabels: { keep: 'me' } },
      packages: { kernel: pkg('2.0.0', { interrupt: { type: 'service' as const, services: ['containerd', 'cron'] } }) },
    };
    const target = scr('k', spec);
    const nodes = [node('ok', 1), node('tainted', 2), node('ignored', 3), node('free', 4), node('elsewhere', 5, {})];
    nodes[0]!.pods = [{ namespace: 'default', name: 'keep', phase: 'Running', labels: { keep: 'me' } }];
    nodes[1]!.taints = [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }];
    nodes[2]!.labels['skyhook.nvidia.com/ignore'] = 'true';
    nodes[3]!.pods = [];
    const report = buildPlanReport(
      target,
      nodes.map((n) => n.name),
      simulateRollout(plannerInput(world([target], nodes)), 'k'),
    );
    const byNode = Object.fromEntries(report.nodes.map((n) => [n.node, n]));
    expect(byNode['free']).toMatchObject({
      batch: 1,
      cordon: true,
      drain: true,
      interrupt: 'service(containerd, cron)',
      statusAtEnd: 'complete',
      blockers: [],
    });
    expect(byNode['free']!.stages).toBe('kernel:2.0.0 apply, config, interrupt, post-interrupt');
    expect(byNode['ok']).toMatchObject({
      cordon: true,
      statusAtEnd: 'in_progress',
      blockers: ['NonInterruptPodsRunning: default/keep'],
    });
    expect(byNode['ok']!.batch).toBe(1);
    expect(byNode['tainted']!.blockers).toEqual(['TaintNotTolerable: gpu=true:NoSchedule']);
    expect(byNode['ignored']!.blockers).toEqual(['NodeIgnored: label skyhook.nvidia.com/ignore=true']);
    expect(report).toMatchObject({
      selected: 4,
      total: 5,
      notSelected: ['elsewhere'],
      completes: false,
      compartments: [{ name: '__default__', matched: 4, ceiling: 4 }],
    });
    expect(renderPlan(report)).toContain('Held back:\n  ok       NonInterruptPodsRunning: default/keep\n');
  });

  it('formats stages by package and interrupts by type', () => {
    expect(
      formatStages([
        { package: 'a', version: '1', stage: 'apply' },
        { package: 'b', version: '2', stage: 'apply' },
        { package: 'a', version: '1', stage: 'config' },
      ]),
    ).toBe('a:1 apply, config; b:2 apply');
    expect(describeInterrupt({ type: 'reboot' })).toBe('reboot');
  });
});

describe('plan input', () => {
  it('reads one Skyhook, validated and defaulted, and names what is wrong', () => {
    const skyhook = readSkyhookDocument(
      'apiVersion: skyhook.nvidia.com/v1alpha1\nkind: Skyhook\nmetadata: {name: s}\nspec:\n  packages:\n    p: {version: 1.0.0, image: img}\n',
      'f.yaml',
    );
    expect(skyhook.spec.priority).toBe(200);
    expect(() => readSkyhookDocument('kind: ConfigMap\n', 'f.yaml')).toThrow(
      'f.yaml: expected exactly one document of kind Skyhook, found 0',
    );
    expect(() =>
      readSkyhookDocument(
        'apiVersion: skyhook.nvidia.com/v1alpha1\nkind: Skyhook\nmetadata: {name: s}\nspec: {priority: 0}\n',
        'f.yaml',
      ),
    ).toThrow(/f.yaml: the Skyhook is not valid:\n {2}spec.priority/);
  });

  it('keeps the live SCR status and annotations, and takes the spec from the file', () => {
    const live = scr('s', { priority: 5 }, { [SKYHOOK_ANNOTATIONS.pause]: 'true' });
    live.status = { status: 'in_progress' };
    const applied = asApplied(scr('s', { priority: 7 }), live);
    expect(applied.spec.priority).toBe(7);
    expect(applied.status).toEqual({ status: 'in_progress' });
    expect(applied.metadata.annotations).toEqual({ [SKYHOOK_ANNOTATIONS.pause]: 'true' });
  });
});

describe('plan with maintenance windows', () => {
  it('shows the windows, when the next opens, and plays the rollout on past the opening', () => {
    const skyhook = scr('k', {
      deploymentPolicy: 'p',
      packages: { kernel: pkg('2.0.0', { interrupt: { type: 'reboot' as const } }) },
    });
    const w = world([skyhook], [node('n1', 1)]);
    w.policies = [
      policy('p', {
        default: { budget: { count: 1 }, strategy: { fixed: {} } },
        maintenanceWindows: [{ days: ['sa'], start: '22:00', end: '04:00', timeZone: 'Europe/Berlin' }],
      }),
    ];
    w.now = Date.UTC(2026, 10, 24, 10, 0); // a Tuesday
    const report = planSkyhook({ skyhook, input: plannerInput(w) });
    expect(report.maintenanceWindows).toEqual({
      sources: ['DeploymentPolicy p: sa 22:00-04:00 Europe/Berlin'],
      open: false,
      closedNodes: 1,
      nextOpen: '2026-11-27T23:00:00Z',
    });
    expect(report.nodes[0]).toMatchObject({ node: 'n1', statusAtEnd: 'complete', interrupt: 'reboot' });
    expect(report.nodes[0]!.blockers).toEqual([
      'OutsideMaintenanceWindow: interrupts wait for a maintenance window (DeploymentPolicy "p": sa 22:00-04:00 Europe/Berlin); next opens 2026-11-27T23:00:00Z',
    ]);
    expect(renderPlan(report)).toContain(
      'Maintenance windows (DeploymentPolicy p: sa 22:00-04:00 Europe/Berlin): closed for 1 node(s), which start no interrupt before 2026-11-27T23:00:00Z.',
    );
  });
});

describe('plan and the cluster-wide DisruptionBudget', () => {
  it("shows a node waiting for the cluster budget, in the planner's words, while another actor holds its slot", () => {
    const spec = {
      interruptionBudget: { count: 2 },
      packages: { kernel: pkg('2.0.0', { interrupt: { type: 'reboot' as const } }) },
    };
    const target = scr('k', spec);
    const w = world([target], [node('n1', 1), node('n2', 2), node('n3', 3)]);
    // A NodeOp holds n3: the budget of 1 is used up until it is done.
    w.nodes[2]!.unschedulable = true;
    w.nodes[2]!.annotations['skyhook.nvidia.com/cordoned-by'] = 'default/op@uid';
    w.budgets = [
      {
        apiVersion: 'skyhook.nvidia.com/v1alpha1',
        kind: 'DisruptionBudget',
        metadata: { name: 'one' },
        spec: { maxDisrupted: { count: 1 } },
      },
    ];
    const report = buildPlanReport(
      target,
      w.nodes.map((n) => n.name),
      simulateRollout(plannerInput(w), 'k'),
    );
    const byNode = Object.fromEntries(report.nodes.map((n) => [n.node, n]));
    expect(byNode['n1']!.blockers).toEqual([
      'ClusterBudget: DisruptionBudget one allows 1 of 3 node(s) disrupted at once; disrupted: n3',
    ]);
    expect(byNode['n1']!.statusOnApply).toBe('waiting');
    expect(byNode['n3']!.statusAtEnd).toBe('complete');
  });
});

describe('plan and PackageTrustPolicies', () => {
  const DIGEST = `sha256:${'cd'.repeat(32)}`;
  const target = scr('t', { packages: { tuning: pkg('1.0.0', { image: 'ghcr.io/nvidia/tuning' }) } });
  const input = (decision: 'refused' | 'verified') => ({
    ...plannerInput(world([target], [node('n0', 1)])),
    packageTrust: {
      t: {
        'tuning|1.0.0':
          decision === 'refused'
            ? {
                kind: 'refused' as const,
                image: 'ghcr.io/nvidia/tuning:1.0.0',
                mode: 'Enforce' as const,
                reason: 'UnknownKey' as const,
                policy: 'signed',
                message: 'signed by a key the policy does not list',
              }
            : {
                kind: 'verified' as const,
                image: 'ghcr.io/nvidia/tuning:1.0.0',
                digest: DIGEST,
                signedBy: ['signed/a'],
              },
      },
    },
  });

  it('shows a package refused in Enforce mode as what holds every node, with package, image and reason', () => {
    const report = planSkyhook({ skyhook: target, input: input('refused') });
    const [only] = report.nodes;
    expect(only?.statusAtEnd).toBe('blocked');
    expect(only?.blockers).toEqual([
      'PackageTrustRefused: package tuning:1.0.0 (image ghcr.io/nvidia/tuning:1.0.0) refused by PackageTrustPolicy signed: UnknownKey: signed by a key the policy does not list',
    ]);
    expect(renderPlan(report)).toContain('PackageTrustRefused: package tuning:1.0.0');
  });

  it('runs a verified package to completion', () => {
    const report = planSkyhook({ skyhook: target, input: input('verified') });
    expect(report.nodes[0]?.statusAtEnd).toBe('complete');
  });
});
