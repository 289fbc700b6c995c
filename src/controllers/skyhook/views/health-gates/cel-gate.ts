/**
 * CEL for health gates, with @marcbachmann/cel-js: a maintained (2026 releases), zero-dependency,
 * ESM-native TypeScript-typed implementation of most of the CEL spec, macros (`exists`, `all`,
 * `filter`, `map`) and `has()` included, with a parse + type-check step apart from evaluation. An
 * expression is compiled once per text (cached), with one variable, `node` (the Node object as the
 * operator caches it). A compile error is a spec problem the planner reports as InvalidSpec naming
 * the field, never a crash.
 */
import { Environment } from '@marcbachmann/cel-js';

export interface CompiledCel {
  expression: string;
  evaluate(context: { node: unknown }): unknown;
}

const environment = new Environment({ unlistedVariablesAreDyn: false }).registerVariable('node', 'dyn');

/** Compiled expressions by text: a policy's gates are compiled once, not on every reconcile. */
const compiled = new Map<string, CompiledCel | { error: string }>();
const MAX_CACHED = 256;

/** The compiled expression, or why it does not compile or cannot be a bool. */
export function compileCel(expression: string): CompiledCel | { error: string } {
  const cached = compiled.get(expression);
  if (cached) return cached;
  let result: CompiledCel | { error: string };
  try {
    const parsed = environment.parse(expression);
    const checked = parsed.check();
    if (!checked.valid) result = { error: firstLine(checked.error) };
    else if (checked.type !== 'bool' && checked.type !== 'dyn')
      result = { error: `the expression is of type ${checked.type}, a gate needs a bool` };
    else result = { expression, evaluate: (context) => parsed(context) };
  } catch (error) {
    result = { error: firstLine(error) };
  }
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(expression, result);
  return result;
}

/** An error's first line (cel-js appends the source with a caret below it). */
export function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n', 1)[0] ?? text;
}
