/**
 * The CDK app (`npm run synth`; cdk.json beside this file). Context keys: settings.ts and
 * docs/deploy-aws.md. Every Lambda bundle must exist (`npm run synth` builds them first).
 */
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { bundleResolver } from './bundles.ts';
import { readSettings } from './settings.ts';
import { ReconcilerStack } from './stack.ts';

const app = new App();
const ctx = (k: string): unknown => app.node.tryGetContext(k);
const settings = readSettings(ctx);
const region = (ctx('region') as string | undefined) ?? process.env.CDK_DEFAULT_REGION;
const account = (ctx('account') as string | undefined) ?? process.env.CDK_DEFAULT_ACCOUNT;
new ReconcilerStack(app, (ctx('stackName') as string | undefined) ?? 'VirtReconciler', {
  settings,
  bundle: bundleResolver(join(import.meta.dirname, '..', '..', 'dist')),
  ...(region !== undefined || account !== undefined ? { env: { ...(region !== undefined ? { region } : {}), ...(account !== undefined ? { account } : {}) } } : {}),
  description: 'virt-reconciler: KubeVirt virt-controller as SQS FIFO queues + Lambda functions + DynamoDB',
});
app.synth();
