/**
 * buildah, always with the project's own image storage (so nothing the machine's other containers
 * use is touched or collides), never pulling from a registry, and never with its default RUN
 * network: that one creates a cni-podman0 bridge and iptables chains in the host's network
 * namespace and leaves them there (reference/real-node.md §2.4). RUN steps share the host network
 * (they need the Debian and npm registries); test runs get none.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand } from './run-command.js';

export interface BuildahStorage {
  /** containers/storage graph root: image layers and containers. */
  root: string;
  /** Run-time state (locks, mount bookkeeping). */
  runRoot: string;
}

export interface BudOptions {
  contextDir: string;
  dockerfile: string;
  tags: readonly string[];
  /** `host:container[:options]` bind mounts for RUN steps. */
  volumes?: readonly string[];
  /** Where the image-ID file is written. */
  scratchDir: string;
}

export class Buildah {
  readonly storage: BuildahStorage;

  constructor(storage: BuildahStorage) {
    this.storage = storage;
  }

  private run(args: readonly string[]): Promise<string> {
    return runCommand('buildah', [
      '--root',
      this.storage.root,
      '--runroot',
      this.storage.runRoot,
      '--storage-driver',
      'overlay',
      ...args,
    ]);
  }

  async version(): Promise<string> {
    return (await this.run(['--version'])).trim();
  }

  /**
   * A new working container from `image`: a name in the storage, 'scratch' for an empty one, or
   * `docker-archive:<file>` for exactly the image in that tarball. Returns the container's name.
   */
  async from(image: string): Promise<string> {
    return (await this.run(['from', '--pull=false', '--quiet', image])).trim();
  }

  /** Copies `source` (a file, or a directory's contents) to `destination` in the container. */
  async copy(container: string, source: string, destination: string): Promise<void> {
    await this.run(['copy', container, source, destination]);
  }

  /** `buildah config` flags, e.g. ['--cmd', 'sh', '--user', '65535:65535']. */
  async config(container: string, flags: readonly string[]): Promise<void> {
    await this.run(['config', ...flags, container]);
  }

  /** Commits the container as `ref` and removes it; returns the image ID. */
  async commit(container: string, ref: string): Promise<string> {
    return (await this.run(['commit', '--rm', '--quiet', container, ref])).trim();
  }

  async tag(ref: string, ...moreRefs: string[]): Promise<void> {
    await this.run(['tag', ref, ...moreRefs]);
  }

  /** Builds a Dockerfile from local images only (`FROM` must already be in the storage); returns the image ID. */
  async bud(options: BudOptions): Promise<string> {
    const idFile = join(options.scratchDir, `bud-${Date.now()}-${Math.random().toString(36).slice(2)}.iid`);
    await this.run([
      'bud',
      '--iidfile',
      idFile,
      '--pull=false',
      '--network',
      'host',
      '--layers=false',
      '--quiet',
      '-f',
      options.dockerfile,
      ...options.tags.flatMap((tag) => ['-t', tag]),
      ...(options.volumes ?? []).flatMap((volume) => ['-v', volume]),
      options.contextDir,
    ]);
    const id = readFileSync(idFile, 'utf8')
      .trim()
      .replace(/^sha256:/, '');
    rmSync(idFile, { force: true });
    return id;
  }

  /** The ID of the image `ref` names in the storage, or undefined when it names none. */
  async imageId(ref: string): Promise<string | undefined> {
    try {
      return (await this.run(['inspect', '--type', 'image', '--format', '{{.FromImageID}}', ref])).trim();
    } catch {
      return undefined;
    }
  }

  /**
   * Writes image `imageId` as a docker-archive tarball whose RepoTags are `ref` (what `ctr images
   * import` names it by). By ID, not name: another process may re-tag the name meanwhile.
   */
  async exportArchive(imageId: string, ref: string, archive: string): Promise<void> {
    await this.run(['push', '--quiet', imageId, `docker-archive:${archive}:${ref}`]);
  }

  /**
   * Pushes image `source` (an ID or a name in the storage) to `destination` (`host/path:tag`) over
   * TLS, trusting the CA files in `certDir`, with basic-auth `creds` (`user:password`).
   */
  async pushToRegistry(source: string, destination: string, creds: string | undefined, certDir: string): Promise<void> {
    const auth = creds === undefined ? [] : ['--creds', creds];
    await this.run(['push', '--quiet', ...auth, '--cert-dir', certDir, source, `docker://${destination}`]);
  }

  /** Pulls `source` (`host/path:tag`) from a registry as pushToRegistry reaches it; returns the image ID. */
  async pullFromRegistry(source: string, creds: string, certDir: string): Promise<string> {
    return (await this.run(['pull', '--quiet', '--creds', creds, '--cert-dir', certDir, `docker://${source}`])).trim();
  }

  /** Loads a docker-archive tarball (written by exportArchive) back into the storage; returns the image ID. */
  async importArchive(archive: string): Promise<string> {
    return (await this.run(['pull', '--quiet', `docker-archive:${archive}`])).trim();
  }

  /** Runs a command in a new container of `image` with no network, and removes the container. */
  async runInImage(image: string, argv: readonly string[], volumes: readonly string[] = []): Promise<string> {
    const container = await this.from(image);
    try {
      return await this.run([
        'run',
        '--network',
        'none',
        ...volumes.flatMap((volume) => ['-v', volume]),
        container,
        '--',
        ...argv,
      ]);
    } finally {
      await this.run(['rm', container]);
    }
  }

  /** Mounts an image's root filesystem read-only-by-convention; returns the path and how to unmount. */
  async mountImage(image: string): Promise<{ path: string; unmount: () => Promise<void> }> {
    const container = await this.from(image);
    const path = (await this.run(['mount', container])).trim();
    return { path, unmount: async () => void (await this.run(['rm', container])) };
  }

  /** Removes images no tag points at any more (the previous build of a re-built tag). */
  async pruneUntagged(): Promise<void> {
    await this.run(['rmi', '--prune']);
  }
}
