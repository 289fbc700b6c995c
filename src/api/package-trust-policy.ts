/**
 * PackageTrustPolicy: a cluster-scoped list of public keys an administrator trusts, and which image
 * prefixes must be signed (cosign's format) by which of them. The Skyhook controller verifies a
 * package's image once per package version before any stage Job of it runs, and pins the stage Jobs
 * to the verified digest; in Enforce mode an image that fails never runs. Images no policy covers run
 * as they always did. The matching rules are controllers/trust/policy-match.ts; the guide is
 * docs/operations/security.md.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Type, type Static } from 'typebox';
import { ConditionsStatus } from './k8s-schemas.js';
import { type GROUP_VERSION, KINDS } from './names.js';
import type { ResourceDefinition } from './resource-definition.js';
import { celRules, StringEnum } from './schema-helpers.js';

export const TRUST_MODES = ['Enforce', 'Warn'] as const;
export type TrustMode = (typeof TRUST_MODES)[number];

const MAX_KEYS = 16;
const MAX_IMAGES = 64;
const KEY_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** What `cosign generate-key-pair` writes to cosign.pub: one PEM block of an SPKI public key. */
export const PUBLIC_KEY_PATTERN =
  '^\\s*-----BEGIN PUBLIC KEY-----\\r?\\n[A-Za-z0-9+/=\\r\\n]+-----END PUBLIC KEY-----\\s*$';

const KeyName = (description: string) =>
  Type.String({ minLength: 1, maxLength: 63, pattern: KEY_NAME_PATTERN, description });

export const TrustedPublicKey = Type.Object({
  name: KeyName('The name images[].keys, Events and conditions use for this key (a DNS-1123 label).'),
  publicKey: Type.String({
    maxLength: 4096,
    pattern: PUBLIC_KEY_PATTERN,
    description: 'The public key in PEM, as cosign.pub from `cosign generate-key-pair` (-----BEGIN PUBLIC KEY-----).',
  }),
});
export type TrustedPublicKey = Static<typeof TrustedPublicKey>;

export const TrustedImages = Type.Object({
  prefix: Type.String({
    minLength: 1,
    maxLength: 255,
    description:
      'Package images (the Skyhook package `image`, as written) starting with this, e.g. `ghcr.io/nvidia/skyhook-packages/`. Within one policy the longest matching prefix applies.',
  }),
  keys: Type.Array(KeyName('A key of spec.keys.'), {
    minItems: 1,
    maxItems: MAX_KEYS,
    'x-kubernetes-list-type': 'set',
    description: 'The names of the keys (in spec.keys) any one of which may sign these images.',
  }),
});
export type TrustedImages = Static<typeof TrustedImages>;

export const PackageTrustPolicySpec = Type.Object(
  {
    mode: Type.Optional(
      StringEnum(TRUST_MODES, {
        default: 'Enforce',
        description:
          'Enforce: a package whose image fails verification never runs (condition PackageTrustRefused, nothing of its Skyhook starts). Warn: it runs, with a Warning Event.',
      }),
    ),
    keys: Type.Array(TrustedPublicKey, {
      minItems: 1,
      maxItems: MAX_KEYS,
      'x-kubernetes-list-type': 'atomic',
      description: 'The public keys this policy trusts, each with a unique name.',
      ...celRules({
        rule: 'self.all(k, self.exists_one(o, o.name == k.name))',
        message: 'key names must be unique: rename or remove the duplicate',
      }),
    }),
    images: Type.Array(TrustedImages, {
      minItems: 1,
      maxItems: MAX_IMAGES,
      'x-kubernetes-list-type': 'atomic',
      description: 'Which images must be signed, by prefix, and by which keys.',
      ...celRules({
        rule: 'self.all(i, self.exists_one(o, o.prefix == i.prefix))',
        message: 'prefixes must be unique: merge the entries with the same prefix',
      }),
    }),
  },
  celRules({
    rule: 'self.images.all(i, i.keys.all(n, self.keys.exists(k, k.name == n)))',
    fieldPath: '.images',
    message: 'every images[].keys entry must name a key of spec.keys: add the key to spec.keys or fix the name',
  }),
);
export type PackageTrustPolicySpec = Static<typeof PackageTrustPolicySpec>;

export const PackageTrustPolicyStatus = ConditionsStatus;
export type PackageTrustPolicyStatus = Static<typeof PackageTrustPolicyStatus>;

export const PACKAGE_TRUST_POLICY_DEFINITION: ResourceDefinition = {
  names: KINDS.packageTrustPolicy,
  scope: 'Cluster',
  description:
    'PackageTrustPolicy: which public keys must have signed (cosign) the package images under given prefixes before their stages run.',
  spec: PackageTrustPolicySpec,
  status: PackageTrustPolicyStatus,
  printerColumns: [
    { name: 'Mode', type: 'string', jsonPath: '.spec.mode', description: 'Enforce or Warn' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};

export interface PackageTrustPolicy {
  apiVersion: typeof GROUP_VERSION;
  kind: typeof KINDS.packageTrustPolicy.kind;
  metadata: V1ObjectMeta;
  spec: PackageTrustPolicySpec;
  status?: PackageTrustPolicyStatus;
}
