/**
 * `package verify IMAGE --key FILE.pub`: checks the image's cosign signature against the trusted keys
 * with the same verifier the operator uses (src/signing/), straight from the registry, no cluster.
 * Exit 0 only when verified; 1 when refused (the reason and the fix printed); 2 on wrong arguments.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { credentialsFromDockerConfig, credentialsLookup } from '../../signing/docker-config.js';
import type { RegistryAccess, RegistryCredentials, TrustedKey } from '../../signing/verdict.js';
import { verifyImage } from '../../signing/verify.js';
import { CommandError, UsageError } from './options.js';

export const PACKAGE_VERIFY_HELP = `Usage: skyhook package verify IMAGE --key FILE.pub [--key FILE.pub ...] [options]

Checks IMAGE's cosign signature (key-pair signatures under the sha256-<digest>.sig tag) against the
public keys, through the registry's API; prints the digest and the key that signed it, or why it is
refused and what to do. Exit 0 only when verified, 1 when refused, 2 on wrong arguments.

  --key FILE.pub              a trusted public key (PEM, as cosign generate-key-pair writes); repeatable
  --pull-secret-file FILE     registry credentials from a dockerconfigjson (an image pull secret's .dockerconfigjson)
  --username USER             registry username, with the password read from standard input:
  --password-stdin            (both are needed; they apply to every registry asked)
  --ca-file FILE              extra CA certificates (PEM) to trust for the registry's TLS
  --mirror REGISTRY=URL       ask URL for REGISTRY's images (e.g. ghcr.io=https://mirror:5000); repeatable
  -o, --output FORMAT         text (default) or json`;

interface VerifyArgs {
  image: string;
  keyFiles: string[];
  pullSecretFile?: string;
  username?: string;
  passwordStdin: boolean;
  caFile?: string;
  mirrors: Record<string, string>;
  json: boolean;
  help: boolean;
}

const VERIFY_FLAGS = {
  key: { type: 'string', multiple: true, default: [] as string[] },
  'pull-secret-file': { type: 'string' },
  username: { type: 'string' },
  'password-stdin': { type: 'boolean', default: false },
  'ca-file': { type: 'string' },
  mirror: { type: 'string', multiple: true, default: [] as string[] },
  output: { type: 'string', short: 'o', default: 'text' },
  help: { type: 'boolean', short: 'h', default: false },
} satisfies ParseArgsOptionsConfig;

/** parseArgs throws a plain TypeError on an unknown or malformed flag: that is the user's mistake (exit 2). */
function parseFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: VERIFY_FLAGS });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

export function parseVerifyArgs(argv: string[]): VerifyArgs {
  const parsed = parseFlags(argv);
  const { values, positionals } = parsed;
  const help = values.help;
  if (!help) checkVerifyArgs(positionals, values);
  const mirrors: Record<string, string> = {};
  for (const mirror of values.mirror) {
    const eq = mirror.indexOf('=');
    const url = mirror.slice(eq + 1);
    if (eq <= 0 || !/^https?:\/\/[^/]+/.test(url))
      throw new UsageError(`--mirror must be REGISTRY=URL (e.g. ghcr.io=https://mirror:5000), not '${mirror}'`);
    mirrors[mirror.slice(0, eq)] = url;
  }
  return {
    image: positionals[0] ?? '',
    keyFiles: values.key,
    ...(values['pull-secret-file'] !== undefined ? { pullSecretFile: values['pull-secret-file'] } : {}),
    ...(values.username !== undefined ? { username: values.username } : {}),
    passwordStdin: values['password-stdin'],
    ...(values['ca-file'] !== undefined ? { caFile: values['ca-file'] } : {}),
    mirrors,
    json: values.output === 'json',
    help,
  };
}

function checkVerifyArgs(
  positionals: string[],
  values: { key: string[]; username?: string | undefined; 'password-stdin': boolean; output: string },
): void {
  if (positionals.length === 0) throw new UsageError('missing argument <image>');
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  if (values.key.length === 0) throw new UsageError('--key FILE.pub is required: the public key(s) to trust');
  if ((values.username === undefined) !== !values['password-stdin'])
    throw new UsageError('--username and --password-stdin go together (the password is read from standard input)');
  if (values.output !== 'text' && values.output !== 'json')
    throw new UsageError(`--output must be text or json, not '${values.output}'`);
}

/** Reads a file the user named; the error names the flag. */
function readNamed(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new CommandError(`${flag} ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function accessFrom(args: VerifyArgs): Promise<RegistryAccess> {
  let credentialsFor: RegistryAccess['credentialsFor'] = () => undefined;
  if (args.pullSecretFile) {
    const json = readNamed('--pull-secret-file', args.pullSecretFile);
    try {
      credentialsFor = credentialsLookup(credentialsFromDockerConfig(json, args.pullSecretFile));
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  }
  if (args.username !== undefined) {
    const fixed: RegistryCredentials = { username: args.username, password: await readStdin() };
    credentialsFor = () => fixed;
  }
  return {
    credentialsFor,
    mirrors: args.mirrors,
    ...(args.caFile ? { caPem: readNamed('--ca-file', args.caFile) } : {}),
  };
}

export async function runPackageVerify(argv: string[]): Promise<number> {
  const args = parseVerifyArgs(argv);
  if (args.help) {
    console.log(PACKAGE_VERIFY_HELP);
    return 0;
  }
  const keys: TrustedKey[] = args.keyFiles.map((file) => ({
    name: basename(file),
    publicKeyPem: readNamed('--key', file),
  }));
  const { verdict, requests } = await verifyImage(args.image, keys, await accessFrom(args));
  if (args.json) {
    console.log(JSON.stringify({ image: args.image, ...verdict, requests: requests.length }, null, 2));
  } else if (verdict.kind === 'verified') {
    console.log(`verified: ${args.image}\n  digest:    ${verdict.digest}\n  signed by: ${verdict.keyName}`);
  } else {
    console.log(
      `refused (${verdict.reason}): ${verdict.message}` + (verdict.digest ? `\n  digest: ${verdict.digest}` : ''),
    );
  }
  return verdict.kind === 'verified' ? 0 : 1;
}
