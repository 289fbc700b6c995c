/**
 * The architecture as rules `npm run lint` (part of `npm test`) enforces on src/: no import cycle, no
 * import from a higher layer, and a Skyhook planner (controllers/skyhook/plan/) that imports nothing
 * doing I/O. Layers, lowest first (docs/design/architecture.md draws them):
 *   util/ → api/, agent/ → signing/, kube/ → jobs/, templates/, maintenance-daemon/ → controllers/ → sandbox/ → cli/
 * signing/ (image-signature verification: registry reads and node:crypto, no cluster) sits beside kube/:
 * the controllers and the CLI use it, and it uses only api/ and util/.
 */
const layer = (name, from, mayImport) => ({
  name,
  comment: `${from} may import only ${mayImport.join(', ')} (and npm packages): move shared code down a layer`,
  severity: 'error',
  from: { path: `^src/${from}/` },
  to: { path: '^src/', pathNot: mayImport.map((dir) => `^src/${dir}/`) },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Import cycles hide which module is the lower one; move the shared part into its own module',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    layer('layer-util', 'util', ['util']),
    layer('layer-api', 'api', ['api', 'util']),
    layer('layer-agent', 'agent', ['agent', 'api', 'util']),
    layer('layer-kube', 'kube', ['kube', 'api', 'util']),
    layer('layer-signing', 'signing', ['signing', 'api', 'util']),
    layer('layer-jobs', 'jobs', ['jobs', 'kube', 'api', 'util']),
    // The node daemon of `skyhook maintenance`: the cluster client and the API, never the operator's controllers.
    // templates/ and agent/ for the reboot: the same host command and nsenter as a Skyhook reboot interrupt.
    layer('layer-maintenance-daemon', 'maintenance-daemon', [
      'maintenance-daemon',
      'templates',
      'agent',
      'kube',
      'api',
      'util',
    ]),
    layer('layer-templates', 'templates', ['templates', 'agent', 'api', 'util']),
    layer('layer-controllers', 'controllers', [
      'controllers',
      'jobs',
      'templates',
      'kube',
      'signing',
      'agent',
      'api',
      'util',
    ]),
    layer('layer-sandbox', 'sandbox', [
      'sandbox',
      'controllers',
      'jobs',
      'templates',
      'kube',
      'signing',
      'agent',
      'api',
      'util',
    ]),
    {
      name: 'nodeop-is-generic',
      comment: 'The NodeOp controller serves any caller: Skyhook-specific behaviour belongs in NodeOp fields',
      severity: 'error',
      from: { path: '^src/controllers/nodeop/' },
      to: { path: '^src/controllers/skyhook/' },
    },
    {
      name: 'planner-is-pure',
      comment:
        "controllers/skyhook/plan/ decides, it never reads or writes the cluster: it may import api/, util/, itself, semver, jobs/cordon/claims.ts (the cordon claim rules the planner decides with and the writers apply at write time; one module for the NodeOp, the planner and maintenance, kept pure by cordon-claims-are-pure) and controllers/disruption/budget-rules.ts (the cluster budgets' counting rules, the same the arbiter applies at write time; kept pure by budget-rules-are-pure)",
      severity: 'error',
      from: { path: '^src/controllers/skyhook/plan/' },
      to: {
        pathNot: [
          '^src/controllers/skyhook/plan/',
          '^src/(api|util)/',
          '^src/jobs/cordon/claims\\.ts$',
          '^src/controllers/disruption/budget-rules\\.ts$',
          '(^|/)node_modules/semver/',
        ],
      },
    },
    {
      name: 'cordon-claims-are-pure',
      comment: 'jobs/cordon/claims.ts is imported by the pure planner: it may import api/ and util/ only',
      severity: 'error',
      from: { path: '^src/jobs/cordon/claims\\.ts$' },
      to: { pathNot: ['^src/(api|util)/'] },
    },
    {
      name: 'budget-rules-are-pure',
      comment:
        'controllers/disruption/budget-rules.ts is imported by the pure planner: it may import api/, util/, jobs/cordon/claims.ts and the type module controllers/disruption/arbiter.ts only',
      severity: 'error',
      from: { path: '^src/controllers/disruption/(budget-rules|arbiter)\\.ts$' },
      to: {
        pathNot: [
          '^src/(api|util)/',
          '^src/jobs/cordon/claims\\.ts$',
          '^src/controllers/disruption/(budget-rules|arbiter)\\.ts$',
        ],
      },
    },
    {
      name: 'planner-no-node-builtins',
      comment: 'controllers/skyhook/plan/ is pure: no node: modules',
      severity: 'error',
      from: { path: '^src/controllers/skyhook/plan/' },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    // TypeScript 7 has no JavaScript compiler API yet: swc parses, type-only imports included.
    parser: 'swc',
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
