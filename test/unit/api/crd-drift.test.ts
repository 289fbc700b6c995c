import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { generateCrdFiles } from '../../../src/api/crd-files.js';
import { CONFIG_DIR } from './repo-paths.js';

const crdDir = join(CONFIG_DIR, 'crd');

describe('config/crd', () => {
  const generated = generateCrdFiles();

  it.each([...generated.keys()])('%s equals what the schemas generate (run `npm run gen:crds`)', (name) => {
    expect(readFileSync(join(crdDir, name), 'utf8')).toBe(generated.get(name));
  });

  it('holds no CRD the schemas do not generate, and its kustomization lists every one', () => {
    const onDisk = readdirSync(crdDir).filter((file) => file !== 'kustomization.yaml');
    expect(onDisk.sort()).toEqual([...generated.keys()].sort());
    const kustomization = parse(readFileSync(join(crdDir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    expect([...kustomization.resources].sort()).toEqual([...generated.keys()].sort());
  });
});
