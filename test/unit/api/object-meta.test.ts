/** nameOf and namespaceOf: the metadata field, or '' when the object has none. */
import { describe, expect, it } from '@jest/globals';
import type { V1Node } from '@kubernetes/client-node';
import { nameOf, namespaceOf } from '../../../src/api/object-meta.js';

describe('nameOf / namespaceOf', () => {
  it('reads metadata.name and metadata.namespace', () => {
    expect(nameOf({ metadata: { name: 'cm', namespace: 'skyhook' } })).toBe('cm');
    expect(namespaceOf({ metadata: { name: 'cm', namespace: 'skyhook' } })).toBe('skyhook');
  });
  it("is '' without metadata, name or namespace (cluster-scoped)", () => {
    const node: V1Node = {};
    expect(nameOf(node)).toBe('');
    expect(namespaceOf(node)).toBe('');
    expect(nameOf({ metadata: {} })).toBe('');
    expect(namespaceOf({ metadata: { name: 'node-1' } })).toBe('');
  });
});
