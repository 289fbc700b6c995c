import { describe, expect, it } from '@jest/globals';
import { isValidPackageVersion } from '../../../src/api/package-version.js';

// What Go's golang.org/x/mod/semver accepts once a missing `v` is added (upstream's rule).
const accepted = [
  '1',
  '1.2',
  '1.2.3',
  'v1.2.3',
  'v1',
  '0.0.0',
  '10.20.30',
  '3.2.3-bogus',
  '2024.7.7-test',
  '2.3.1-test',
  '1.0.0-rc.1',
  '1.0.0-0.3.7',
  '1.0.0-x-y.z',
  '1.0.0+build.007',
  '1.0.0-alpha+001',
  '1.0.0-0a',
];
const refused = [
  '',
  'latest',
  'v',
  'vv1.2.3',
  '01.2.3',
  '1.02.3',
  '1.2.03',
  '1.2-pre',
  '1-pre',
  '1.2+build',
  '1.0.0-01',
  '1.0.0-',
  '1.0.0+',
  '1.0.0-a..b',
  '1.2.3.4',
  ' 1.2.3',
  '1.2.3 ',
  'V1.2.3',
  '1.0.0-a_b',
];

describe('package versions', () => {
  it.each(accepted)('accepts %j', (version) => expect(isValidPackageVersion(version)).toBe(true));
  it.each(refused)('refuses %j', (version) => expect(isValidPackageVersion(version)).toBe(false));
});
