import { describe, expect, it } from '@jest/globals';
import { configMapDataBytes, isLabelKey, isLabelValue } from '../../../src/api/spec-checks-kube.js';
import { skyhookSpecProblems } from '../../../src/api/spec-checks.js';
import type { Package } from '../../../src/api/skyhook.js';

const pkg = (fields: Partial<Package> = {}): Package => ({ version: '1.0.0', image: 'ghcr.io/x/pkg', ...fields });

describe('rules of the objects derived from the spec, checked before the API server refuses them', () => {
  it('reports a package configMap above what a ConfigMap can hold, with the fix', () => {
    expect(configMapDataBytes({ ab: 'é' })).toBe(4);
    const problems = skyhookSpecProblems({
      packages: { big: pkg({ configMap: { 'blob.bin': 'x'.repeat(1024 * 1024) } }) },
    });
    expect(problems).toEqual([
      'packages[big].configMap: 1048584 bytes, above the 1032192 a ConfigMap can hold (1 MiB less room for metadata); move the large files into the package image',
    ]);
    expect(skyhookSpecProblems({ packages: { ok: pkg({ configMap: { 'a.sh': 'x'.repeat(900 * 1024) } }) } })).toEqual(
      [],
    );
  });

  it('reports configMap keys a ConfigMap refuses', () => {
    expect(
      skyhookSpecProblems({ packages: { p: pkg({ configMap: { 'dir/file.sh': '', '..': '', 'ok_-.x': '' } }) } }),
    ).toEqual([
      "packages[p].configMap: key \"dir/file.sh\" is not a valid ConfigMap key (letters, digits, '-', '_' and '.' only, no '/'); rename it",
      "packages[p].configMap: key \"..\" is not a valid ConfigMap key (letters, digits, '-', '_' and '.' only, no '/'); rename it",
    ]);
  });

  it('reports env names a container refuses', () => {
    expect(
      skyhookSpecProblems({
        packages: { p: pkg({ env: [{ name: 'GOOD_1' }, { name: 'A=B' }, { name: 'tab\there' }] }) },
      }),
    ).toEqual([
      'packages[p].env[1].name: "A=B" is not a valid environment variable name (printable ASCII without \'=\'); rename it',
      'packages[p].env[2].name: "tab\\there" is not a valid environment variable name (printable ASCII without \'=\'); rename it',
    ]);
  });

  it('reports an agentImageOverride with whitespace (the Job is accepted, its pods never are)', () => {
    expect(
      skyhookSpecProblems({
        packages: {
          p: pkg({ agentImageOverride: 'ghcr.io/x/agent:1.0 ' }),
          q: pkg({ agentImageOverride: 'ghcr.io/x/agent:1.0' }),
        },
      }),
    ).toEqual([
      'packages[p].agentImageOverride: "ghcr.io/x/agent:1.0 " contains whitespace, which no pod accepts; remove it',
    ]);
  });

  it('checks label keys and values as Kubernetes does', () => {
    for (const key of ['pool', 'example.com/pool', 'a.b-c_d', 'skyhook.nvidia.com/test-group'])
      expect(isLabelKey(key)).toBe(true);
    for (const key of ['bad key', '/pool', 'Example.com/pool', 'a/b/c', '-pool', 'x'.repeat(64), ''])
      expect(isLabelKey(key)).toBe(false);
    expect(isLabelValue('')).toBe(true);
    expect(isLabelValue('a b')).toBe(false);
  });

  it('reports selector keys and values that can match no node, naming the field', () => {
    expect(
      skyhookSpecProblems({
        nodeSelectors: {
          matchLabels: { 'bad key': 'x', pool: 'a b' },
          matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }],
        },
        podNonInterruptLabels: { matchExpressions: [{ key: 'app', operator: 'In', values: ['no spaces'] }] },
      }),
    ).toEqual([
      'nodeSelectors.matchLabels: "bad key" is not a valid label key, so it matches nothing; fix the key (e.g. example.com/name)',
      "nodeSelectors.matchLabels[pool]: \"a b\" is not a valid label value (at most 63 letters, digits, '-', '_' or '.'); fix the value",
      'nodeSelectors.matchExpressions[0].key: "a/b/c" is not a valid label key, so it matches nothing; fix the key (e.g. example.com/name)',
      "podNonInterruptLabels.matchExpressions[0].values: \"no spaces\" is not a valid label value (at most 63 letters, digits, '-', '_' or '.'); fix the value",
    ]);
  });
});
