/**
 * API writes counted from the API server's audit log (startControlPlane `auditLog: true`, which logs
 * only write verbs at Metadata level): who wrote what, and how many of those writes were refused.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** client-node's User-Agent (`kubernetes-client-javascript/<version>`): our operator's requests. */
export const CLIENT_NODE_USER_AGENT = 'kubernetes-client-javascript/';

export interface WriteCount {
  total: number;
  /** Writes the API server refused (conflicts, not found, …), included in total. */
  refused: number;
  /** By `verb resource[/subresource]`. */
  byRequest: Record<string, number>;
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string };
  responseStatus?: { code?: number };
}

/** Where the log ends now: count from here to leave out what happened before. */
export function auditLogEnd(path: string): number {
  return statSync(path).size;
}

function readFrom(path: string, offset: number): string {
  const length = statSync(path).size - offset;
  if (length <= 0) return '';
  const buffer = Buffer.alloc(length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, length, offset);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** The completed write requests after `fromOffset` whose User-Agent starts with `userAgentPrefix`. */
export function countWrites(path: string, fromOffset: number, userAgentPrefix: string): WriteCount {
  const count: WriteCount = { total: 0, refused: 0, byRequest: {} };
  for (const line of readFrom(path, fromOffset).split('\n')) {
    if (!line.trim()) continue;
    const event = JSON.parse(line) as AuditEvent;
    if (event.stage !== 'ResponseComplete' || !event.userAgent?.startsWith(userAgentPrefix)) continue;
    const ref = event.objectRef;
    const key = `${event.verb} ${ref?.resource ?? '?'}${ref?.subresource ? `/${ref.subresource}` : ''}`;
    count.total++;
    if ((event.responseStatus?.code ?? 200) >= 300) count.refused++;
    count.byRequest[key] = (count.byRequest[key] ?? 0) + 1;
  }
  return count;
}
