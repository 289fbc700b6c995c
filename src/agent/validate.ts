/**
 * `skyhook agent validate <package dir | config.json>`: everything the agent would refuse at load
 * time, plus the exec bits the skyhook-packages CI requires, all reported in one go.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { inspectPackage, type PackageInspection } from './package-loader.js';
import { STEP_MODES } from './modes.js';

export interface ValidationReport extends PackageInspection {
  configPath: string;
}

export function validatePackage(target: string): ValidationReport {
  const isDir = statSync(target, { throwIfNoEntry: false })?.isDirectory() ?? false;
  const packageDir = isDir ? target : dirname(target);
  const configPath = isDir ? join(target, 'config.json') : target;
  const inspection = inspectPackage(packageDir, configPath);
  return { ...inspection, configPath, errors: [...inspection.errors, ...execBitErrors(packageDir, inspection)] };
}

function isExecutable(path: string): boolean {
  const stat = statSync(path, { throwIfNoEntry: false });
  return stat !== undefined && (stat.mode & 0o111) !== 0;
}

function execBitErrors(packageDir: string, inspection: PackageInspection): string[] {
  const errors: string[] = [];
  const stepDir = join(packageDir, 'skyhook_dir');
  const reported = new Set<string>();
  for (const mode of STEP_MODES) {
    (inspection.config?.modes[mode] ?? []).forEach((step, index) => {
      const path = join(stepDir, step.path);
      if (reported.has(path) || statSync(path, { throwIfNoEntry: false }) === undefined) return;
      reported.add(path);
      if (!isExecutable(path))
        errors.push(
          `$.modes[${JSON.stringify(mode)}][${index}].path: step script '${step.path}' is not executable (chmod +x)`,
        );
    });
  }
  for (const path of shellScripts(packageDir)) {
    if (!reported.has(path) && !isExecutable(path))
      errors.push(`${relative(packageDir, path)}: shell script is not executable (chmod +x)`);
  }
  return errors;
}

function shellScripts(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.sh'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Text for people: one OK line or every problem, and the warnings apart (they do not fail). */
export function formatValidationReport(report: ValidationReport): { ok: boolean; text: string; warnings: string } {
  const warnings = report.warnings.map((w) => `warning: ${w}`).join('\n');
  if (report.errors.length === 0 && report.config) {
    const steps = STEP_MODES.reduce((n, mode) => n + (report.config?.modes[mode]?.length ?? 0), 0);
    return {
      ok: true,
      text: `OK: ${report.configPath}: ${report.config.package_name} ${report.config.package_version}, ${steps} steps`,
      warnings,
    };
  }
  const header = `INVALID: ${report.configPath}: ${report.errors.length} problem(s)`;
  return { ok: false, text: [header, ...report.errors.map((e) => `  ${e}`)].join('\n'), warnings };
}
