import assert from 'node:assert/strict';
import { LAMBDA_BUNDLES } from '../../../infra/aws/bundles.ts';
import { CONTROLLER_REGISTRY, CONTROLLERS } from '../../../shared/controllers.ts';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { App, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Match } from 'aws-cdk-lib/assertions';
import { bundleResolver } from '../../../infra/aws/bundles.ts';
import { DEFAULT_BUDGET, planConcurrency, readSettings } from '../../../infra/aws/settings.ts';
import { buildBundles } from '../../../scripts/build.ts';
import { buildStack, fixtureDist, removeTemps, resourcesOf } from './support.ts';

const cleanup: string[] = [];
after(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
  removeTemps();
});

describe('apiserver budget → maxConcurrency', () => {
  // Expectations follow the registry: a controller added changes the split, not the rules.
  const floors = 2 * CONTROLLERS.length;
  const cases = [
    { why: `default: 200 QPS, 5 calls, 0.175 s, batch 1 → 7 in flight; over budget when Lambda's floors (${floors}) exceed it`, budget: { apiQpsBudget: 200, apiCallsPerReconcile: 5, reconcileSeconds: 0.175 }, batch: 1, inFlight: 7, over: floors > 7 },
    { why: 'a bigger budget is split by weight and fits', budget: { apiQpsBudget: 1600, apiCallsPerReconcile: 5, reconcileSeconds: 0.175 }, batch: 1, inFlight: 56, over: false },
    { why: 'batch 10 cannot fit: Lambda floor of 2 per source, flagged over budget', budget: { apiQpsBudget: 200, apiCallsPerReconcile: 5, reconcileSeconds: 0.175 }, batch: 10, inFlight: 7, over: true },
  ];
  const weight = (c: (typeof CONTROLLERS)[number]) => CONTROLLER_REGISTRY.find((r) => r.name === c)!.weight;
  for (const c of cases) {
    test(c.why, () => {
      // arrange: the case
      // act
      const plan = planConcurrency(c.budget, c.batch);
      // assert
      assert.equal(plan.inFlightBudget, c.inFlight);
      assert.equal(plan.overBudget, c.over);
      for (const ctl of CONTROLLERS) assert.ok(plan.maxConcurrency[ctl] >= 2, `${ctl}: AWS's floor is 2`);
      for (const a of CONTROLLERS) for (const b of CONTROLLERS) if (weight(a) > weight(b)) assert.ok(plan.maxConcurrency[a] >= plan.maxConcurrency[b], `${a} (weight ${weight(a)}) gets at least ${b}'s share`);
      if (!c.over) {
        assert.ok(plan.peakQps <= c.budget.apiQpsBudget + 1e-6, `peak ${plan.peakQps} must stay inside ${c.budget.apiQpsBudget}`);
        assert.equal(CONTROLLERS.reduce((s, ctl) => s + plan.maxConcurrency[ctl], 0) * c.batch, c.inFlight, 'the whole in-flight budget is handed out');
      }
      if (c.batch === 10) assert.ok(CONTROLLERS.every((ctl) => plan.maxConcurrency[ctl] === 2));
    });
  }

  test('batching keeps the plan of batch 1 while a batch runs its keys one at a time (batchConcurrency 1, the default)', () => {
    // arrange
    const big = { ...DEFAULT_BUDGET, apiQpsBudget: 1600 };
    // act
    const one = planConcurrency(big, 1);
    const batchedSequential = planConcurrency(big, 10, 1);
    const batchedConcurrent = planConcurrency(big, 10, 10);
    const settings = readSettings((k) => ({ batchSize: '10', apiQpsBudget: '1600' })[k]);
    // assert
    assert.deepEqual(batchedSequential.maxConcurrency, one.maxConcurrency);
    assert.equal(batchedSequential.peakQps, one.peakQps);
    assert.equal(batchedConcurrent.inFlightPerInstance, 10);
    assert.ok(batchedConcurrent.peakQps > one.peakQps * 4, 'ten keys in flight per instance need a budget ten times larger');
    assert.equal(settings.batchConcurrency, 1, 'default');
    assert.deepEqual(settings.maxConcurrency, one.maxConcurrency);
    const defaults = readSettings(() => undefined);
    assert.equal(defaults.batchSize, 10, 'batch 10 by default, its keys one at a time');
    assert.equal(defaults.batchConcurrency, 1);
    assert.deepEqual(defaults.maxConcurrency, planConcurrency(DEFAULT_BUDGET, 1).maxConcurrency, 'the plan of batch 1');
    assert.throws(() => readSettings((k) => (k === 'batchConcurrency' ? '0' : undefined)), /batchConcurrency/);
  });

  test('context overrides and validation errors name the key', () => {
    const s = readSettings((k) => ({ vmMaxConcurrency: '5', apiQpsBudget: '400', prefix: 'prod' })[k]);
    assert.equal(s.maxConcurrency.vm, 5);
    assert.equal(s.maxConcurrency.vmi, planConcurrency({ ...DEFAULT_BUDGET, apiQpsBudget: 400 }, 1).maxConcurrency.vmi, '400 QPS → 14 in flight, split by weight');
    assert.equal(s.prefix, 'prod');
    assert.throws(() => readSettings((k) => (k === 'batchSize' ? '11' : undefined)), /batchSize/, 'FIFO event sources take at most 10');
    assert.throws(() => readSettings((k) => (k === 'vmiMaxConcurrency' ? '1' : undefined)), /vmiMaxConcurrency/, 'AWS minimum is 2');
    assert.throws(() => readSettings((k) => (k === 'clusterName' ? 'c' : undefined)), /go together/);
    assert.throws(() => readSettings((k) => (k === 'prefix' ? 'a b' : undefined)), /prefix/);
  });
});

describe('cluster access and VPC placement', () => {
  test('with a cluster: EKS env on every reconcile function and one access entry per role into the functions group', () => {
    // arrange
    const dist = fixtureDist();
    cleanup.push(dist);
    const ctx = { clusterName: 'prod', clusterEndpoint: 'https://ABC.gr7.us-east-1.eks.amazonaws.com', clusterCaData: 'Q0E=' };
    // act
    const { template } = buildStack({ context: ctx, bundle: bundleResolver(dist) });
    // assert
    template.resourceCountIs('AWS::EKS::AccessEntry', CONTROLLERS.length);
    template.hasResourceProperties('AWS::EKS::AccessEntry', { ClusterName: 'prod', Type: 'STANDARD', Username: 'virt-reconciler:vmi', KubernetesGroups: ['virt-reconciler:functions'] });
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: 'virt-reconciler-vmi',
      Environment: { Variables: Match.objectLike({ EKS_CLUSTER_NAME: 'prod', EKS_CLUSTER_ENDPOINT: ctx.clusterEndpoint, EKS_CLUSTER_CA_DATA: 'Q0E=' }) },
    });
    template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', { ClusterName: 'prod', Namespace: 'virt-reconciler', ServiceAccount: 'virt-reconciler-relay' });
    // No IAM permission is needed to talk to EKS: the token is a presigned STS call.
    assert.ok(!JSON.stringify(template.toJSON()).includes('"eks:'), 'no eks:* IAM action');
  });

  test('with a VPC: functions in the given subnets and groups; the ENI policy is the one documented wildcard', () => {
    const dist = fixtureDist();
    cleanup.push(dist);
    const ctx = { vpcId: 'vpc-1', subnetIds: 'subnet-a,subnet-b', securityGroupIds: 'sg-1', availabilityZones: 'us-east-1a,us-east-1b' };
    const { template } = buildStack({ context: ctx, bundle: bundleResolver(dist) });
    template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'virt-reconciler-vm', VpcConfig: { SubnetIds: ['subnet-a', 'subnet-b'], SecurityGroupIds: ['sg-1'] } });
    const roles = resourcesOf(template, 'AWS::IAM::Role');
    // Every function's role (not the relay's Pod Identity role, not the sweep schedules' roles).
    const lambdaRoles = roles.filter((x) => JSON.stringify(x.props.AssumeRolePolicyDocument).includes('lambda.amazonaws.com'));
    assert.equal(lambdaRoles.length, resourcesOf(template, 'AWS::Lambda::Function').length);
    for (const r of lambdaRoles) assert.match(JSON.stringify(r.props.ManagedPolicyArns), /AWSLambdaVPCAccessExecutionRole/);
    for (const r of roles.filter((x) => !lambdaRoles.includes(x))) assert.equal(r.props.ManagedPolicyArns, undefined, `${r.id}: no managed policy`);
  });
});

describe('bundles', () => {
  test('a missing bundle stops the synth with an error naming npm run build (never deploys code it lacks)', () => {
    const empty = mkdtempSync(join(tmpdir(), 'vr-empty-dist-'));
    cleanup.push(empty);
    assert.throws(() => bundleResolver(empty)('vmi'), /vmi\/index\.mjs is missing: run `npm run build/);
    assert.throws(() => buildStack({ bundle: bundleResolver(empty) }), /npm run build/);
  });

  test('real esbuild bundles: every Lambda bundle is staged as its function asset, byte for byte', async () => {
    // arrange
    const out = mkdtempSync(join(tmpdir(), 'vr-dist-'));
    cleanup.push(out);
    const built = await buildBundles({ outDir: out, only: [...LAMBDA_BUNDLES], log: () => {} });
    assert.deepEqual(built.built.map((b) => b.name).sort(), [...CONTROLLERS, 'timer-forwarder'].sort(), 'every Lambda entry exists and builds');
    // act
    const { app, template } = buildStack({ bundle: bundleResolver(out) });
    const assembly = app.synth();
    // assert
    for (const b of built.built) {
      const fn = resourcesOf(template, 'AWS::Lambda::Function').find((f) => f.props.FunctionName === `virt-reconciler-${b.name}`)!;
      const key = String((fn.props.Code as { S3Key: string }).S3Key).replace(/\.zip$/, '');
      const staged = join(assembly.directory, `asset.${key}`, 'index.mjs');
      assert.ok(existsSync(staged), `${b.name}: staged asset ${staged}`);
      assert.equal(statSync(staged).size, b.bytes, `${b.name}: the deployed code is the esbuild bundle`);
      assert.ok(readFileSync(staged, 'utf8').startsWith("import{createRequire}from'module'"), 'ESM with the createRequire banner');
    }
    const manifest = JSON.parse(readFileSync(built.manifestPath, 'utf8')) as { bundles: Record<string, { bytes: number }> };
    assert.equal(manifest.bundles['timer-forwarder']?.bytes, built.built.find((b) => b.name === 'timer-forwarder')?.bytes);
  });
});

describe('CloudFormation validation (built-in, on)', () => {
  test('the real stack passes CDK built-in CloudFormation validation with default rules as errors', () => {
    // arrange
    const dist = fixtureDist();
    cleanup.push(dist);
    // act / assert: synth throws if a rule fails (validateAgainstDefaultRules turns warnings into errors)
    const { app } = buildStack({ bundle: bundleResolver(dist), validation: true, context: { '@aws-cdk/core:validateAgainstDefaultRules': true } });
    assert.doesNotThrow(() => app.synth());
  });

  test('control: the same validation rejects a FIFO queue with a standard DLQ (so the check above is live)', () => {
    const app = new App({ builtinCloudFormationValidation: true, context: { '@aws-cdk/core:validateAgainstDefaultRules': true }, outdir: mkdtempSync(join(tmpdir(), 'vr-cdk-bad-')) });
    cleanup.push(app.outdir);
    const stack = new Stack(app, 'Bad');
    const dlq = new sqs.Queue(stack, 'Dlq');
    new sqs.Queue(stack, 'Q', { fifo: true, deadLetterQueue: { queue: dlq, maxReceiveCount: 3 } });
    assert.throws(() => app.synth(), /ValidationFailed|Validation failed/);
    const report = readFileSync(join(app.outdir, 'validation-report.json'), 'utf8');
    assert.match(report, /E3502/, 'the rule that catches a FIFO queue redriving to a standard queue');
  });
});
