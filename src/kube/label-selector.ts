/**
 * Whether labels match a label selector in its string form, for the equality-based terms this
 * operator's informers use (`key`, `!key`, `key=value`, `key==value`, `key!=value`, joined by commas).
 * A set-based term (`in`, `notin`, parentheses) is not understood: it never matches, so a caller
 * that asks before caching an object leaves the object to the watch, which is always right.
 */
export function matchesLabelSelector(selector: string, labels: Readonly<Record<string, string>> | undefined): boolean {
  const have = labels ?? {};
  for (const raw of selector.split(',')) {
    const term = raw.trim();
    if (term === '') continue;
    if (/[()\s]/.test(term)) return false;
    const notEqual = term.indexOf('!=');
    if (notEqual > 0) {
      if (have[term.slice(0, notEqual)] === term.slice(notEqual + 2)) return false;
      continue;
    }
    if (term.startsWith('!')) {
      if (term.slice(1) in have) return false;
      continue;
    }
    const equal = term.indexOf('=');
    if (equal < 0) {
      if (!(term in have)) return false;
      continue;
    }
    const key = term.slice(0, equal);
    const value = term.slice(term.startsWith('=', equal + 1) ? equal + 2 : equal + 1);
    if (have[key] !== value) return false;
  }
  return true;
}
