/** `package verify`'s arguments: what it needs, and the usage errors (exit 2) for what is wrong. */
import { describe, expect, it } from '@jest/globals';
import { UsageError } from '../../../src/cli/plugin/options.js';
import { parseVerifyArgs } from '../../../src/cli/plugin/package-verify.js';

describe('package verify arguments', () => {
  it('takes the image, repeated keys and mirrors, and the registry options', () => {
    const args = parseVerifyArgs([
      'ghcr.io/a/b:1',
      '--key',
      'one.pub',
      '--key',
      'two.pub',
      '--mirror',
      'ghcr.io=https://127.0.0.1:5000',
      '--ca-file',
      'ca.crt',
      '--username',
      'u',
      '--password-stdin',
      '-o',
      'json',
    ]);
    expect(args).toMatchObject({
      image: 'ghcr.io/a/b:1',
      keyFiles: ['one.pub', 'two.pub'],
      mirrors: { 'ghcr.io': 'https://127.0.0.1:5000' },
      caFile: 'ca.crt',
      username: 'u',
      passwordStdin: true,
      json: true,
    });
  });

  it.each([
    [['--key', 'k.pub'], /missing argument <image>/],
    [['img'], /--key FILE.pub is required/],
    [['img', '--key', 'k', '--username', 'u'], /--username and --password-stdin go together/],
    [['img', '--key', 'k', '--password-stdin'], /--username and --password-stdin go together/],
    [['img', '--key', 'k', '--mirror', 'ghcr.io'], /--mirror must be REGISTRY=URL/],
    [['img', '--key', 'k', '-o', 'yaml'], /--output must be text or json/],
    [['img', 'other', '--key', 'k'], /unexpected argument 'other'/],
    [['img', '--key', 'k', '--bogus'], /bogus/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseVerifyArgs(argv)).toThrow(UsageError);
    expect(() => parseVerifyArgs(argv)).toThrow(message);
  });
});
