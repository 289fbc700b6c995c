/**
 * A Skyhook package, as the SCR's `spec.packages` holds it: image, version, interrupt, config and
 * resources, with the CEL rules that keep a bad package out at admission. Its own file so the SCR's
 * spec (skyhook.ts) and status (skyhook-status.ts) each fit in one sitting.
 */
import { Type, type Static } from 'typebox';
import { EnvList } from './k8s-schemas.js';
import { PACKAGE_VERSION_MAX_LENGTH, PACKAGE_VERSION_PATTERN } from './package-version.js';
import { celRules, Duration, PositiveQuantity, StringEnum, StringMap } from './schema-helpers.js';

export const INTERRUPT_TYPES = ['service', 'reboot', 'noop', 'restartAllServices'] as const;
export type InterruptType = (typeof INTERRUPT_TYPES)[number];

export const PACKAGE_NAME_PATTERN = '^[a-z][-a-z0-9]{0,41}[a-z]$';
export const PACKAGE_NAME_MAX_LENGTH = 43;

/** Bounds that keep the CEL rules below within the API server's cost budget. */
const MAX_MAP_ENTRIES = 64;

export const Interrupt = Type.Object({
  type: StringEnum(INTERRUPT_TYPES),
  services: Type.Optional(Type.Array(Type.String({ maxLength: 256 }), { maxItems: 64 })),
});
export type Interrupt = Static<typeof Interrupt>;

/**
 * Package resources: all four or none (a CEL rule), each above zero (by pattern). That each limit is
 * at least its request is checked by the controller, which reports an InvalidSpec condition: a CEL
 * rule parsing two int-or-string quantities per package exceeds the API server's cost budget. Tried
 * on Kubernetes 1.33 with `quantity(string(self.cpuLimit)).compareTo(quantity(string(self.cpuRequest))) >= 0`
 * (and isGreaterThan, and an isQuantity guard): "estimated rule cost exceeds budget by factor of
 * 8.1x", the same with maxLength 64 or 32 on the fields, since the estimator does not bound an
 * int-or-string's `string()` by maxLength (docs/bad-input.md).
 */
export const PackageResources = Type.Object(
  {
    cpuRequest: Type.Optional(PositiveQuantity()),
    cpuLimit: Type.Optional(PositiveQuantity()),
    memoryRequest: Type.Optional(PositiveQuantity()),
    memoryLimit: Type.Optional(PositiveQuantity()),
  },
  celRules({
    rule: 'has(self.cpuRequest) == has(self.cpuLimit) && has(self.cpuRequest) == has(self.memoryRequest) && has(self.cpuRequest) == has(self.memoryLimit)',
    message: 'resources: set all of cpuRequest, cpuLimit, memoryRequest and memoryLimit, or none of them',
  }),
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
    env: Type.Optional(EnvList),
    resources: Type.Optional(PackageResources),
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
