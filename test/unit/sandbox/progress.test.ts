import { describe, expect, it } from '@jest/globals';
import { bar, nodeLine, overallLine, packageFraction } from '../../../src/sandbox/progress.js';

const demo = {
  name: 'demo',
  status: 'in_progress',
  completeNodes: '1/3',
  packages: { motd: { version: '1.1.0', interrupts: false } },
};
const annotations = (state: string, status: string): Record<string, string> => ({
  'skyhook.nvidia.com/nodeState_demo': state,
  'skyhook.nvidia.com/status_demo': status,
});

describe('sandbox progress', () => {
  it('counts a package halfway through once apply is complete, and done once config is', () => {
    const entry = (stage: 'apply' | 'config', state: 'in_progress' | 'complete') => ({
      name: 'motd',
      version: '1.1.0',
      image: 'x',
      stage,
      state,
    });
    expect(packageFraction(undefined, false)).toBe(0);
    expect(packageFraction(entry('apply', 'in_progress'), false)).toBe(0.25);
    expect(packageFraction(entry('apply', 'complete'), false)).toBe(0.5);
    expect(packageFraction(entry('config', 'complete'), false)).toBe(1);
    expect(packageFraction(entry('config', 'complete'), true)).toBe(0.5);
  });

  it('draws one line per node with its stage, state and bar', () => {
    const line = nodeLine(
      {
        name: 'node-0',
        annotations: annotations(
          '{"motd|1.1.0":{"name":"motd","version":"1.1.0","image":"x","stage":"apply","state":"complete"}}',
          'in_progress',
        ),
      },
      demo,
    );
    expect(line.fraction).toBe(0.5);
    expect(line.text).toMatch(/^node-0\s+in_progress\s+\[#{10}-{10}\]\s+50%\s+motd@1\.1\.0 apply\/complete$/);
  });

  it('shows a node not started yet as pending, and a complete node as full', () => {
    expect(nodeLine({ name: 'node-1' }, demo).text).toContain('motd@1.1.0 pending');
    expect(nodeLine({ name: 'node-2', annotations: annotations('{}', 'complete') }, demo).fraction).toBe(1);
  });

  it('says so when a node annotation cannot be read, instead of failing', () => {
    expect(nodeLine({ name: 'node-3', annotations: annotations('{not json', 'in_progress') }, demo).text).toContain(
      'unreadable',
    );
  });

  it('sums up the Skyhook with the elapsed time', () => {
    const lines = [
      { node: 'a', text: '', fraction: 1 },
      { node: 'b', text: '', fraction: 0 },
    ];
    expect(overallLine(demo, lines, 12_345)).toBe(`demo: in_progress ${bar(0.5)}  50%  1/3 nodes complete  12.3 s`);
  });
});
