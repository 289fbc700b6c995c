/**
 * The per-node, per-SCR state upstream Skyhook keeps on each node: the `nodeState_<scr>` annotation
 * (compact JSON `{"<pkg>|<ver>": PackageStatus}`), the `status_<scr>` label and annotation, the
 * `version_<scr>` annotation and the two node conditions. Users, the kubectl plugin and upstream's own
 * operator read these, so the annotation is written byte for byte as Go's encoding/json writes it.
 */
import { nodeAnnotations, nodeConditionTypes, nodeLabels } from './names.js';
import {
  PACKAGE_STAGES,
  PACKAGE_STATES,
  SKYHOOK_STATUSES,
  type PackageStage,
  type PackageState,
  type PackageStatus,
  type SkyhookStatusValue,
} from './skyhook.js';

export type { PackageStage, PackageState, PackageStatus, SkyhookStatusValue };

/** One SCR's packages on one node, keyed `"<name>|<version>"` (upstream's key). */
export type NodeState = Record<string, PackageStatus>;

export const packageKey = (name: string, version: string): string => `${name}|${version}`;

/** The annotation cannot be parsed; the controller reports it as the `NodeStateMalformed` condition. */
export class NodeStateMalformedError extends Error {
  override readonly name = 'NodeStateMalformedError';
  readonly node: string;
  readonly skyhook: string;
  readonly detail: string;

  constructor(node: string, skyhook: string, detail: string) {
    super(`node ${node}: annotation ${nodeAnnotations.nodeState(skyhook)} cannot be parsed: ${detail}`);
    this.node = node;
    this.skyhook = skyhook;
    this.detail = detail;
  }
}

/**
 * Parses an annotation value. Like Go's decoder, `null` is an empty state and a missing string field
 * is `""`; unlike it, a stage or state outside upstream's enums is malformed, because the stage machine
 * cannot reason about it. A missing `state` (Go omits an empty one) reads as `unknown`.
 */
export function parseNodeState(text: string, node = '', skyhook = ''): NodeState {
  const fail = (detail: string): never => {
    throw new NodeStateMalformedError(node, skyhook, detail);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
  if (parsed === null) return {};
  if (!isRecord(parsed)) return fail('not a JSON object');
  const state: NodeState = {};
  for (const [key, raw] of Object.entries(parsed)) {
    if (!isRecord(raw)) return fail(`entry ${JSON.stringify(key)} is not an object`);
    const stringField = (field: string): string | undefined => {
      const value = raw[field];
      if (value === undefined || value === null) return undefined;
      return typeof value === 'string' ? value : fail(`entry ${JSON.stringify(key)}: ${field} is not a string`);
    };
    const stage = stringField('stage') ?? '';
    if (!isOneOf(PACKAGE_STAGES, stage))
      return fail(`entry ${JSON.stringify(key)}: unknown stage ${JSON.stringify(stage)}`);
    const stateText = stringField('state') ?? 'unknown';
    if (!isOneOf(PACKAGE_STATES, stateText))
      return fail(`entry ${JSON.stringify(key)}: unknown state ${JSON.stringify(stateText)}`);
    const restarts = raw['restarts'];
    if (restarts !== undefined && restarts !== null && !(Number.isInteger(restarts) && (restarts as number) >= 0)) {
      return fail(`entry ${JSON.stringify(key)}: restarts is not a non-negative integer`);
    }
    const entry: PackageStatus = {
      name: stringField('name') ?? '',
      version: stringField('version') ?? '',
      image: stringField('image') ?? '',
      stage,
      state: stateText,
    };
    const containerSHA = stringField('containerSHA');
    if (containerSHA) entry.containerSHA = containerSHA;
    if (typeof restarts === 'number' && restarts > 0) entry.restarts = restarts;
    state[key] = entry;
  }
  return state;
}

/**
 * Go's encoding of `map[string]PackageStatus`: keys in byte order, fields in struct order
 * (name, version, image, containerSHA?, stage, state?, restarts?), omitempty fields left out when
 * empty, no whitespace, and Go's HTML-safe string escaping.
 */
export function serializeNodeState(state: NodeState): string {
  const keys = Object.keys(state).sort(compareCodePoints);
  return `{${keys.map((key) => `${goString(key)}:${serializePackageStatus(state[key]!)}`).join(',')}}`;
}

export function serializePackageStatus(entry: PackageStatus): string {
  const fields = [
    `"name":${goString(entry.name)}`,
    `"version":${goString(entry.version)}`,
    `"image":${goString(entry.image)}`,
  ];
  if (entry.containerSHA) fields.push(`"containerSHA":${goString(entry.containerSHA)}`);
  fields.push(`"stage":${goString(entry.stage)}`);
  if (entry.state) fields.push(`"state":${goString(entry.state)}`);
  if (entry.restarts) fields.push(`"restarts":${Math.trunc(entry.restarts)}`);
  return `{${fields.join(',')}}`;
}

/** The annotations a node state is written to: `nodeState_` and the operator's copy of it. */
export function nodeStateAnnotations(skyhook: string, annotation: string): Record<string, string> {
  return { [nodeAnnotations.nodeState(skyhook)]: annotation, [nodeAnnotations.nodeStateCopy(skyhook)]: annotation };
}

/**
 * A node's view of one SCR, read from its annotations. A malformed state is restored from the
 * operator's copy when that parses (`restored`), else reads as empty, with the error (`malformed`).
 */
export interface NodeSkyhookRecord {
  state: NodeState;
  /** Set when the nodeState annotation exists but cannot be parsed, nor restored from the copy. */
  malformed?: NodeStateMalformedError;
  /** Set when the nodeState annotation cannot be parsed and `state` is the operator's copy. */
  restored?: NodeStateMalformedError;
  /** `status_<scr>` as last written (annotation, else label); `undefined` if never written or unknown text. */
  status?: SkyhookStatusValue;
  /** `version_<scr>`: the operator version that last wrote this node's state. */
  version?: string;
}

export function readNodeSkyhookRecord(
  node: { name: string; labels: Record<string, string>; annotations: Record<string, string> },
  skyhook: string,
): NodeSkyhookRecord {
  const record: NodeSkyhookRecord = { state: {} };
  const text = node.annotations[nodeAnnotations.nodeState(skyhook)];
  if (text !== undefined) {
    try {
      record.state = parseNodeState(text, node.name, skyhook);
    } catch (error) {
      if (!(error instanceof NodeStateMalformedError)) throw error;
      const copy = restoreFromCopy(node.annotations[nodeAnnotations.nodeStateCopy(skyhook)]);
      if (copy) {
        record.state = copy;
        record.restored = error;
      } else record.malformed = error;
    }
  }
  const status = node.annotations[nodeAnnotations.status(skyhook)] ?? node.labels[nodeLabels.status(skyhook)];
  if (status !== undefined && isOneOf(SKYHOOK_STATUSES, status)) record.status = status;
  const version = node.annotations[nodeAnnotations.version(skyhook)];
  if (version !== undefined) record.version = version;
  return record;
}

/** The copy's state, or undefined when there is none or it cannot be parsed either. */
function restoreFromCopy(copy: string | undefined): NodeState | undefined {
  if (copy === undefined) return undefined;
  try {
    return parseNodeState(copy);
  } catch {
    return undefined;
  }
}

/** The node condition shape (`node.status.conditions`), without the heartbeat times the writer adds. */
export interface NodeConditionValue {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** Upstream's two per-SCR node conditions: `<P>/<scr>/NotReady` and `<P>/<scr>/Erroring`. */
export function nodeSkyhookConditions(
  skyhook: string,
  complete: boolean,
  state: NodeState,
  gateFailure?: string,
): NodeConditionValue[] {
  const erroring = Object.values(state).some((entry) => entry.state === 'erroring' || entry.state === 'unknown');
  // Ours: a health gate that timed out (packages all done) makes the node erroring with the gate's reason.
  const gate: NodeConditionValue | undefined =
    gateFailure === undefined || erroring
      ? undefined
      : {
          type: nodeConditionTypes.erroring(skyhook),
          status: 'True',
          reason: 'HealthGateFailed',
          message: gateFailure,
        };
  return [
    {
      type: nodeConditionTypes.notReady(skyhook),
      status: complete ? 'False' : 'True',
      reason: complete ? 'Complete' : 'Incomplete',
      message: `Skyhook ${skyhook} Ready`,
    },
    gate ?? {
      type: nodeConditionTypes.erroring(skyhook),
      status: erroring ? 'True' : 'False',
      reason: erroring ? 'Package(s) Erroring or Unknown' : 'Not Erroring',
      message: `Package Erroring or Unknown for ${skyhook}`,
    },
  ];
}

/** Go's json.Marshal escapes <, >, & and the JS line separators that JSON.stringify leaves alone. */
function goString(value: string): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Go sorts map keys by UTF-8 bytes, which is code point order (not JS's UTF-16 order). */
function compareCodePoints(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const diff = left[i]!.codePointAt(0)! - right[i]!.codePointAt(0)!;
    if (diff !== 0) return diff;
  }
  return left.length - right.length;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}
