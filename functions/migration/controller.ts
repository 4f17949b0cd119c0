/**
 * The migration controller, declared once (docs/architecture.md, "A controller is one
 * definition"): what wakes its keys, what it may do in the cluster, its reconcile, and how its
 * deps come from the runtime's context.
 */
import { defineController } from '../../shared/reconcile/define-controller.ts';
import type { MigrationDeps } from './deps.ts';
import { cachedPolicySource } from './policy-source.ts';
import { migrationRbac } from './rbac.ts';
import { reconcileMigration } from './reconcile.ts';
import { migrationWakes } from './wakes.ts';

export const migrationController = defineController<MigrationDeps>({
  name: 'migration',
  wakes: migrationWakes,
  rbac: migrationRbac,
  reconcile: reconcileMigration,
  deps: (ctx) => {
    // Once per runtime (a Lambda container, the local runtime): its 5 s cache spans reconciles.
    const policySource = cachedPolicySource(ctx.kube);
    return (kube) => ({ ...ctx, kube, policySource });
  },
});
