import './register-src-hook.ts';
const { RESOURCE_DEFINITIONS } = await import('../src/api/definitions.js');
const { customResourceDefinition } = await import('../src/api/resource-definition.js');
let total = 0, missing = 0;
function walk(s: any, path: string, kind: string, out: string[]) {
  if (!s || typeof s !== 'object') return;
  const variants = s.anyOf ?? s.oneOf;
  if (s.properties) for (const [k, v] of Object.entries<any>(s.properties)) {
    const p = `${path}.${k}`; total++;
    if (!v.description) { missing++; out.push(p); }
    walk(v, p, kind, out);
  }
  if (s.items) walk(s.items, path + '[]', kind, out);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') walk(s.additionalProperties, path + '{}', kind, out);
  if (variants) for (const v of variants) walk(v, path, kind, out);
}
for (const def of RESOURCE_DEFINITIONS) {
  const crd: any = customResourceDefinition(def);
  const root = crd.spec.versions[0].schema.openAPIV3Schema;
  const out: string[] = [];
  const t0 = total, m0 = missing;
  walk(root, def.names.kind, def.names.kind, out);
  console.log(def.names.kind, total - t0, missing - m0);
  if (process.argv[2] === def.names.kind) console.log(out.join('\n'));
}
