/**
 * The kubectl plugin's commands (`kubectl skyhook <command>` = `skyhook <command>`): argument
 * parsing, help, dispatch, and the exit codes (0 done, 1 failed or refused, 2 wrong arguments).
 */
import { errorMessage } from '../../kube/client.js';
import { commitChanges } from './changes.js';
import { PluginContext } from './context.js';
import { isLifecycleCommand, LIFECYCLE_COMMANDS, lifecycleChanges } from './lifecycle.js';
import { MAINTENANCE_HELP, runMaintenance } from './maintenance.js';
import { NODE_HELP, runNode } from './node.js';
import { COMMON_FLAGS_HELP, CommandError, parsePluginArgs, requirePositionals, UsageError } from './options.js';
import { PACKAGE_HELP, runPackage } from './package.js';
import { PACKAGE_VERIFY_HELP, runPackageVerify } from './package-verify.js';
import { DEPLOYMENT_POLICY_HELP, runDeploymentPolicy, runReset } from './reset.js';
import { runStatus } from './status.js';
import { runVersion } from './version.js';
import { watchStatus } from './watch.js';

function helpFor(command: string): string {
  if (command === 'node') return `${NODE_HELP}\n\n${COMMON_FLAGS_HELP}`;
  if (command === 'maintenance') return `${MAINTENANCE_HELP}\n\n${COMMON_FLAGS_HELP}`;
  if (command === 'package') return `${PACKAGE_HELP}\n\n${COMMON_FLAGS_HELP}`;
  if (command === 'deployment-policy' || command === 'dp') return `${DEPLOYMENT_POLICY_HELP}\n\n${COMMON_FLAGS_HELP}`;
  if (command === 'version')
    return `Usage: skyhook version [--client]\n\nThe client's version, the Kubernetes version and the operator's (Deployment skyhook-operator in -n); --client: the client's only.\n\n${COMMON_FLAGS_HELP}`;
  if (command === 'status')
    return `Usage: skyhook status [SKYHOOK...] [-w|--watch]\n\n--watch: after the list, one more line per change until interrupted (kubectl get -w).\n\n${COMMON_FLAGS_HELP}`;
  if (command === 'reset') {
    return `Usage: skyhook reset SKYHOOK [--skip-batch-reset]\n\nRemoves the Skyhook's state (nodeState_, status_, version_, cordon_ annotations, status_ label) from every node that has some, and restarts its rollout batches unless --skip-batch-reset; asks first.\n\n${COMMON_FLAGS_HELP}`;
  }
  const lifecycle = isLifecycleCommand(command) ? LIFECYCLE_COMMANDS[command] : undefined;
  const what = lifecycle
    ? `${lifecycle.set ? 'Sets' : 'Removes'} the annotation ${lifecycle.annotation}${lifecycle.set ? '="true"' : ''}.`
    : '';
  return `Usage: skyhook ${command} SKYHOOK\n\n${what}\n\n${COMMON_FLAGS_HELP}`;
}

async function dispatch(ctx: PluginContext, command: string, positionals: string[]): Promise<number> {
  if (isLifecycleCommand(command)) {
    const [name] = requirePositionals(positionals, ['skyhook']);
    return commitChanges(ctx, lifecycleChanges(command, await ctx.getSkyhook(name!)));
  }
  switch (command) {
    case 'status':
      return ctx.options.watch ? watchStatus(ctx, positionals) : runStatus(ctx, positionals);
    case 'version':
      return runVersion(ctx, positionals, ctx.options.client);
    case 'node':
      return runNode(ctx, positionals);
    case 'package':
      return runPackage(ctx, positionals);
    case 'maintenance':
      return runMaintenance(ctx, positionals);
    case 'reset':
      return runReset(ctx, positionals);
    case 'deployment-policy':
    case 'dp':
      return runDeploymentPolicy(ctx, positionals);
    default:
      throw new UsageError(`'${command}' is not a plugin command`);
  }
}

export async function runPluginCommand(command: string, argv: string[]): Promise<number> {
  try {
    // `package verify` asks a registry, not the cluster: its flags are its own.
    if (command === 'package' && argv[0] === 'verify') return await runPackageVerify(argv.slice(1));
    const { options, positionals } = parsePluginArgs(argv);
    if (options.help) {
      console.log(helpFor(command));
      return 0;
    }
    return await dispatch(new PluginContext(options), command, positionals);
  } catch (error) {
    if (error instanceof UsageError) {
      const help = command === 'package' && argv[0] === 'verify' ? PACKAGE_VERIFY_HELP : helpFor(command);
      console.error(`skyhook ${command}: ${error.message}\n\n${help}`);
      return 2;
    }
    console.error(`skyhook ${command}: ${error instanceof CommandError ? error.message : errorMessage(error)}`);
    return 1;
  }
}
