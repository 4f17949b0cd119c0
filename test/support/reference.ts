/**
 * Access to the reference material in `../shared/` beside the checkout (KubeVirt's examples and
 * OpenAPI spec). A user's clone has no such folder: tests that read it call {@link referenceDir}
 * and skip, saying so, when it returns undefined; the project's own fixtures cover the behaviour.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** `../shared/kubevirt` when present, else undefined. Override with VIRT_RECONCILER_REFERENCE. */
export function referenceDir(): string | undefined {
  const dir = process.env.VIRT_RECONCILER_REFERENCE ?? join(projectRoot, '..', 'shared', 'kubevirt');
  return existsSync(join(dir, 'examples')) ? dir : undefined;
}

export const NO_REFERENCE = 'skipped: ../shared/kubevirt (KubeVirt reference material) is not beside this checkout; the project fixtures in test/fixtures cover this behaviour';
