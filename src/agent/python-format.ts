/**
 * Text formats of the Python agent that end up in files and logs on the host (flag names, flag
 * contents, history JSON, timestamps). Nodes may switch between that agent and ours, so the bytes
 * must match.
 */

/** Python's repr() of a str: single quotes unless the text has a single quote and no double quote. */
export function pyReprString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '\\') body += '\\\\';
    else if (ch === quote) body += `\\${quote}`;
    else if (ch === '\n') body += '\\n';
    else if (ch === '\r') body += '\\r';
    else if (ch === '\t') body += '\\t';
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) body += `\\x${code.toString(16).padStart(2, '0')}`;
    else body += ch;
  }
  return `${quote}${body}${quote}`;
}

/** Python's repr() of a list of str or int, e.g. `['apply']` or `[0, 1]`. */
export function pyReprList(items: readonly (string | number)[]): string {
  return `[${items.map((item) => (typeof item === 'string' ? pyReprString(item) : String(item))).join(', ')}]`;
}

export function pyBool(value: boolean): string {
  return value ? 'True' : 'False';
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `datetime.now().isoformat()`: local time, no offset, microseconds only when non-zero. */
export function pyLocalIsoformat(date: Date): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${micros(date)}`;
}

/** `datetime.now(timezone.utc).isoformat()`: UTC with `+00:00`. */
export function pyUtcIsoformat(date: Date): string {
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}${micros(date)}+00:00`;
}

function micros(date: Date): string {
  const ms = date.getMilliseconds();
  return ms === 0 ? '' : `.${pad(ms, 3)}000`;
}

/** `time.time()` as Python prints it: seconds since the epoch with a fraction. */
export function pyEpochSeconds(date: Date): string {
  const seconds = date.getTime() / 1000;
  return Number.isInteger(seconds) ? `${seconds}.0` : String(seconds);
}

/** `json.dumps(value)` with Python's defaults: `", "` and `": "` separators, non-ASCII escaped. */
export function pyJsonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `${asciiJson(k)}: ${pyJsonDumps(v)}`)
      .join(', ')}}`;
  }
  if (typeof value === 'string') return asciiJson(value);
  return JSON.stringify(value) ?? 'null';
}

function asciiJson(text: string): string {
  return JSON.stringify(text).replace(
    /[\u007f-\uffff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** `str.center(width, fill)`, including where Python puts the odd padding character. */
export function pyCenter(text: string, width: number, fill: string): string {
  const padding = width - text.length;
  if (padding <= 0) return text;
  const left = Math.floor(padding / 2) + (padding & width & 1);
  return fill.repeat(left) + text + fill.repeat(padding - left);
}
