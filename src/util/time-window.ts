/**
 * Maintenance windows: when an interrupt (cordon, drain, reboot) may start. Pure: `now` is passed in.
 * Two forms of a window:
 * - daily, with kured's semantics (`--reboot-days`, `--start-time`, `--end-time`, `--time-zone`), so a
 *   kured user's window means the same here: days as 0-6 or su/sun/sunday (any case; absent or empty
 *   = every day); times `15:04`, `15:04:05`, `3pm`, `03:04pm`, `15`; both ends inclusive (the end
 *   includes its whole second); `start > end` wraps midnight, and the day checked is the CURRENT local
 *   day (days `fr`, 23:59-00:01: Fri 00:00:30 and Fri 23:59:30 are inside, Thu 23:59:30 and Sat
 *   00:00:30 are not). Times compare on the local wall clock, so in a fall-back hour both passes
 *   count and a window inside a spring-forward gap does not open that day.
 * - cron: `{schedule: "<5-field cron>", duration: "4h"}`: open from each firing for `duration`
 *   ([fire, fire + duration)). Parsed by cron-parser (maintained, the most used cron parser on npm,
 *   previous and next firing in an IANA zone, DST handled), not by hand.
 * The zone is an IANA name resolved by the runtime's Intl data (default UTC); Go's `Local` is refused:
 * the operator's own zone means nothing to a cluster's nodes. A window that is not valid never opens,
 * so a bad window holds interrupts back rather than letting them run at any time.
 */
import { CronExpressionParser } from 'cron-parser';
import { parseDurationMs } from './duration.js';
import { timeZoneError, wallClock, wallTimeInstants } from './wall-clock.js';

/** A window as the API holds it (api/maintenance-window.ts: exactly one form is set). */
export interface TimeWindow {
  days?: string[];
  start?: string;
  end?: string;
  schedule?: string;
  duration?: string;
  timeZone?: string;
}

/** Every day name kured accepts (lower case; matched case-insensitively). */
// biome-ignore format: one line per day reads best
export const DAY_NAMES: Readonly<Record<string, number>> = {
  su: 0, sun: 0, sunday: 0,
  mo: 1, mon: 1, monday: 1,
  tu: 2, tue: 2, tuesday: 2,
  we: 3, wed: 3, wednesday: 3,
  th: 4, thu: 4, thursday: 4,
  fr: 5, fri: 5, friday: 5,
  sa: 6, sat: 6, saturday: 6,
};

const DEFAULT_TIME_ZONE = 'UTC';
/** Far enough to pass a whole week plus a week whose opening fell into a DST gap. */
const HORIZON_DAYS = 15;
const HOUR_MS = 3_600_000;

/** 0-6 (Sunday = 0) for a kured day name or number; undefined if not one. */
export function parseDay(text: string): number | undefined {
  const day = text.trim().toLowerCase();
  if (/^\d+$/.test(day)) return Number(day) <= 6 ? Number(day) : undefined; // Go's Atoi: "03" is 3
  return DAY_NAMES[day];
}

/** Seconds since midnight for a kured time (`15:04`, `15:04:05`, `15`, `03:04pm`, `3pm`); undefined if not one. */
export function parseTimeOfDay(text: string): number | undefined {
  const h24 = /^(\d{1,2})(?::(\d{2})(?::(\d{2}))?)?$/.exec(text.trim());
  if (h24 !== null) return clock(Number(h24[1]), Number(h24[2] ?? 0), Number(h24[3] ?? 0), 23);
  const h12 = /^(\d{1,2})(?::(\d{2}))?([ap]m)$/i.exec(text.trim());
  if (h12 === null) return undefined;
  // Go's 12-hour parse: 12am is midnight, 12pm noon, and "pm" adds 12 to hours below 12.
  const hour = (Number(h12[1]) % 12) + (h12[3]!.toLowerCase() === 'pm' ? 12 : 0);
  return Number(h12[1]) > 12 ? undefined : clock(hour, Number(h12[2] ?? 0), 0, 23);
}

function clock(hour: number, minute: number, second: number, maxHour: number): number | undefined {
  if (hour > maxHour || minute > 59 || second > 59) return undefined;
  return hour * 3600 + minute * 60 + second;
}

type Compiled =
  | { kind: 'daily'; days: ReadonlySet<number>; start: number; end: number; timeZone: string }
  | { kind: 'cron'; schedule: string; durationMs: number; timeZone: string };

/** Compiled windows by their JSON (a planner pass asks about the same few windows many times). */
const compiledCache = new Map<string, Compiled | string>();
const COMPILED_CACHE_MAX = 256;

/** The window in the form the rules use, or why it is not valid. */
function compile(window: TimeWindow): Compiled | string {
  const key = JSON.stringify(window);
  let compiled = compiledCache.get(key);
  if (compiled === undefined) {
    if (compiledCache.size >= COMPILED_CACHE_MAX) compiledCache.clear();
    compiled = compileUncached(window);
    compiledCache.set(key, compiled);
  }
  return compiled;
}

function compileUncached(window: TimeWindow): Compiled | string {
  const timeZone = window.timeZone ?? DEFAULT_TIME_ZONE;
  const zoneError = timeZone === 'Local' ? 'time zone "Local" is refused: name an IANA zone' : timeZoneError(timeZone);
  if (zoneError !== undefined) return `timeZone: ${zoneError}`;
  const daily = window.start !== undefined || window.end !== undefined || window.days !== undefined;
  const cron = window.schedule !== undefined || window.duration !== undefined;
  if (daily === cron) return 'set either days/start/end or schedule/duration';
  return daily ? compileDaily(window, timeZone) : compileCron(window, timeZone);
}

function compileDaily(window: TimeWindow, timeZone: string): Compiled | string {
  if (window.start === undefined || window.end === undefined) return 'start and end are both required';
  const start = parseTimeOfDay(window.start);
  if (start === undefined) return `start: "${window.start}" is not a time (e.g. 22:00, 22:00:30, 10pm)`;
  const end = parseTimeOfDay(window.end);
  if (end === undefined) return `end: "${window.end}" is not a time (e.g. 04:00, 04:00:30, 4am)`;
  const days = new Set<number>();
  for (const text of window.days ?? []) {
    if (text.trim() === '') continue; // kured ignores empty items
    const day = parseDay(text);
    if (day === undefined) return `days: "${text}" is not a day (0-6, su, sun or sunday … sa)`;
    days.add(day);
  }
  return { kind: 'daily', days: days.size === 0 ? new Set([0, 1, 2, 3, 4, 5, 6]) : days, start, end, timeZone };
}

function compileCron(window: TimeWindow, timeZone: string): Compiled | string {
  if (window.schedule === undefined || window.duration === undefined) return 'schedule and duration are both required';
  if (window.schedule.trim().split(/\s+/).length !== 5) {
    return `schedule: "${window.schedule}" is not a 5-field cron expression (minute hour day-of-month month day-of-week)`;
  }
  try {
    CronExpressionParser.parse(window.schedule, { tz: timeZone });
  } catch (err) {
    return `schedule: "${window.schedule}": ${err instanceof Error ? err.message : String(err)}`;
  }
  let durationMs: number;
  try {
    durationMs = parseDurationMs(window.duration);
  } catch (err) {
    return `duration: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (durationMs <= 0) return `duration: "${window.duration}" must be above zero`;
  return { kind: 'cron', schedule: window.schedule, durationMs, timeZone };
}

/** Why the window is not valid (naming the field), or undefined. */
export function windowError(window: TimeWindow): string | undefined {
  const compiled = compile(window);
  return typeof compiled === 'string' ? compiled : undefined;
}

function dailyOpen(w: Extract<Compiled, { kind: 'daily' }>, atMs: number): boolean {
  const local = wallClock(atMs, w.timeZone);
  if (!w.days.has(local.weekday)) return false;
  const s = local.secondOfDay;
  return w.start <= w.end ? s >= w.start && s <= w.end : s >= w.start || s <= w.end;
}

/** The latest firing at or before `atMs` (cron-parser's prev() is strictly before its start date). */
function lastFiring(w: Extract<Compiled, { kind: 'cron' }>, atMs: number): number | undefined {
  const expression = CronExpressionParser.parse(w.schedule, { tz: w.timeZone, currentDate: new Date(atMs + 1000) });
  for (let i = 0; i < 2 && expression.hasPrev(); i++) {
    const fire = expression.prev().getTime();
    if (fire <= atMs) return fire;
  }
  return undefined;
}

function compiledOpen(w: Compiled, atMs: number): boolean {
  if (w.kind === 'daily') return dailyOpen(w, atMs);
  const fire = lastFiring(w, atMs);
  return fire !== undefined && atMs < fire + w.durationMs;
}

/** Whether this one window is open at `now` (false when the window is not valid). */
export function windowOpen(window: TimeWindow, now: Date): boolean {
  const compiled = compile(window);
  return typeof compiled !== 'string' && compiledOpen(compiled, now.getTime());
}

/** Whether interrupts may start at `now`: an absent or empty list is always open, else any window open. */
export function windowsOpen(windows: readonly TimeWindow[] | undefined, now: Date): boolean {
  if (windows === undefined || windows.length === 0) return true;
  return windows.some((window) => windowOpen(window, now));
}

/**
 * When interrupts may next start: `now` when open, else the earliest opening of any valid window
 * (undefined when none opens within two weeks, e.g. every window is invalid).
 */
export function nextWindowOpen(windows: readonly TimeWindow[] | undefined, now: Date): Date | undefined {
  if (windowsOpen(windows, now)) return now;
  let earliest: number | undefined;
  for (const window of windows ?? []) {
    const compiled = compile(window);
    if (typeof compiled === 'string') continue;
    const opening = compiled.kind === 'daily' ? nextDailyOpen(compiled, now.getTime()) : nextCronOpen(compiled, now);
    if (opening !== undefined && (earliest === undefined || opening < earliest)) earliest = opening;
  }
  return earliest === undefined ? undefined : new Date(earliest);
}

/**
 * The first firing after `now`. cron-parser's next() gives up ("loop limit exceeded") when its search
 * crosses a half-hour DST change (Australia/Lord_Howe), where prev() still answers right; then the
 * firing is found from prev() alone: the first instant whose latest firing is after `now`, by
 * bisection to the second (about 20 prev() calls, and only on that path).
 */
function nextCronOpen(w: Extract<Compiled, { kind: 'cron' }>, now: Date): number | undefined {
  const expression = CronExpressionParser.parse(w.schedule, { tz: w.timeZone, currentDate: now });
  try {
    if (expression.hasNext()) return expression.next().getTime();
  } catch {
    // Found below.
  }
  const nowMs = now.getTime();
  const firedAfterNow = (atMs: number): boolean => (lastFiring(w, atMs) ?? -Infinity) > nowMs;
  const horizon = nowMs + HORIZON_DAYS * 24 * HOUR_MS;
  if (!firedAfterNow(horizon)) return undefined;
  return lastFiring(w, firstSecondWhere(nowMs, horizon, firedAfterNow));
}

/**
 * A closed daily window opens where the local clock reaches `start` on an allowed day, or (wrapping
 * windows) where an allowed day begins; DST may move that instant, so each candidate is checked
 * against the clock and, when it lands past a jump, the exact opening is searched for.
 */
function nextDailyOpen(w: Extract<Compiled, { kind: 'daily' }>, nowMs: number): number | undefined {
  const today = wallClock(nowMs, w.timeZone);
  for (let k = 0; k <= HORIZON_DAYS; k++) {
    if (!w.days.has((today.weekday + k) % 7)) continue;
    const seconds = w.start > w.end ? [0, w.start] : [w.start];
    const candidates = seconds
      .flatMap((second) => wallTimeInstants(today.year, today.month, today.day + k, second, w.timeZone))
      .filter((at) => at > nowMs)
      .sort((a, b) => a - b);
    for (const at of candidates) {
      if (dailyOpen(w, at)) return firstOpenSecond(w, nowMs, at);
    }
  }
  return undefined;
}

/** The first open second in (max(now, at - 3h), at], given the window is closed at now and open at `at`. */
function firstOpenSecond(w: Extract<Compiled, { kind: 'daily' }>, nowMs: number, at: number): number {
  const from = Math.max(nowMs, at - 3 * HOUR_MS);
  return dailyOpen(w, from) ? from : firstSecondWhere(from, at, (ms) => dailyOpen(w, ms));
}

/**
 * The first whole second in (`falseAt`, `trueAt`] where `holds` (false at `falseAt`, true at `trueAt`,
 * and once true, true up to `trueAt`), by bisection.
 */
function firstSecondWhere(falseAt: number, trueAt: number, holds: (ms: number) => boolean): number {
  let closed = falseAt;
  let open = trueAt;
  while (open - closed > 1000) {
    const mid = Math.floor((closed + open) / 2000) * 1000;
    if (mid <= closed) break;
    if (holds(mid)) open = mid;
    else closed = mid;
  }
  return open;
}

const DAY_ABBREVIATIONS = ['su', 'mo', 'tu', 'we', 'th', 'fr', 'sa'];

/** One line for status messages and `skyhook plan`, e.g. `mo,tu 22:00-04:00 Europe/Berlin`. */
export function describeWindow(window: TimeWindow): string {
  const zone = window.timeZone ?? DEFAULT_TIME_ZONE;
  if (window.schedule !== undefined) return `cron "${window.schedule}" for ${window.duration ?? '?'} ${zone}`;
  const compiled = compile(window);
  const days =
    typeof compiled !== 'string' && compiled.kind === 'daily' && compiled.days.size < 7
      ? `${[...compiled.days]
          .sort()
          .map((d) => DAY_ABBREVIATIONS[d])
          .join(',')} `
      : '';
  return `${days}${window.start ?? '?'}-${window.end ?? '?'} ${zone}`;
}
