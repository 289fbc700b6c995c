/**
 * The image policies of config/samples/admission/ against a real API server: the example policy
 * refuses shellscript and Docker Hub images naming the package, and leaves the operator's metadata
 * writes on an earlier Skyhook alone; the ConfigMap allow-list refuses an image outside it and
 * accepts it once the ConfigMap lists its prefix. Policies load asynchronously, so each
 * expectation is polled until it holds.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { OPERATOR_NAMESPACE } from '../../src/api/operator-rbac.js';
import { startControlPlane, type ControlPlane } from '../../src/sandbox/control-plane.js';
import { waitCrdsEstablished } from '../../src/sandbox/crds-established.js';
import { eventually } from './eventually.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADMISSION = join(REPO_ROOT, 'config/samples/admission');
/** Generous: the API server re-reads policies, bindings and params from its informers. */
const POLICY_WAIT_MS = 30_000;

let cp: ControlPlane;

async function kubectl(args: string[], input?: string): Promise<string> {
  const result = await cp.kubectl(args, input === undefined ? undefined : { input });
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

function skyhook(name: string, images: Record<string, string>): string {
  const packages = Object.fromEntries(Object.entries(images).map(([pkg, image]) => [pkg, { version: '1.0.0', image }]));
  return stringify({
    apiVersion: 'skyhook.nvidia.com/v1alpha1',
    kind: 'Skyhook',
    metadata: { name },
    spec: { packages },
  });
}

/** A server-side dry-run create: admission runs, nothing is stored. Resolves with kubectl's error text, '' when admitted. */
async function tryCreate(images: Record<string, string>): Promise<string> {
  const result = await cp.kubectl(['create', '--dry-run=server', '-f', '-'], { input: skyhook('probe', images) });
  return result.code === 0 ? '' : result.stderr;
}

/** Refused by a policy (not by the CRD's schema, which would refuse at once). */
const refused = (images: Record<string, string>): Promise<string> =>
  eventually(
    () => tryCreate(images),
    (error) => error.includes('ValidatingAdmissionPolicy'),
    { timeoutMs: POLICY_WAIT_MS, intervalMs: 250 },
  );
const admitted = (images: Record<string, string>): Promise<string> =>
  eventually(
    () => tryCreate(images),
    (error) => error === '',
    { timeoutMs: POLICY_WAIT_MS, intervalMs: 250 },
  );

beforeAll(async () => {
  cp = await startControlPlane({ nodes: 0 });
  await kubectl(['apply', '--server-side', '-k', join(REPO_ROOT, 'config/crd')]);
  await waitCrdsEstablished(cp, ['crd/skyhooks.skyhook.nvidia.com', 'crd/nodeops.skyhook.nvidia.com']);
  await kubectl(['create', 'namespace', OPERATOR_NAMESPACE]);
}, 300_000);

afterAll(async () => {
  await cp?.stop();
}, 120_000);

describe('restrict-images.yaml (the example policy)', () => {
  beforeAll(async () => {
    // Admitted before the policy exists: later metadata-only writes on it must still pass.
    await kubectl(['create', '-f', '-'], skyhook('earlier', { tuning: 'docker.io/library/ubuntu' }));
    await kubectl(['apply', '-f', join(ADMISSION, 'restrict-images.yaml')]);
  });

  it('refuses a docker.io package image with a message naming the package', async () => {
    const error = await refused({ tuning: 'docker.io/library/ubuntu' });
    expect(error).toContain("ValidatingAdmissionPolicy 'skyhook-restrict-images'");
    expect(error).toContain('images from docker.io are not allowed: package tuning (docker.io/library/ubuntu)');
  });

  it.each([
    ['a short name', 'ubuntu'],
    ['a Docker Hub user image', 'acme/tuning'],
    ['index.docker.io', 'index.docker.io/acme/tuning'],
  ])('refuses %s as a Docker Hub image', async (_what, image) => {
    expect(await refused({ ok: 'ghcr.io/acme/ok', bad: image })).toContain(
      `images from docker.io are not allowed: package bad (${image})`,
    );
  });

  it('refuses the shellscript package, naming it', async () => {
    const error = await refused({ motd: 'ghcr.io/nvidia/skyhook-packages/shellscript' });
    expect(error).toContain(
      'the shellscript package is not allowed here: package motd (ghcr.io/nvidia/skyhook-packages/shellscript)',
    );
  });

  it.each([
    ['a ghcr.io image', 'ghcr.io/nvidia/skyhook-packages/tuning'],
    ['a registry with a port', 'registry:5000/team/tuning'],
    ['localhost', 'localhost/tuning'],
    ['a name that only contains shellscript', 'ghcr.io/acme/shellscript-tools'],
  ])('accepts %s', async (_what, image) => {
    expect(await admitted({ tuning: image })).toBe('');
  });

  it("does not check writes that leave the spec alone (the operator's finalizers), but does check spec changes", async () => {
    await refused({ tuning: 'docker.io/library/ubuntu' }); // the policy is active
    await kubectl(['label', 'skyhook', 'earlier', 'team=a']);
    await kubectl([
      'patch',
      'skyhook',
      'earlier',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":["skyhook.nvidia.com/skyhook"]}}',
    ]);
    const change = await cp.kubectl(['patch', 'skyhook', 'earlier', '--type=merge', '-p', '{"spec":{"priority":7}}']);
    expect(change.code).not.toBe(0);
    expect(change.stderr).toContain('package tuning (docker.io/library/ubuntu)');
    await kubectl(['patch', 'skyhook', 'earlier', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    await kubectl(['delete', 'skyhook', 'earlier', '--wait=true']);
  });

  afterAll(async () => {
    await kubectl(['delete', '--ignore-not-found', '-f', join(ADMISSION, 'restrict-images.yaml')]);
  });
});

describe('image-allow-list.yaml (the parameterised allow-list)', () => {
  const outside = { tuning: 'ghcr.io/acme/tuning' };

  beforeAll(async () => {
    await kubectl(['apply', '-f', join(ADMISSION, 'image-allow-list.yaml')]);
  });

  it('refuses an image outside the list, naming the package and the ConfigMap', async () => {
    const error = await refused(outside);
    expect(error).toContain(
      'image not in the allow-list (ConfigMap skyhook/skyhook-image-allow-list): package tuning (ghcr.io/acme/tuning)',
    );
  });

  it('accepts the images the list allows', async () => {
    expect(
      await admitted({
        motd: 'ghcr.io/nvidia/skyhook-packages/shellscript',
        tuning: 'nvcr.io/nvidia/skyhook-packages/tuning',
      }),
    ).toBe('');
  });

  it('accepts the image once the ConfigMap lists its prefix, and refuses it again once removed', async () => {
    await kubectl([
      '-n',
      OPERATOR_NAMESPACE,
      'patch',
      'configmap',
      'skyhook-image-allow-list',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { allowedImagePrefixes: 'ghcr.io/nvidia/skyhook-packages/, ghcr.io/acme/' } }),
    ]);
    expect(await admitted(outside)).toBe('');
    await kubectl([
      '-n',
      OPERATOR_NAMESPACE,
      'patch',
      'configmap',
      'skyhook-image-allow-list',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { allowedImagePrefixes: 'ghcr.io/nvidia/skyhook-packages/' } }),
    ]);
    expect(await refused(outside)).toContain('package tuning (ghcr.io/acme/tuning)');
  });

  describe('NodeOps', () => {
    const tryNodeOp = async (spec: Record<string, unknown>, as?: string): Promise<string> => {
      const body = stringify({
        apiVersion: 'skyhook.nvidia.com/v1alpha1',
        kind: 'NodeOp',
        metadata: { name: 'probe', namespace: OPERATOR_NAMESPACE },
        spec: { targetNodes: ['n1'], command: ['true'], ...spec },
      });
      const result = await cp.kubectl([...(as ? [`--as=${as}`] : []), 'create', '--dry-run=server', '-f', '-'], {
        input: body,
      });
      return result.code === 0 ? '' : result.stderr;
    };
    const policyRefused = (spec: Record<string, unknown>): Promise<string> =>
      eventually(
        () => tryNodeOp(spec),
        (error) => error.includes("ValidatingAdmissionPolicy 'skyhook-nodeop-image-allow-list'"),
        { timeoutMs: POLICY_WAIT_MS, intervalMs: 250 },
      );

    it('refuses a NodeOp image, or an init step image, outside the list, naming the image', async () => {
      expect(await policyRefused({ image: 'docker.io/library/busybox' })).toContain(
        'image not in the allow-list (ConfigMap skyhook/skyhook-image-allow-list): docker.io/library/busybox',
      );
      expect(
        await policyRefused({
          image: 'ghcr.io/nvidia/skyhook-packages/tuning',
          initSteps: [{ name: 'evil', image: 'ghcr.io/acme-evil/root' }],
        }),
      ).toContain('ghcr.io/acme-evil/root');
    });

    it('refuses a NodeOp without spec.image (the operator default is invisible to the policy)', async () => {
      expect(await policyRefused({})).toContain('spec.image must be set');
    });

    it("admits listed images, and the operator's own stage NodeOps whatever their image", async () => {
      expect(await tryNodeOp({ image: 'ghcr.io/nvidia/skyhook-packages/tuning' })).toBe('');
      await kubectl([
        'create',
        'clusterrolebinding',
        'operator-probe',
        '--clusterrole=cluster-admin',
        `--serviceaccount=${OPERATOR_NAMESPACE}:skyhook-operator`,
      ]);
      expect(
        await eventually(
          () =>
            tryNodeOp(
              { image: 'ghcr.io/skyhook-ts/skyhook:0.1.0' },
              `system:serviceaccount:${OPERATOR_NAMESPACE}:skyhook-operator`,
            ),
          (error) => error === '',
          { timeoutMs: POLICY_WAIT_MS, intervalMs: 250 },
        ),
      ).toBe('');
    });
  });

  it('refuses every Skyhook while the ConfigMap is missing (parameterNotFoundAction: Deny)', async () => {
    await kubectl(['-n', OPERATOR_NAMESPACE, 'delete', 'configmap', 'skyhook-image-allow-list']);
    const error = await refused({ tuning: 'ghcr.io/nvidia/skyhook-packages/tuning' });
    expect(error).toContain('skyhook-image-allow-list');
  });
});
