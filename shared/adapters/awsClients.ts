import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The AWS clients, made once per process. Region, credentials and endpoints come from the SDK's standard
 * configuration (AWS_REGION, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>, ...), so any AWS-compatible endpoint works.
 * The job APIs get one attempt: a throttled start must reach Sluice at once, which frees the slot and backs off.
 * SQS sends to the configured endpoint, not to the host inside a queue URL: emulators hand out URLs whose host
 * does not resolve (on AWS the two are the same).
 */
export interface AwsClients {
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  doc: DynamoDBDocumentClient;
}

let clients: AwsClients | undefined;

export function awsClients(): AwsClients {
  if (!clients) {
    const dynamodb = new DynamoDBClient({});
    clients = {
      sqs: new SQSClient({ useQueueUrlAsEndpoint: false }),
      dynamodb,
      doc: DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true } }),
    };
  }
  return clients;
}

type Listener = (service: string, client: unknown) => void;
const jobApiClients = new Map<string, unknown>();
const listeners: Listener[] = [];

/**
 * The process's one client of a job API (each kind's starter asks for its own, by the SDK's service id), made by
 * `make` on first use.
 */
export function jobApiClient<C>(service: string, make: () => C): C {
  let client = jobApiClients.get(service) as C | undefined;
  if (client === undefined) {
    client = make();
    jobApiClients.set(service, client);
    for (const listener of listeners) listener(service, client);
  }
  return client;
}

/** Told of every job API client, those made already and those made later (the local stack counts their requests). */
export function onJobApiClient(listener: Listener): void {
  listeners.push(listener);
  for (const [service, client] of jobApiClients) listener(service, client);
}
