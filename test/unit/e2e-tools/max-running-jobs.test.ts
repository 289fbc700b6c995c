import { describe, expect, it } from '@jest/globals';
import { maxRunningJobs, type StageJob } from '../../e2e/skyhook-cluster.js';

const job = (name: string, seenRv: string | undefined, doneRv?: string): StageJob => ({
  name,
  uid: name,
  node: 'n',
  skyhook: 's',
  package: 'p',
  stage: 'apply',
  failed: false,
  succeeded: doneRv !== undefined,
  seenAt: 0,
  seenRv,
  doneRv,
});

describe('maxRunningJobs', () => {
  it('counts overlaps in revision order, however short', () => {
    // b runs only between revisions 11 and 12, while a runs: a sampler could miss it.
    expect(maxRunningJobs([job('a', '10', '20'), job('b', '11', '12'), job('c', '21', '30')])).toBe(2);
  });

  it('ends a Job before starting one at the same revision, and runs a never-done Job to the end', () => {
    expect(maxRunningJobs([job('a', '10', '20'), job('b', '20', '30')])).toBe(1);
    expect(maxRunningJobs([job('a', '10'), job('b', '40', '50')])).toBe(2);
  });

  it('is 0 with no Job', () => {
    expect(maxRunningJobs([])).toBe(0);
  });
});
