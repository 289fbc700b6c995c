/**
 * A label selector's string form (what list and watch take) read into the object form, so that
 * matching is api/label-selector.ts's `selectorMatches`, the one evaluation the project has. Only
 * the equality-based terms this operator's informers use are read (`key`, `!key`, `key=value`,
 * `key==value`, `key!=value`, joined by commas); a set-based term (`in`, `notin`, parentheses) gives
 * undefined, and a caller that asks before caching an object then leaves it to the watch.
 */
import type { LabelSelector } from '../api/k8s-schemas.js';

type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];

export function parseLabelSelector(text: string): LabelSelector | undefined {
  const matchExpressions: Requirement[] = [];
  for (const raw of text.split(',')) {
    const term = raw.trim();
    if (term === '') continue;
    if (/[()\s]/.test(term)) return undefined;
    const notEqual = term.indexOf('!=');
    const equal = term.indexOf('=');
    if (notEqual > 0) {
      matchExpressions.push({ key: term.slice(0, notEqual), operator: 'NotIn', values: [term.slice(notEqual + 2)] });
    } else if (term.startsWith('!')) {
      matchExpressions.push({ key: term.slice(1), operator: 'DoesNotExist' });
    } else if (equal < 0) {
      matchExpressions.push({ key: term, operator: 'Exists' });
    } else {
      const value = term.slice(term.startsWith('=', equal + 1) ? equal + 2 : equal + 1);
      matchExpressions.push({ key: term.slice(0, equal), operator: 'In', values: [value] });
    }
  }
  return { matchExpressions };
}
