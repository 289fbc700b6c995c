/**
 * A Skyhook package, as the SCR's `spec.packages` holds it: image, version, interrupt, config and
 * resources, with the CEL rules that keep a bad package out at admission. Its own file so the SCR's
 * spec (skyhook.ts) and status (skyhook-status.ts) each fit in one sitting.
 */
import { Type, type Static } from 'typebox';
import { EnvList, PullSecretList } from './k8s-schemas.js';
import { PACKAGE_VERSION_MAX_LENGTH, PACKAGE_VERSION_PATTERN } from './package-version.js';
import { type CelRule, celRules, Duration, PositiveQuantity, StringEnum, StringMap } from './schema-helpers.js';

export const INTERRUPT_TYPES = ['service', 'reboot', 'noop', 'restartAllServices'] as const;
export type InterruptType = (typeof INTERRUPT_TYPES)[number];

export const PACKAGE_NAME_PATTERN = '^[a-z][-a-z0-9]{0,41}[a-z]$';
export const PACKAGE_NAME_MAX_LENGTH = 43;

/** Bounds that keep the CEL rules below within the API server's cost budget. */
const MAX_MAP_ENTRIES = 64;

export const Interrupt = Type.Object(
  {
    type: StringEnum(INTERRUPT_TYPES, { description: 'What the interrupt does to the node.' }),
    services: Type.Optional(
      Type.Array(Type.String({ maxLength: 256 }), {
        maxItems: 64,
        description: 'Services to restart, for type service_restart.',
      }),
    ),
  },
  { description: 'The disruptive step (reboot, service restart) run on the node, with cordon and drain first.' },
);
export type Interrupt = Static<typeof Interrupt>;

/** A quantity of a package's resources is at most this long, which bounds the CEL rules below. */
export const RESOURCE_QUANTITY_MAX_LENGTH = 64;
const ResourceQuantity = (options: Record<string, unknown> = {}) =>
  PositiveQuantity({ maxLength: RESOURCE_QUANTITY_MAX_LENGTH, ...options });

/** `limit >= request` in CEL, when both are set; int-or-string values are compared as quantities. */
function limitNotBelowRequest(kind: 'cpu' | 'memory'): CelRule {
  const [limit, request] = [`self.${kind}Limit`, `self.${kind}Request`];
  return {
    rule: `!has(${limit}) || !has(${request}) || quantity(string(${limit})).compareTo(quantity(string(${request}))) >= 0`,
    message: `resources: ${kind}Limit is below ${kind}Request; raise the limit or lower the request`,
    fieldPath: `.${kind}Limit`,
  };
}

/**
 * Package resources: all four or none, and each limit at least its request (CEL rules), each above
 * zero (by pattern). The limit rules parse two int-or-string quantities per package; the API server
 * bounds that cost by the fields' maxLength from Kubernetes 1.34 on (1.33 treated an int-or-string
 * as the whole request's size and refused the rules as 8.1x over the budget, docs/design/notes/cel-cost.md).
 * The controller still checks it too (spec-checks.ts), for SCRs stored before these rules.
 */
export const PackageResources = Type.Object(
  {
    cpuRequest: Type.Optional(ResourceQuantity({ description: 'CPU request of each container of the Job.' })),
    cpuLimit: Type.Optional(ResourceQuantity({ description: 'CPU limit of each container of the Job.' })),
    memoryRequest: Type.Optional(ResourceQuantity({ description: 'Memory request of each container of the Job.' })),
    memoryLimit: Type.Optional(ResourceQuantity({ description: 'Memory limit of each container of the Job.' })),
  },
  {
    description: 'Resources of the Job containers: all four or none.',
    ...celRules(
      {
        rule: 'has(self.cpuRequest) == has(self.cpuLimit) && has(self.cpuRequest) == has(self.memoryRequest) && has(self.cpuRequest) == has(self.memoryLimit)',
        message: 'resources: set all of cpuRequest, cpuLimit, memoryRequest and memoryLimit, or none of them',
      },
      limitNotBelowRequest('cpu'),
      limitNotBelowRequest('memory'),
    ),
  },
);

/** The last path segment of the image (after the last `/`), so a registry port is not taken for a tag. */
const IMAGE_LAST_SEGMENT = "self.image.substring(self.image.lastIndexOf('/') + 1)";

export const Package = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        maxLength: PACKAGE_NAME_MAX_LENGTH,
        pattern: PACKAGE_NAME_PATTERN,
        description: 'Filled from the map key; if set it must equal the key.',
      }),
    ),
    version: Type.String({
      maxLength: PACKAGE_VERSION_MAX_LENGTH,
      pattern: PACKAGE_VERSION_PATTERN,
      description: 'Semantic version; also the image tag.',
    }),
    image: Type.String({
      minLength: 1,
      maxLength: 512,
      pattern: '^\\S+$',
      description: 'Package image without tag: the version is the tag.',
    }),
    containerSHA: Type.Optional(
      Type.String({
        pattern: '^sha256:[0-9a-f]{64}$',
        description: 'If set the image is pulled by this digest instead of by the version tag.',
      }),
    ),
    agentImageOverride: Type.Optional(
      Type.String({ maxLength: 512, description: 'Agent image (with tag) for this package only.' }),
    ),
    interrupt: Type.Optional(Interrupt),
    dependsOn: Type.Optional(
      StringMap(Type.String({ minLength: 1, maxLength: PACKAGE_VERSION_MAX_LENGTH }), {
        maxProperties: MAX_MAP_ENTRIES,
        description: 'Packages of this Skyhook (name → exact version) that must complete first.',
      }),
    ),
    configInterrupts: Type.Optional(
      StringMap(Interrupt, {
        maxProperties: MAX_MAP_ENTRIES,
        description: 'Interrupt to run when a configMap key (or a glob of keys, `*` only) changes.',
      }),
    ),
    configMap: Type.Optional(
      StringMap(Type.String(), { description: 'Files given to the package under /skyhook-package/configmaps.' }),
    ),
    env: Type.Optional({ ...EnvList, description: 'Environment variables of the stage containers.' }),
    resources: Type.Optional(PackageResources),
    imagePullSecrets: Type.Optional(
      PullSecretList(
        "Pull secrets of this package's stage Jobs, besides the operator's IMAGE_PULL_SECRET: Secrets in the operator's namespace.",
      ),
    ),
    gracefulShutdown: Type.Optional(Duration({ description: "The package pods' termination grace period." })),
    stageTimeout: Type.Optional(
      Duration({ description: 'Deadline of one attempt of a stage (of the whole stage for interrupts); 0 = none.' }),
    ),
  },
  celRules(
    {
      rule: "!has(self.configInterrupts) || self.configInterrupts.all(k, k.contains('*') || (has(self.configMap) && k in self.configMap))",
      message: 'configInterrupts: every key without `*` must be a key of configMap',
      fieldPath: '.configInterrupts',
    },
    {
      rule: "!self.image.contains('@')",
      message: 'image must not embed a digest; pin the image with containerSHA instead',
      fieldPath: '.image',
    },
    {
      rule: `!${IMAGE_LAST_SEGMENT}.contains(':') || ${IMAGE_LAST_SEGMENT}.substring(${IMAGE_LAST_SEGMENT}.indexOf(':') + 1) == self.version`,
      message: 'image has a tag that differs from version; leave the tag out, the version is the tag',
      fieldPath: '.image',
    },
  ),
);
export type Package = Static<typeof Package>;
