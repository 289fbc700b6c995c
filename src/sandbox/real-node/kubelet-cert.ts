/**
 * The kubelet's client certificate (CN=system:node:<name>, O=system:nodes), signed by the control
 * plane's CA from its run directory. Kept to this one function so the way certificates are made
 * (the openssl CLI today) can change in one place.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CaFiles {
  caCert: string;
  caKey: string;
}

/** Writes `<dir>/kubelet-client.{key,crt}` and returns their paths. */
export async function makeKubeletClientCert(
  ca: CaFiles,
  nodeName: string,
  dir: string,
): Promise<{ cert: string; key: string }> {
  const key = join(dir, 'kubelet-client.key');
  const csr = join(dir, 'kubelet-client.csr');
  const cert = join(dir, 'kubelet-client.crt');
  const ext = join(dir, 'kubelet-client.ext');
  await writeFile(
    ext,
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
  );
  const openssl = async (args: string[]): Promise<void> => {
    try {
      await run('openssl', args);
    } catch (error) {
      const err = error as NodeJS.ErrnoException & { stderr?: string };
      if (err.code === 'ENOENT')
        throw new Error('the openssl command is missing: install it (Debian: apt-get install openssl)');
      throw new Error(`openssl ${args[0]} for the kubelet of ${nodeName} failed: ${err.stderr ?? err.message}`);
    }
  };
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
  await openssl(['req', '-new', '-key', key, '-subj', `/CN=system:node:${nodeName}/O=system:nodes`, '-out', csr]);
  await openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.caCert,
    '-CAkey',
    ca.caKey,
    '-CAcreateserial',
    '-days',
    '30',
    '-out',
    cert,
    '-extfile',
    ext,
  ]);
  return { cert, key };
}
