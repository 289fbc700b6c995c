// Jest runs TypeScript through swc in ESM mode; `tsc --noEmit` is the separate type check.
export default {
  testEnvironment: 'node',
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
