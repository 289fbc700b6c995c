/**
 * `skyhook version` (`kubectl skyhook version`): as `kubectl version` does, the client's version and
 * then the server's: the Kubernetes version and the operator's (the skyhook-operator Deployment in
 * -n: its image, OPERATOR_VERSION when set, ready replicas). `--client` prints only the client's;
 * without a reachable cluster it prints the client's and fails (exit 1), as kubectl does.
 */
import { AppsV1Api, VersionApi, type V1Deployment } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { packageVersion } from '../../api/operator-version.js';
import { errorMessage, isNotFound } from '../../kube/client.js';
import type { PluginContext } from './context.js';
import { CommandError, requirePositionals } from './options.js';

/** The name config/manager and the chart give the operator's Deployment. */
export const OPERATOR_DEPLOYMENT = 'skyhook-operator';

export interface VersionReport {
  clientVersion: string;
  kubernetesVersion?: string;
  operator?: { version: string; image: string; replicas: number; readyReplicas: number } | null;
}

function operatorOf(deployment: V1Deployment): NonNullable<VersionReport['operator']> {
  const container = deployment.spec?.template.spec?.containers[0];
  const image = container?.image ?? '';
  const fromEnv = container?.env?.find((e) => e.name === 'OPERATOR_VERSION')?.value;
  const tag = /:([^:/@]+)(@.*)?$/.exec(image)?.[1] ?? '';
  return {
    version: fromEnv || tag || 'unknown',
    image,
    replicas: deployment.spec?.replicas ?? 0,
    readyReplicas: deployment.status?.readyReplicas ?? 0,
  };
}

async function serverVersions(ctx: PluginContext): Promise<Omit<VersionReport, 'clientVersion'>> {
  const { kc } = ctx.clients;
  const kubernetes = await kc.makeApiClient(VersionApi).getCode();
  let operator: VersionReport['operator'] = null;
  try {
    operator = operatorOf(
      await kc
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ name: OPERATOR_DEPLOYMENT, namespace: ctx.options.namespace }),
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  return { kubernetesVersion: kubernetes.gitVersion, operator };
}

function formatText(report: VersionReport, namespace: string): string {
  const lines = [`Client Version: ${report.clientVersion}`];
  if (report.kubernetesVersion !== undefined) lines.push(`Kubernetes Version: ${report.kubernetesVersion}`);
  if (report.operator === null)
    lines.push(`Operator Version: not installed (no Deployment ${OPERATOR_DEPLOYMENT} in ${namespace})`);
  else if (report.operator)
    lines.push(
      `Operator Version: ${report.operator.version} (${report.operator.image}, ${report.operator.readyReplicas}/${report.operator.replicas} ready)`,
    );
  return lines.join('\n');
}

export async function runVersion(ctx: PluginContext, positionals: string[], clientOnly: boolean): Promise<number> {
  requirePositionals(positionals, []);
  let report: VersionReport = { clientVersion: packageVersion() };
  let failure: string | undefined;
  if (!clientOnly) {
    try {
      report = { ...report, ...(await serverVersions(ctx)) };
    } catch (error) {
      failure = `cannot reach the cluster: ${errorMessage(error)}`;
    }
  }
  const { output } = ctx.options;
  if (output === 'json') console.log(JSON.stringify(report, null, 2));
  else if (output === 'yaml') console.log(stringify(report).trimEnd());
  else console.log(formatText(report, ctx.options.namespace));
  if (failure) throw new CommandError(failure);
  return 0;
}
