/**
 * Local wall-clock time in an IANA time zone, from the runtime's own time-zone data (Intl), so no
 * hand-written tz table can go stale: the fields of an instant in a zone, a zone's UTC offset at an
 * instant, and the instants a local wall-clock time maps to (none-or-later in a spring-forward gap,
 * two in a fall-back hour). Used by the maintenance-window rules (time-window.ts).
 */

export interface WallClock {
  year: number;
  /** 1-12. */
  month: number;
  day: number;
  /** 0 = Sunday … 6 = Saturday, as kured's (Go's) time.Weekday. */
  weekday: number;
  /** Whole seconds since local midnight (0 … 86399). */
  secondOfDay: number;
}

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone (building one costs far more than using it); throws RangeError for an unknown zone. */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Undefined when the runtime knows the zone; else why not. */
export function timeZoneError(timeZone: string): string | undefined {
  try {
    formatterFor(timeZone);
    return undefined;
  } catch {
    return `unknown time zone "${timeZone}": use an IANA name such as UTC, Europe/Berlin or America/New_York`;
  }
}

/** The local date and time of `instantMs` in `timeZone` (whole seconds; milliseconds are dropped). */
export function wallClock(instantMs: number, timeZone: string): WallClock {
  const fields: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(instantMs))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const year = fields.year!;
  const month = fields.month!;
  const day = fields.day!;
  return {
    year,
    month,
    day,
    weekday: new Date(Date.UTC(year, month - 1, day)).getUTCDay(),
    secondOfDay: fields.hour! * 3600 + fields.minute! * 60 + fields.second!,
  };
}

/** The zone's offset from UTC at `instantMs` (local minus UTC, in ms). */
export function utcOffsetMs(instantMs: number, timeZone: string): number {
  const wall = wallClock(instantMs, timeZone);
  const wallAsUtc = Date.UTC(wall.year, wall.month - 1, wall.day) + wall.secondOfDay * 1000;
  return wallAsUtc - Math.floor(instantMs / 1000) * 1000;
}

/**
 * The instants at which local `year-month-day secondOfDay` may occur, ascending: one normally; two
 * when the zone's offset changes that day (the second is the wall time under the other offset: in a
 * fall-back hour both are real, in a spring-forward gap neither shows that wall time, and the caller
 * checks what the wall clock really says there). `day` may overflow the month (Date.UTC normalises).
 */
export function wallTimeInstants(
  year: number,
  month: number,
  day: number,
  secondOfDay: number,
  timeZone: string,
): number[] {
  const wallAsUtc = Date.UTC(year, month - 1, day) + secondOfDay * 1000;
  const offsets = new Set([
    utcOffsetMs(wallAsUtc - DAY_MS, timeZone),
    utcOffsetMs(wallAsUtc, timeZone),
    utcOffsetMs(wallAsUtc + DAY_MS, timeZone),
  ]);
  return [...offsets].map((offset) => wallAsUtc - offset).sort((a, b) => a - b);
}
