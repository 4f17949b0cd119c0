/**
 * The environment a Lambda bundle runs with, as the CDK stack and the Lambda runtime set it,
 * pointed at the local stand-ins: the Kubernetes API by URL and bearer token, SQS at fauxqs,
 * DynamoDB at DynamoDB Local, credentials as Lambda puts them in the environment.
 */
export interface LocalLambdaTargets {
  readonly apiServer: string;
  readonly token: string;
  readonly queuePrefix: string;
  /** QUEUE_URL_<FN>, DLQ_URL_<FN>, TIMER_QUEUE_URL_<FN> (test/queue/fauxqs.ts `queueUrlEnv`). */
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly table: string;
  readonly sqsEndpoint: string;
  readonly dynamoEndpoint: string;
  readonly functionName: string;
}

export function localLambdaEnv(t: LocalLambdaTargets): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    KUBE_API_SERVER: t.apiServer,
    KUBE_TOKEN: t.token,
    KUBE_INSECURE_SKIP_TLS_VERIFY: 'true',
    QUEUE_PREFIX: t.queuePrefix,
    ...t.queueUrls,
    STATE_TABLE_NAME: t.table,
    AWS_ENDPOINT_URL_SQS: t.sqsEndpoint,
    AWS_ENDPOINT_URL_DYNAMODB: t.dynamoEndpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_LAMBDA_FUNCTION_NAME: t.functionName,
  };
}
