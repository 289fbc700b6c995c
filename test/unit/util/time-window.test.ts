import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DAY_PATTERN, TIME_OF_DAY_PATTERN } from '../../../src/api/maintenance-window.js';
import {
  describeWindow,
  nextWindowOpen,
  parseDay,
  parseTimeOfDay,
  type TimeWindow,
  windowError,
  windowOpen,
  windowsOpen,
} from '../../../src/util/time-window.js';

const at = (iso: string): Date => new Date(iso);
const open = (window: TimeWindow, iso: string): boolean => windowOpen(window, at(iso));

describe('daily windows (kured semantics)', () => {
  it("matches kured's own window cases", () => {
    const la = { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '9am', end: '5pm', timeZone: 'America/Los_Angeles' };
    expect(open(la, '2019-04-04T00:49:00-07:00')).toBe(false);
    expect(open(la, '2019-04-05T08:59:00-07:00')).toBe(false);
    expect(open(la, '2019-04-05T09:01:00-07:00')).toBe(true);
    expect(open(la, '2019-03-31T10:00:00-07:00')).toBe(false); // Sunday
    expect(open(la, '2019-04-04T12:00:00-07:00')).toBe(true);
    expect(open(la, '2019-04-04T11:59:00Z')).toBe(false); // 04:59 in Los Angeles
    const mwf = { days: ['mon', 'we', 'fri'], start: '10:01', end: '11:30am', timeZone: 'America/Los_Angeles' };
    const week = ['2019-04-05', '2019-04-06', '2019-04-07', '2019-04-08', '2019-04-09', '2019-04-10', '2019-04-11'];
    expect(week.map((day) => open(mwf, `${day}T10:30:00-07:00`))).toEqual([
      true,
      false,
      false,
      true,
      false,
      true,
      false,
    ]);
    const weekdays = { days: ['mo', 'tu', 'we', 'th', 'fr'], start: '00:00', end: '23:59:59' };
    expect(open(weekdays, '2019-04-18T00:00:00Z')).toBe(true);
    expect(open(weekdays, '2019-04-18T23:59:59.999Z')).toBe(true);
    expect(open(weekdays, '2019-04-20T12:00:00Z')).toBe(false); // Saturday
  });

  it('includes both ends, the end with its whole second', () => {
    const w = { start: '22:00', end: '23:00' };
    expect(open(w, '2026-11-24T21:59:59.999Z')).toBe(false);
    expect(open(w, '2026-11-24T22:00:00.000Z')).toBe(true);
    expect(open(w, '2026-11-24T23:00:00.999Z')).toBe(true);
    expect(open(w, '2026-11-24T23:00:01.000Z')).toBe(false);
  });

  it('wraps midnight, checking the current local day', () => {
    // 2026-11-26 is a Thursday, 27 a Friday.
    const friday = { days: ['fr'], start: '11:59pm', end: '00:01' };
    expect(open(friday, '2026-11-27T00:00:30Z')).toBe(true);
    expect(open(friday, '2026-11-27T23:59:30Z')).toBe(true);
    expect(open(friday, '2026-11-26T23:59:30Z')).toBe(false);
    expect(open(friday, '2026-11-28T00:00:30Z')).toBe(false);
    expect(open(friday, '2026-11-27T12:00:00Z')).toBe(false);
    expect(open(friday, '2026-11-27T00:01:01Z')).toBe(false);
  });

  it('reads the day in the window zone, not UTC', () => {
    // Friday 23:30 in New York is Saturday 04:30 UTC.
    const w = { days: ['friday'], start: '23:00', end: '23:59:59', timeZone: 'America/New_York' };
    expect(open(w, '2026-11-28T04:30:00Z')).toBe(true);
    expect(open(w, '2026-11-27T23:30:00Z')).toBe(false);
  });

  it('reads every day form kured accepts, any case', () => {
    for (const text of ['0', '00', 'su', 'Sun', 'SUNDAY', 'sunday']) expect(parseDay(text)).toBe(0);
    expect(['mo', 'tue', 'Wednesday', 'TH', 'fri', 'Sa', '6'].map(parseDay)).toEqual([1, 2, 3, 4, 5, 6, 6]);
    for (const text of ['7', 'sonntag', 'm', 'thurs', '-1']) expect(parseDay(text)).toBeUndefined();
    expect(windowError({ days: ['mo', 'funday'], start: '1', end: '2' })).toBe(
      'days: "funday" is not a day (0-6, su, sun or sunday … sa)',
    );
    expect(open({ days: [], start: '00:00', end: '23:59:59' }, '2026-11-29T10:00:00Z')).toBe(true);
  });

  it('reads every time form kured accepts', () => {
    const cases: [string, string][] = [
      ['15:04', '15:04:00'],
      ['15:04:05', '15:04:05'],
      ['9:30', '09:30:00'],
      ['15', '15:00:00'],
      ['3pm', '15:00:00'],
      ['03pm', '15:00:00'],
      ['03:04pm', '15:04:00'],
      ['11:30AM', '11:30:00'],
      ['12am', '00:00:00'],
      ['12pm', '12:00:00'],
      ['0:00', '00:00:00'],
    ];
    for (const [text, hms] of cases) {
      const [h, m, s] = hms.split(':').map(Number);
      expect([text, parseTimeOfDay(text)]).toEqual([text, h! * 3600 + m! * 60 + s!]);
    }
    for (const text of ['24:00', '13pm', '15:4', '25', 'noon', '12:60', '1:00:60', '']) {
      expect([text, parseTimeOfDay(text)]).toEqual([text, undefined]);
    }
    expect(windowError({ start: '25:00', end: '03:00' })).toBe(
      'start: "25:00" is not a time (e.g. 22:00, 22:00:30, 10pm)',
    );
    expect(windowError({ start: '22:00', end: 'late' })).toBe('end: "late" is not a time (e.g. 04:00, 04:00:30, 4am)');
  });

  it('accepts in the CRD patterns exactly what it parses', () => {
    const time = new RegExp(TIME_OF_DAY_PATTERN);
    const day = new RegExp(DAY_PATTERN);
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9:apmAPM]{0,9}$/), (text) => {
        expect(time.test(text)).toBe(parseTimeOfDay(text) !== undefined);
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.stringMatching(/^([0-9]{1,3}|[sumotwehfrandyiSUMOTWEHFRANDYI]{1,9})$/), (text) => {
        expect(day.test(text)).toBe(parseDay(text) !== undefined);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('time zones', () => {
  it('refuses zones the runtime does not know, and Local', () => {
    expect(windowError({ start: '1', end: '2', timeZone: 'Mars/Olympus' })).toMatch(
      /^timeZone: unknown time zone "Mars\/Olympus": use an IANA name/,
    );
    expect(windowError({ start: '1', end: '2', timeZone: 'Local' })).toBe(
      'timeZone: time zone "Local" is refused: name an IANA zone',
    );
    expect(windowError({ start: '1', end: '2', timeZone: 'Europe/Berlin' })).toBeUndefined();
  });

  it('follows the offset across the year', () => {
    const berlin = [{ start: '22:00', end: '23:00', timeZone: 'Europe/Berlin' }];
    expect(nextWindowOpen(berlin, at('2026-01-10T12:00:00Z'))?.toISOString()).toBe('2026-01-10T21:00:00.000Z');
    expect(nextWindowOpen(berlin, at('2026-07-10T12:00:00Z'))?.toISOString()).toBe('2026-07-10T20:00:00.000Z');
  });

  it('opens at the jump when the start falls into a spring-forward gap', () => {
    // New York, 2026-03-08: 02:00 EST (07:00Z) becomes 03:00 EDT.
    const w = [{ start: '02:30', end: '04:00', timeZone: 'America/New_York' }];
    expect(nextWindowOpen(w, at('2026-03-08T06:00:00Z'))?.toISOString()).toBe('2026-03-08T07:00:00.000Z');
    expect(windowsOpen(w, at('2026-03-08T06:59:59Z'))).toBe(false);
    // A window wholly inside the gap does not open that day.
    const gap = [{ start: '02:00', end: '02:59', timeZone: 'America/New_York' }];
    expect(nextWindowOpen(gap, at('2026-03-08T06:00:00Z'))?.toISOString()).toBe('2026-03-09T06:00:00.000Z');
  });

  it('opens again in the repeated hour of a fall-back', () => {
    // New York, 2026-11-01: 02:00 EDT (06:00Z) becomes 01:00 EST.
    const w = [{ start: '01:00', end: '01:30', timeZone: 'America/New_York' }];
    expect(windowsOpen(w, at('2026-11-01T05:15:00Z'))).toBe(true);
    expect(nextWindowOpen(w, at('2026-11-01T05:45:00Z'))?.toISOString()).toBe('2026-11-01T06:00:00.000Z');
    expect(windowsOpen(w, at('2026-11-01T06:15:00Z'))).toBe(true);
  });
});

describe('cron windows', () => {
  const nightly = { schedule: '0 2 * * *', duration: '4h' };

  it('is open from each firing for the duration', () => {
    expect(open(nightly, '2026-11-24T01:59:59Z')).toBe(false);
    expect(open(nightly, '2026-11-24T02:00:00Z')).toBe(true);
    expect(open(nightly, '2026-11-24T05:59:59.999Z')).toBe(true);
    expect(open(nightly, '2026-11-24T06:00:00Z')).toBe(false);
    expect(nextWindowOpen([nightly], at('2026-11-24T06:00:00Z'))?.toISOString()).toBe('2026-11-25T02:00:00.000Z');
    expect(open({ schedule: '0 * * * *', duration: '2h' }, '2026-11-24T13:37:00Z')).toBe(true);
  });

  it('fires in its zone', () => {
    const friday = { schedule: '0 22 * * 5', duration: '6h', timeZone: 'Europe/Berlin' };
    expect(open(friday, '2026-11-27T21:00:00Z')).toBe(true); // Fri 22:00 CET
    expect(open(friday, '2026-11-28T02:59:59Z')).toBe(true);
    expect(open(friday, '2026-11-28T03:00:00Z')).toBe(false);
    expect(nextWindowOpen([friday], at('2026-11-24T00:00:00Z'))?.toISOString()).toBe('2026-11-27T21:00:00.000Z');
  });

  // CI's counterexample: cron-parser's next() gives up across Lord Howe's half-hour DST change (it
  // ends on Sunday 5 April 2026 at 02:00 +11:00, back to 01:30 +10:30).
  it('finds the next firing across a half-hour DST change', () => {
    const sunday = { schedule: '0 2 * * 0', duration: '1m', timeZone: 'Australia/Lord_Howe' };
    // 02:00 +10:30 on Sunday 5 April is 15:30 UTC the day before.
    expect(nextWindowOpen([sunday], at('2026-03-28T15:01:00Z'))?.toISOString()).toBe('2026-04-04T15:30:00.000Z');
    expect(open(sunday, '2026-04-04T15:30:30Z')).toBe(true);
    expect(nextWindowOpen([sunday], at('2026-04-04T15:31:00Z'))?.toISOString()).toBe('2026-04-11T15:30:00.000Z');
  });

  it('names the field of a bad cron window', () => {
    expect(windowError({ schedule: '61 * * * *', duration: '1h' })).toMatch(/^schedule: "61 \* \* \* \*": /);
    expect(windowError({ schedule: '0 0 2 * * *', duration: '1h' })).toMatch(/^schedule: .* is not a 5-field cron/);
    expect(windowError({ schedule: '0 2 * * *', duration: '0s' })).toBe('duration: "0s" must be above zero');
    expect(windowError({ schedule: '0 2 * * *', duration: 'soon' })).toMatch(/^duration: 'soon' is not a duration/);
    expect(windowError({ schedule: '0 2 * * *' })).toBe('schedule and duration are both required');
    expect(windowError({ schedule: '0 2 * * *', duration: '1h', start: '1' })).toBe(
      'set either days/start/end or schedule/duration',
    );
    expect(windowError({})).toBe('set either days/start/end or schedule/duration');
    expect(windowError({ start: '1' })).toBe('start and end are both required');
  });
});

describe('lists of windows', () => {
  it('is always open without windows, open when any is, never through an invalid one', () => {
    const now = at('2026-11-24T12:00:00.123Z');
    expect(windowsOpen(undefined, now)).toBe(true);
    expect(windowsOpen([], now)).toBe(true);
    expect(nextWindowOpen([], now)).toBe(now);
    expect(
      windowsOpen(
        [
          { start: '1', end: '2' },
          { start: '11', end: '13' },
        ],
        now,
      ),
    ).toBe(true);
    expect(nextWindowOpen([{ start: '11', end: '13' }], now)?.getTime()).toBe(now.getTime());
    const bad = [{ start: '0', end: '23:59:59', timeZone: 'Mars/Olympus' }];
    expect(windowsOpen(bad, now)).toBe(false);
    expect(nextWindowOpen(bad, now)).toBeUndefined();
    expect(nextWindowOpen([...bad, nightlyAt(14)], now)?.toISOString()).toBe('2026-11-24T14:00:00.000Z');
  });

  it('describes windows in one line', () => {
    expect(describeWindow({ days: ['Fri', 'mo'], start: '22:00', end: '04:00', timeZone: 'Europe/Berlin' })).toBe(
      'mo,fr 22:00-04:00 Europe/Berlin',
    );
    expect(describeWindow({ start: '22:00', end: '04:00' })).toBe('22:00-04:00 UTC');
    expect(describeWindow({ schedule: '0 2 * * 6', duration: '4h' })).toBe('cron "0 2 * * 6" for 4h UTC');
  });
});

function nightlyAt(hour: number): TimeWindow {
  return { schedule: `0 ${hour} * * *`, duration: '1h' };
}

describe('nextWindowOpen (property)', () => {
  const zones = [
    'UTC',
    'Europe/Berlin',
    'America/New_York',
    'Australia/Lord_Howe',
    'Asia/Kolkata',
    'America/Sao_Paulo',
  ];
  const hms = (s: number): string =>
    [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60].map((n) => String(n).padStart(2, '0')).join(':');
  const dailyWindow = fc.record({
    days: fc.subarray(['su', 'mo', 'tu', 'we', 'th', 'fr', 'sa'], { minLength: 1 }),
    start: fc.integer({ min: 0, max: 86_399 }).map(hms),
    end: fc.integer({ min: 0, max: 86_399 }).map(hms),
    timeZone: fc.constantFrom(...zones),
  });
  const cronWindow = fc.record({
    schedule: fc
      .tuple(fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 6 }))
      .map(([m, h, d]) => `${m} ${h} * * ${d}`),
    duration: fc.integer({ min: 1, max: 600 }).map((m) => `${m}m`),
    timeZone: fc.constantFrom(...zones),
  });
  // Around the DST changes of 2026 and plain days.
  const instant = fc.integer({ min: Date.UTC(2026, 0, 1), max: Date.UTC(2027, 0, 1) }).map((ms) => new Date(ms));

  it('is the first open instant at or after now', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(dailyWindow, cronWindow), { minLength: 1, maxLength: 3 }),
        instant,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 20, maxLength: 20 }),
        (windows, now, samples) => {
          const next = nextWindowOpen(windows, now);
          expect(next).toBeDefined();
          const nextMs = next!.getTime();
          expect(nextMs).toBeGreaterThanOrEqual(now.getTime());
          expect(windowsOpen(windows, next!)).toBe(true);
          expect(nextMs === now.getTime()).toBe(windowsOpen(windows, now));
          if (nextMs - 1000 > now.getTime()) expect(windowsOpen(windows, new Date(nextMs - 1000))).toBe(false);
          for (const f of samples) {
            const t = now.getTime() + Math.floor(f * (nextMs - now.getTime()));
            if (t < nextMs) expect(windowsOpen(windows, new Date(t))).toBe(false);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
