/**
 * Where each Lambda's code comes from: `dist/<name>` as scripts/build.ts writes it. A missing
 * bundle is an error naming the build command: the stack never deploys code it does not have.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROLLERS, type Controller } from '../../shared/controllers.ts';

/** A Lambda bundle name (scripts/build.ts ENTRIES with `lambda: true`): a controller's, or the timer forwarder's. */
export type LambdaBundle = Controller | 'timer-forwarder';

/** The Lambda bundle names: one per registered controller, then the timer forwarder. */
export const LAMBDA_BUNDLES: readonly LambdaBundle[] = [...CONTROLLERS, 'timer-forwarder'];

export interface ResolvedBundle {
  readonly dir: string;
}

/** Resolves `<distDir>/<name>`; a missing bundle throws, naming the command that builds it. */
export function bundleResolver(distDir: string): (name: LambdaBundle) => ResolvedBundle {
  return (name) => {
    const dir = join(distDir, name);
    if (!existsSync(join(dir, 'index.mjs'))) throw new Error(`bundle ${dir}/index.mjs is missing: run \`npm run build -- --strict\` first`);
    return { dir };
  };
}
