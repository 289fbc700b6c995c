/**
 * Parses Go durations (metav1.Duration, as the CRDs' DURATION_PATTERN accepts them: `1.5s`, `300ms`,
 * `2m30s`, `1h`, `500us`, `10ns`, `.5s`, `0`) into milliseconds, plus a bare number of seconds. Every
 * form the API server accepts must parse: a field that fails here would be silently ignored.
 */
const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

export function parseDurationMs(text: string): number {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== trimmed) {
    throw new Error(`'${text}' is not a duration: use a number with a unit, e.g. 500ms, 2s, 1m30s`);
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * UNIT_MS[p[2]!]!, 0);
}
