import { describe, expect, it } from '@jest/globals';
import { ignoredCondition, namespaceGate } from '../../../../src/controllers/nodeop/namespace-gate.js';
import { readNodeOpSettings } from '../../../../src/templates/nodeop-settings.js';

describe('which namespaces run NodeOps', () => {
  it("runs only the operator's own namespace by default", () => {
    const gate = namespaceGate('skyhook', readNodeOpSettings({}).extraNamespaces);
    expect(gate.allows('skyhook')).toBe(true);
    expect(gate.allows('default')).toBe(false);
    expect(gate.allows('kube-system')).toBe(false);
  });

  it('adds the namespaces NODEOP_NAMESPACES lists, and * runs every namespace', () => {
    const listed = namespaceGate(
      'skyhook',
      readNodeOpSettings({ NODEOP_NAMESPACES: 'team-a, team-b' }).extraNamespaces,
    );
    expect(['skyhook', 'team-a', 'team-b', 'team-c'].map((ns) => listed.allows(ns))).toEqual([true, true, true, false]);
    expect(listed.described).toBe('skyhook, team-a, team-b');
    const all = namespaceGate('skyhook', readNodeOpSettings({ NODEOP_NAMESPACES: '*' }).extraNamespaces);
    expect(all.allows('anything')).toBe(true);
  });

  it('refuses a malformed NODEOP_NAMESPACES, naming the variable', () => {
    expect(() => readNodeOpSettings({ NODEOP_NAMESPACES: 'Team_A' })).toThrow(/NODEOP_NAMESPACES must be/);
    expect(() => readNodeOpSettings({ NODEOP_NAMESPACES: '*,team-a' })).toThrow(/or \* alone/);
  });

  it('the Ignored condition names the namespace, the ones that run and the fix', () => {
    const condition = ignoredCondition('tenant', namespaceGate('skyhook', []), '2026-01-01T00:00:00Z');
    expect(condition).toMatchObject({ type: 'Ignored', status: 'True', reason: 'NamespaceNotWatched' });
    expect(condition.message).toContain("only in: skyhook; this one, in namespace 'tenant', never runs");
    expect(condition.message).toContain("add 'tenant' to NODEOP_NAMESPACES");
  });
});
