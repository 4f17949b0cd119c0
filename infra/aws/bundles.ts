/**
 * Where each Lambda's code comes from: `dist/<name>` as scripts/build.ts writes it. A missing
 * bundle (its entry not written yet) is replaced by a placeholder that fails every invocation,
 * with a synth warning, so the stack still synthesises; `strict` makes it an error instead.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The Lambda bundle names (scripts/build.ts ENTRIES with `lambda: true`). */
export const LAMBDA_BUNDLES = ['vmi', 'vm', 'migration', 'timer-forwarder'] as const;
export type LambdaBundle = (typeof LAMBDA_BUNDLES)[number];

export const PLACEHOLDER_DIR = join(import.meta.dirname, 'placeholder');

export interface ResolvedBundle {
  readonly dir: string;
  readonly placeholder: boolean;
}

/** Resolves `<distDir>/<name>`; missing → the placeholder (or throws when `strict`). */
export function bundleResolver(distDir: string, strict: boolean): (name: LambdaBundle) => ResolvedBundle {
  return (name) => {
    const dir = join(distDir, name);
    if (existsSync(join(dir, 'index.mjs'))) return { dir, placeholder: false };
    if (strict) throw new Error(`bundle ${dir}/index.mjs is missing: run \`npm run build -- --strict\` first`);
    return { dir: PLACEHOLDER_DIR, placeholder: true };
  };
}
