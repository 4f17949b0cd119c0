/**
 * The settings every Lambda of the reconciler shares (docs/architecture.md §6.11): the esbuild bundle from
 * `dist/<name>` (scripts/build.ts), Node 24 on arm64, JSON logs into a log group of our own with
 * a retention, source maps on, and a role that may write only to that log group — no managed
 * policy with `Resource: *` unless VPC placement needs one (ENI management has no narrower form).
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { VpcSettings } from './settings.ts';

/** Lambda runtime: Node 24 (the project's pinned major, docs/platform.md). */
export const RUNTIME = lambda.Runtime.NODEJS_24_X;

export interface BundledFunctionProps {
  /** Folder holding `index.mjs` (the bundle), e.g. `dist/vmi`. */
  readonly assetDir: string;
  readonly functionName: string;
  readonly description: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetentionDays: number;
  readonly vpc?: VpcSettings;
}

/** One Lambda function from a bundle, with its own role and log group. */
export class BundledFunction extends Construct {
  readonly fn: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: BundledFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `/aws/lambda/${props.functionName}`,
      retention: retentionFor(props.logRetentionDays),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.functionName}: least privilege (docs/deploy-aws.md)`,
    });
    // The log group exists before the function (it is ours), so CreateLogGroup is not needed.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [`${this.logGroup.logGroupArn}`],
      }),
    );
    let vpcProps: Pick<lambda.FunctionProps, 'vpc' | 'vpcSubnets' | 'securityGroups'> = {};
    if (props.vpc !== undefined) {
      vpcProps = vpcPlacement(this, props.vpc);
      // ec2:CreateNetworkInterface & co. only accept Resource "*" (AWS documents no narrower form).
      this.role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'));
    }
    this.fn = new lambda.Function(this, 'Function', {
      functionName: props.functionName,
      description: props.description,
      code: lambda.Code.fromAsset(props.assetDir),
      handler: 'index.handler',
      runtime: RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb,
      timeout: Duration.seconds(props.timeoutSeconds),
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      applicationLogLevelV2: lambda.ApplicationLogLevel.INFO,
      systemLogLevelV2: lambda.SystemLogLevel.WARN,
      environment: {
        // The bundle ships its source map; stack traces then name our .ts files.
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      ...vpcProps,
    });
  }
}

function vpcPlacement(scope: Construct, v: VpcSettings): Pick<lambda.FunctionProps, 'vpc' | 'vpcSubnets' | 'securityGroups'> {
  // From ids, not Vpc.fromLookup: synth stays offline and deterministic.
  const azs = v.availabilityZones.length > 0 ? [...v.availabilityZones] : Stack.of(scope).availabilityZones.slice(0, v.subnetIds.length);
  const vpc = ec2.Vpc.fromVpcAttributes(scope, 'Vpc', { vpcId: v.vpcId, availabilityZones: azs, privateSubnetIds: [...v.subnetIds] });
  return {
    vpc,
    vpcSubnets: { subnets: v.subnetIds.map((id, i) => ec2.Subnet.fromSubnetId(scope, `Subnet${i}`, id)) },
    securityGroups: v.securityGroupIds.map((id, i) => ec2.SecurityGroup.fromSecurityGroupId(scope, `Sg${i}`, id)),
  };
}

/** The nearest CloudWatch Logs retention at or above `days`. */
function retentionFor(days: number): logs.RetentionDays {
  const allowed = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653];
  const pick = allowed.find((d) => d >= days) ?? 3653;
  return pick as logs.RetentionDays;
}
