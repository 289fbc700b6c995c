/**
 * Rules Kubernetes applies to the objects the operator derives from a Skyhook spec: the package
 * ConfigMap (1 MiB, key syntax), label selectors (label key and value syntax), container env
 * names and the agent image. The API server would refuse the derived object on every write, which the operator would
 * retry forever; checked up front they become the InvalidSpec condition, naming the field and the fix.
 */
import type { LabelSelector } from './k8s-schemas.js';
import type { Package, SkyhookSpec } from './skyhook.js';

/** Kubernetes' limit on a ConfigMap's data (keys and values, in bytes); etcd's on the object is near it. */
export const CONFIGMAP_DATA_LIMIT_BYTES = 1024 * 1024;
/** Room kept for the ConfigMap's metadata (names, labels, annotations, owner reference). */
const CONFIGMAP_METADATA_ROOM_BYTES = 16 * 1024;

const CONFIGMAP_KEY = /^[-._a-zA-Z0-9]+$/;
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function kubeObjectProblems(spec: SkyhookSpec): string[] {
  const problems = [
    ...selectorProblems('nodeSelectors', spec.nodeSelectors),
    ...selectorProblems('podNonInterruptLabels', spec.podNonInterruptLabels),
  ];
  for (const [name, pkg] of Object.entries(spec.packages ?? {}))
    problems.push(...configMapProblems(name, pkg), ...envProblems(name, pkg), ...agentImageProblems(name, pkg));
  return problems;
}

/** The bytes a ConfigMap's `data` counts against the limit (keys and values, UTF-8). */
export function configMapDataBytes(data: Record<string, string>): number {
  let total = 0;
  for (const [key, value] of Object.entries(data)) total += Buffer.byteLength(key) + Buffer.byteLength(value);
  return total;
}

function configMapProblems(name: string, pkg: Package): string[] {
  const data = pkg.configMap ?? {};
  const problems = Object.keys(data)
    .filter((key) => key.length > 253 || !CONFIGMAP_KEY.test(key) || key === '.' || key === '..')
    .map(
      (key) =>
        `packages[${name}].configMap: key ${JSON.stringify(key)} is not a valid ConfigMap key (letters, digits, '-', '_' and '.' only, no '/'); rename it`,
    );
  const bytes = configMapDataBytes(data);
  const limit = CONFIGMAP_DATA_LIMIT_BYTES - CONFIGMAP_METADATA_ROOM_BYTES;
  if (bytes > limit) {
    problems.push(
      `packages[${name}].configMap: ${bytes} bytes, above the ${limit} a ConfigMap can hold (1 MiB less room for metadata); move the large files into the package image`,
    );
  }
  return problems;
}

function envProblems(name: string, pkg: Package): string[] {
  // Kubernetes' relaxed rule (the default since 1.32): printable ASCII except '='.
  return (pkg.env ?? [])
    .map((env, i) => ({ env, i }))
    .filter(({ env }) => !/^[\x20-\x7e]+$/.test(env.name) || env.name.includes('='))
    .map(
      ({ env, i }) =>
        `packages[${name}].env[${i}].name: ${JSON.stringify(env.name)} is not a valid environment variable name (printable ASCII without '='); rename it`,
    );
}

/**
 * A Job accepts an image with whitespace in its pod template (Kubernetes keeps that for old
 * templates) but its pods are refused, so the stage would wait for pods that never come.
 */
function agentImageProblems(name: string, pkg: Package): string[] {
  const image = pkg.agentImageOverride;
  if (image === undefined || !/\s/.test(image)) return [];
  return [
    `packages[${name}].agentImageOverride: ${JSON.stringify(image)} contains whitespace, which no pod accepts; remove it`,
  ];
}

/** A label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
export function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  const [prefix, name] = slash < 0 ? [undefined, key] : [key.slice(0, slash), key.slice(slash + 1)];
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length > 0 && name.length <= 63 && LABEL_NAME.test(name);
}

export const isLabelValue = (value: string): boolean => value === '' || (value.length <= 63 && LABEL_NAME.test(value));

function selectorProblems(field: string, selector: LabelSelector | undefined): string[] {
  const problems: string[] = [];
  const badKey = (where: string, key: string): string =>
    `${field}.${where}: ${JSON.stringify(key)} is not a valid label key, so it matches nothing; fix the key (e.g. example.com/name)`;
  const badValue = (where: string, value: string): string =>
    `${field}.${where}: ${JSON.stringify(value)} is not a valid label value (at most 63 letters, digits, '-', '_' or '.'); fix the value`;
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    if (!isLabelKey(key)) problems.push(badKey('matchLabels', key));
    else if (!isLabelValue(value)) problems.push(badValue(`matchLabels[${key}]`, value));
  }
  (selector?.matchExpressions ?? []).forEach((expression, i) => {
    if (!isLabelKey(expression.key)) problems.push(badKey(`matchExpressions[${i}].key`, expression.key));
    for (const value of expression.values ?? [])
      if (!isLabelValue(value)) problems.push(badValue(`matchExpressions[${i}].values`, value));
  });
  return problems;
}
