/**
 * The contract between the image-signature verifier (src/signing/) and its callers (the Skyhook
 * controller, which verifies a package version once before any of its stage Jobs run, and the
 * `kubectl skyhook package verify` command). Signatures are cosign's: a key pair from
 * `cosign generate-key-pair`, signatures found under the image's `sha256-<digest>.sig` tag.
 */

/** A public key an administrator trusts: PEM (SPKI), as the cosign.pub that cosign writes. */
export interface TrustedKey {
  /** The name the policy gives the key; verdicts and events name it. */
  readonly name: string;
  readonly publicKeyPem: string;
}

/** Username and password for one registry host, as an image pull secret's dockerconfigjson holds them. */
export interface RegistryCredentials {
  readonly username: string;
  readonly password: string;
}

/** How the verifier reaches registries: the same mirrors and credentials the nodes' containerd uses. */
export interface RegistryAccess {
  /** Credentials for a registry host (e.g. `ghcr.io`, or the mirror's `host:port`); undefined = anonymous. */
  readonly credentialsFor: (registryHost: string) => RegistryCredentials | undefined;
  /** Where an image's registry is really served, by the image's registry host (e.g. ghcr.io → https://mirror:5000). */
  readonly mirrors?: Readonly<Record<string, string>>;
  /** Extra CA certificates (PEM) to trust for registry TLS, beside the system's. */
  readonly caPem?: string;
}

/** Why an image was refused: each names what the administrator does next. */
export type RefusalReason =
  | 'unsigned' // no signature at all under the image's digest
  | 'unknown-key' // signed, but by no key the policy trusts
  | 'digest-mismatch' // a signature whose payload names another digest (a re-pointed tag, a copied signature)
  | 'unreachable'; // the registry could not be asked (network, credentials, missing tag)

export type SignatureVerdict =
  | {
      readonly kind: 'verified';
      /** The manifest digest the signature covers (`sha256:<hex>`): stage Jobs pin the image to it. */
      readonly digest: string;
      /** The trusted key whose signature matched. */
      readonly keyName: string;
    }
  | {
      readonly kind: 'refused';
      readonly reason: RefusalReason;
      /** The digest the tag resolved to, when the registry answered. */
      readonly digest?: string;
      /** One sentence naming the image, what is wrong and the fix. */
      readonly message: string;
    };

/** Verifies one image reference (tag or digest) against the keys a policy trusts for it. */
export type VerifyImageSignature = (
  image: string,
  keys: readonly TrustedKey[],
  access: RegistryAccess,
) => Promise<SignatureVerdict>;
