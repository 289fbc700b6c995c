/**
 * Ordering of names the operator decides by (which node goes first, which settings object wins): by
 * UTF-16 code unit, as Go's sort.Strings, kubectl and our planner order them. Not `localeCompare`:
 * its order follows the process's ICU locale (so two replicas could disagree), it differs from the
 * planner's `<` on case and punctuation ("node-B" < "node-a" here, not there), and it is many times
 * slower on the sorts of every node that pacing runs.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
