// Jest runs TypeScript through swc in ESM mode; `tsc --noEmit` is the separate type check.
// The runner, environment and global hooks in scripts/jest/ serialise the real-node files, fail a
// file whose worker crashed, record every file start, and reap what a killed test left running
// (docs/development/testing.md).
export default {
  testEnvironment: '<rootDir>/scripts/jest/environment.cjs',
  runner: '<rootDir>/scripts/jest/runner.cjs',
  globalSetup: '<rootDir>/scripts/jest/global-setup.cjs',
  globalTeardown: '<rootDir>/scripts/jest/global-teardown.cjs',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } },
    ],
  },
  // e2e files share one control plane per file; the machine has 2 cores.
  maxWorkers: 2,
  testTimeout: 120_000,
};
