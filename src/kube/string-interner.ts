/**
 * One shared copy of each repeated string in the informer caches. JSON.parse gives every string
 * value of every watch event its own copy (V8 shares only very short ones), so 1000 cached nodes
 * hold 1000 copies of each condition message, timestamp, label and annotation value they have in
 * common, most of a node's heap size, and every update of a node leaves its old copies as garbage
 * in the old generation. Interning the strings of each object as it enters a cache makes a cached
 * node about a third of its size, and the fresh copies die young instead of being promoted.
 *
 * The table is bounded: once it holds `maxEntries` strings it starts over (strings already shared
 * stay shared; only later objects get new canonical copies), so strings that are never repeated
 * cannot grow it without limit. A resourceVersion is never repeated (each write of each object gets
 * its own) and nothing else holds it, so it is not entered at all: in a 300-node rollout half the
 * table's entries were resourceVersions, each keeping a table slot and, once its object changed, a
 * dead string alive until the next start-over.
 */

/** The member whose value is unique to one version of one object: never worth a table entry. */
const NEVER_SHARED = 'resourceVersion';
export class StringInterner {
  private table = new Map<string, string>();
  private readonly maxEntries: number;
  /** Longer strings are left alone (rarely repeated, and costly to hash). */
  private readonly maxLength: number;

  constructor(maxEntries = 50_000, maxLength = 4096) {
    this.maxEntries = maxEntries;
    this.maxLength = maxLength;
  }

  /** `value` with every string in it (object members and array items, at any depth) replaced by its shared copy. */
  internAll<T>(value: T): T {
    return this.walk(value) as T;
  }

  /** The shared copy of `text`. */
  intern(text: string): string {
    if (text.length > this.maxLength) return text;
    const known = this.table.get(text);
    if (known !== undefined) return known;
    if (this.table.size >= this.maxEntries) this.table = new Map();
    this.table.set(text, text);
    return text;
  }

  /** Entries in the table (for tests). */
  get size(): number {
    return this.table.size;
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.intern(value);
    // A frozen object (a test fixture, say) cannot take the shared copies; it is left as it is.
    if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.walk(value[i]);
      return value;
    }
    const object = value as Record<string, unknown>;
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue;
      const inner = object[key];
      // Strings are written back (same text, shared copy); objects are changed in place.
      if (typeof inner === 'string') {
        if (key !== NEVER_SHARED) object[key] = this.intern(inner);
      } else if (inner !== null && typeof inner === 'object') this.walk(inner);
    }
    return object;
  }
}
