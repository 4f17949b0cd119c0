/** Builds the reconciler stack for tests: fixture or real bundles, validation off unless asked. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LAMBDA_BUNDLES, type LambdaBundle, type ResolvedBundle } from '../../../infra/aws/bundles.ts';
import { readSettings } from '../../../infra/aws/settings.ts';
import { ReconcilerStack } from '../../../infra/aws/stack.ts';

const temps: string[] = [];
function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** Removes every folder this module created (call from `after`). */
export function removeTemps(): void {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A dist folder with a tiny handler per Lambda bundle (fast tests that do not need real code). */
export function fixtureDist(): string {
  const dir = temp('vr-fixture-dist-');
  for (const name of LAMBDA_BUNDLES) {
    mkdirSync(join(dir, name));
    writeFileSync(join(dir, name, 'index.mjs'), `export const handler = async () => ({ batchItemFailures: [], name: ${JSON.stringify(name)} });\n`);
  }
  return dir;
}

export interface BuiltStack {
  readonly app: App;
  readonly stack: ReconcilerStack;
  readonly template: Template;
}

export function buildStack(opts: {
  context?: Record<string, unknown>;
  bundle: (name: LambdaBundle) => ResolvedBundle;
  validation?: boolean;
}): BuiltStack {
  const app = new App({
    context: opts.context ?? {},
    // docs/platform.md: the built-in CloudFormation validation costs ~3 s per synth; one test keeps it on.
    builtinCloudFormationValidation: opts.validation ?? false,
    outdir: temp('vr-cdk-out-'),
  });
  const stack = new ReconcilerStack(app, 'VirtReconcilerTest', {
    settings: readSettings((k) => app.node.tryGetContext(k)),
    bundle: opts.bundle,
    env: { account: '123456789012', region: 'us-east-1' },
  });
  return { app, stack, template: Template.fromStack(stack) };
}

/** Every value of type `type` in the template's Resources. */
export function resourcesOf(template: Template, type: string): Array<{ id: string; props: Record<string, unknown> }> {
  return Object.entries(template.findResources(type)).map(([id, r]) => ({ id, props: ((r as { Properties?: Record<string, unknown> }).Properties ?? {}) }));
}
