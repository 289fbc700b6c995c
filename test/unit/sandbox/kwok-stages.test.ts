import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { kwokConfigYaml, podStages, SIM_ENV } from '../../../src/sandbox/kwok-stages.js';

interface StageDoc {
  kind: string;
  metadata: { name: string };
  spec: {
    selector: { matchExpressions: { key: string; operator: string; values?: string[] }[] };
    delay?: { durationMilliseconds: number; durationFrom?: { expressionFrom: string } };
  };
}

describe('kwok stages', () => {
  const docs = parseAllDocuments(kwokConfigYaml({ podDurationMs: 750 })).map((d) => d.toJS() as StageDoc);

  it('are valid multi-document YAML with unique stage names', () => {
    expect(docs.every((d) => d.kind === 'Stage')).toBe(true);
    const names = docs.map((d) => d.metadata.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining([
        'sim-node-initialize',
        'sim-pod-complete',
        'sim-pod-init-container-failed',
        'sim-pod-image-pull-backoff',
      ]),
    );
  });

  it('give simulated nodes the kubelet version of the release under test', () => {
    const initialize = (yaml: string): string =>
      JSON.stringify(
        parseAllDocuments(yaml)
          .find((d) => d.toJS().metadata.name === 'sim-node-initialize')
          ?.toJS(),
      );
    const on134 = initialize(kwokConfigYaml({ podDurationMs: 1, kubeletVersion: 'v1.34.4' }));
    expect(on134).toContain('kubeletVersion: {{ or $info.kubeletVersion \\"v1.34.4\\" | Quote }}');
    expect(initialize(kwokConfigYaml({ podDurationMs: 1 }))).toContain('\\"v1.37.0\\"');
  });

  it('take the default pod duration, overridable by the pod', () => {
    const complete = docs.find((d) => d.metadata.name === 'sim-pod-complete');
    expect(complete?.spec.delay?.durationMilliseconds).toBe(750);
    expect(complete?.spec.delay?.durationFrom?.expressionFrom).toContain(SIM_ENV.duration);
  });

  it('complete only pods owned by a Job, so other pods run until deleted', () => {
    const complete = podStages({ podDurationMs: 1 }).find(
      (s) => (s.metadata as { name: string }).name === 'sim-pod-complete',
    ) as unknown as StageDoc;
    expect(complete.spec.selector.matchExpressions).toContainEqual({
      key: '.metadata.ownerReferences[]?.kind',
      operator: 'In',
      values: ['Job'],
    });
  });

  it('keep success and failure stages mutually exclusive on the exit-code knob', () => {
    const byName = new Map(docs.map((d) => [d.metadata.name, d.spec.selector.matchExpressions]));
    const exitKey = (name: string): string | undefined =>
      byName.get(name)?.find((e) => e.key.includes(SIM_ENV.exitCode))?.operator;
    expect(exitKey('sim-pod-complete')).toBe('DoesNotExist');
    expect(exitKey('sim-pod-container-failed')).toBe('Exists');
    expect(exitKey('sim-pod-init-containers-complete')).toBe('DoesNotExist');
    expect(exitKey('sim-pod-init-container-failed')).toBe('Exists');
  });

  it('never let a pod stuck pulling an image leave the backoff stage (its podIP is set there too)', () => {
    const unpullable = (e: { key: string }) => e.key.includes('.image') && e.key.includes('invalid');
    for (const name of ['sim-pod-init-containers-complete', 'sim-pod-init-container-failed']) {
      const selector = docs.find((d) => d.metadata.name === name)!.spec.selector.matchExpressions;
      expect(selector.find(unpullable)?.operator).toBe('DoesNotExist');
    }
    const backoff = docs.find((d) => d.metadata.name === 'sim-pod-image-pull-backoff')!.spec.selector.matchExpressions;
    expect(backoff.find(unpullable)?.operator).toBe('Exists');
  });
});
