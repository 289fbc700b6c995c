/**
 * Puts built images into the sandbox registry. buildah, the project's image tool, pushes straight
 * from its own storage over the registry protocol with credentials and a CA directory, so no second
 * tool (skopeo, crane) is needed: the images `npm run images` built are already in that storage.
 */
import type { Buildah } from '../images/buildah.js';
import type { SandboxRegistry } from './registry.js';
import { registryPath } from './registry-files.js';

/**
 * Pushes the image in docker-archive `archive` as `ref` (e.g. ghcr.io/x/y:1), at ref's path in the
 * registry; by the archive, not a storage tag another build may have moved. Returns where it went.
 */
export async function pushArchive(
  buildah: Buildah,
  registry: SandboxRegistry,
  archive: string,
  ref: string,
): Promise<string> {
  const source = await buildah.importArchive(archive);
  const destination = `${registry.host}/${registryPath(ref)}`;
  const { username, password } = registry.credentials;
  await buildah.pushToRegistry(source, destination, `${username}:${password}`, registry.certDir);
  return destination;
}
