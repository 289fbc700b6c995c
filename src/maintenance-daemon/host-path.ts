/**
 * A host path as the daemon sees it under the host root, with symbolic links resolved inside that
 * root, as the host would resolve them. The host's `/` is mounted at `/host`, and on most
 * distributions `/var/run` is a link to `/run`: joined naively, `/host/var/run/reboot-required`
 * follows that absolute link into the container's own `/run` and never sees the host's sentinel
 * (kured avoids it by mounting the host's /var/run separately). Resolving each link against the host
 * root keeps every protocol path, whatever links the host has, on the host (and never outside it).
 */
import { lstatSync, readlinkSync } from 'node:fs';
import { join, posix } from 'node:path';

/** Links followed before giving up (Linux's limit). */
const MAX_LINKS = 40;

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false; // absent (or unreadable): nothing to follow; the caller's operation reports it
  }
}

/**
 * `hostPath` (absolute on the host) under `root`, links resolved within `root`. Components that do
 * not exist are kept as they are (a file about to be created). `..` never climbs above the root.
 */
export function resolveInRoot(root: string, hostPath: string): string {
  let pending = posix.normalize(`/${hostPath}`).split('/').filter(Boolean);
  const done: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const [part, ...rest] = pending as [string, ...string[]];
    pending = rest;
    if (part === '.') continue;
    if (part === '..') {
      done.pop();
      continue;
    }
    const candidate = join(root, ...done, part);
    if (!isLink(candidate)) {
      done.push(part);
      continue;
    }
    links += 1;
    if (links > MAX_LINKS) throw new Error(`too many symbolic links resolving ${hostPath} under ${root}`);
    const target = readlinkSync(candidate);
    const targetParts = target.split('/').filter(Boolean);
    if (target.startsWith('/')) done.length = 0;
    pending = [...targetParts, ...pending];
  }
  return join(root, ...done);
}
