/**
 * Where each Lambda's code comes from: `dist/<name>` as scripts/build.ts writes it. A missing
 * bundle is an error naming the build command: the stack never deploys code it does not have.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The Lambda bundle names (scripts/build.ts ENTRIES with `lambda: true`). */
export const LAMBDA_BUNDLES = ['vmi', 'vm', 'migration', 'timer-forwarder'] as const;
export type LambdaBundle = (typeof LAMBDA_BUNDLES)[number];

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
