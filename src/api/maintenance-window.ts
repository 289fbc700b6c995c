/**
 * MaintenanceWindow: the one schema of "when may interrupts start", shared by DeploymentPolicy,
 * DisruptionBudget and MaintenancePolicy so a window reads the same everywhere. Two forms, exactly one
 * set (CEL): kured's daily window (`days`, `start`, `end`) or a cron start with a `duration`; both take
 * an optional IANA `timeZone` (default UTC). Patterns accept exactly what util/time-window.ts parses;
 * what the API server cannot check (the zone exists, the cron fields are in range) is windowError's.
 */
import { Type, type Static } from 'typebox';
import { DAY_NAMES } from '../util/time-window.js';
import { celRules, DURATION_PATTERN } from './schema-helpers.js';

/** `sun` → `[sS][uU][nN]`: case-insensitive in both ajv (ECMAScript) and the API server (RE2), which share no flag syntax. */
const anyCase = (name: string): string => [...name].map((c) => `[${c}${c.toUpperCase()}]`).join('');

export const DAY_PATTERN = `^(0*[0-6]|${Object.keys(DAY_NAMES).map(anyCase).join('|')})$`;

/** kured's time layouts: `15`, `15:04`, `15:04:05` (hour 0-23), `3pm`, `03pm`, `03:04pm` (hour 0-12), am/pm any case. */
export const TIME_OF_DAY_PATTERN =
  '^(([01]?[0-9]|2[0-3])(:[0-5][0-9](:[0-5][0-9])?)?|(0?[0-9]|1[0-2])(:[0-5][0-9])?[aApP][mM])$';

/** Five whitespace-separated cron fields (their ranges are checked by the operator). */
export const CRON_PATTERN = '^\\s*[^\\s]+(\\s+[^\\s]+){4}\\s*$';

/** An IANA zone name's characters (`UTC`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`). */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$';

export const MaintenanceWindow = Type.Object(
  {
    days: Type.Optional(
      Type.Array(Type.String({ maxLength: 9, pattern: DAY_PATTERN }), {
        maxItems: 7,
        description: 'Days the window is open (0-6, su, sun or sunday … sa, any case); absent or empty = every day.',
      }),
    ),
    start: Type.Optional(
      Type.String({
        maxLength: 8,
        pattern: TIME_OF_DAY_PATTERN,
        description: 'Opening time (15:04, 15:04:05, 3pm, 03:04pm), inclusive.',
      }),
    ),
    end: Type.Optional(
      Type.String({
        maxLength: 8,
        pattern: TIME_OF_DAY_PATTERN,
        description:
          'Closing time, inclusive of its whole second; earlier than start = the window wraps midnight (the day checked is the current local day).',
      }),
    ),
    schedule: Type.Optional(
      Type.String({
        maxLength: 128,
        pattern: CRON_PATTERN,
        description: 'Cron expression (5 fields, in timeZone) of the window openings.',
      }),
    ),
    duration: Type.Optional(
      Type.String({
        maxLength: 64,
        pattern: DURATION_PATTERN,
        description: 'How long the window stays open after each cron opening (Go duration, e.g. 4h).',
      }),
    ),
    timeZone: Type.Optional(
      Type.String({
        maxLength: 64,
        pattern: TIME_ZONE_PATTERN,
        description: 'IANA time zone of days, start, end and schedule (default UTC).',
      }),
    ),
  },
  {
    description: 'A time when interrupts may start: days/start/end (as kured) or schedule/duration (cron).',
    ...celRules(
      {
        rule: '(has(self.start) || has(self.end) || has(self.days)) != (has(self.schedule) || has(self.duration))',
        message: 'maintenance window: set either days/start/end or schedule/duration (exactly one form)',
      },
      { rule: 'has(self.start) == has(self.end)', message: 'start and end: set both (or neither, for the cron form)' },
      {
        rule: 'has(self.schedule) == has(self.duration)',
        message: 'schedule and duration: set both (or neither, for the days/start/end form)',
      },
      {
        rule: "!has(self.duration) || duration(self.duration) > duration('0s')",
        message: 'duration: must be above zero',
      },
    ),
  },
);
export type MaintenanceWindow = Static<typeof MaintenanceWindow>;

/** The list form every kind uses (`spec.maintenanceWindows`): any window open = open. */
export const MaintenanceWindows = (description: string) => Type.Array(MaintenanceWindow, { maxItems: 16, description });
