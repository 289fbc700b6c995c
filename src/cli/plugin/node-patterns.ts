/**
 * Node arguments as upstream's plugin reads them: a name, or, when it contains a regular expression
 * metacharacter, an anchored regular expression (`gpu-.*` matches `gpu-1`, not `my-gpu-1`).
 */
import { UsageError } from './options.js';

const METACHARACTERS = /[\\^$.|?*+()[\]{}]/;

export function nodeMatcher(pattern: string): (name: string) => boolean {
  if (!METACHARACTERS.test(pattern)) return (name) => name === pattern;
  let regex: RegExp;
  try {
    regex = new RegExp(`^(?:${pattern})$`);
  } catch (error) {
    throw new UsageError(
      `node pattern '${pattern}' is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return (name) => regex.test(name);
}
