/** `skyhook operator` flag parsing: bind addresses in the forms manager.yaml and users write. */
import { describe, expect, it } from '@jest/globals';
import { parseBindAddress } from '../../../src/cli/operator.js';

describe('parseBindAddress', () => {
  it('accepts PORT, :PORT and HOST:PORT', () => {
    expect(parseBindAddress('8081', '--health-port')).toEqual({ port: 8081 });
    expect(parseBindAddress(':8080', '--metrics-port')).toEqual({ port: 8080 });
    expect(parseBindAddress('127.0.0.1:0', '--metrics-port')).toEqual({ host: '127.0.0.1', port: 0 });
  });
  it('refuses anything else, naming the flag', () => {
    expect(() => parseBindAddress('http', '--health-port')).toThrow(/--health-port must be a port/);
    expect(() => parseBindAddress('70000', '--health-port')).toThrow(/--health-port/);
  });
});
