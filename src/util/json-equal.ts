/**
 * Whether two values would serialize to the same JSON, object key order aside, without serializing
 * them. The Skyhook planner compares each SCR's next status with the current one on every pass;
 * with 1000 nodes that status is hundreds of kilobytes, and comparing sorted JSON copies of it was
 * a fifth of everything the operator allocated (and so of its garbage collection and peak memory).
 *
 * JSON's rules: a member whose value is undefined, a function or a symbol is left out; in an array
 * such a value is written as null; a value with toJSON() is written as what it returns (a Date as
 * its ISO string); a non-finite number is null.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  const left = jsonValue(a);
  const right = jsonValue(b);
  if (left === right) return true;
  // Neither writes anything (undefined, a function…): the same as far as JSON goes.
  if (isOmitted(left) || isOmitted(right)) return isOmitted(left) && isOmitted(right);
  if (typeof left === 'number' && typeof right === 'number') return !Number.isFinite(left) && !Number.isFinite(right);
  if (typeof left === 'number' && right === null) return !Number.isFinite(left);
  if (left === null && typeof right === 'number') return !Number.isFinite(right);
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return false;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    for (let i = 0; i < left.length; i++) if (!sameJson(inArray(left[i]), inArray(right[i]))) return false;
    return true;
  }
  const l = left as Record<string, unknown>;
  const r = right as Record<string, unknown>;
  let written = 0;
  for (const key in l) {
    if (!Object.hasOwn(l, key) || isOmitted(jsonValue(l[key]))) continue;
    written++;
    if (!Object.hasOwn(r, key) || !sameJson(l[key], r[key])) return false;
  }
  for (const key in r) {
    if (Object.hasOwn(r, key) && !isOmitted(jsonValue(r[key]))) written--;
  }
  return written === 0;
}

/** What JSON.stringify writes for `value`: the result of its toJSON(), if it has one. */
function jsonValue(value: unknown): unknown {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON(): unknown }).toJSON();
  }
  return value;
}

function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** An array slot JSON.stringify would leave out as a member is written as null. */
function inArray(value: unknown): unknown {
  return isOmitted(jsonValue(value)) ? null : value;
}
