import http from 'node:http';
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateTableCommand, DynamoDBClient, GetItemCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawnEmulators } from '../support/spawnEmulators';
import { waitFor } from '../support/waitFor';

let emulators: Awaited<ReturnType<typeof spawnEmulators>>;
beforeAll(async () => {
  emulators = await spawnEmulators();
});
afterAll(() => emulators.stop());

const creds = { accessKeyId: 'local', secretAccessKey: 'local' };

test('the spawned emulators answer real SDK calls on loopback', async () => {
  const sqs = new SQSClient({ endpoint: emulators.sqsEndpoint, region: 'us-east-1', credentials: creds });
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'probe' }));
  await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'hello' }));
  const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 1 }));
  expect(got.Messages?.[0]?.Body).toBe('hello');
  const ddb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: 'us-east-1', credentials: creds });
  expect((await ddb.send(new ListTablesCommand({}))).TableNames).toEqual([]);
  expect(emulators.sqsEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with exactly these headers (node:http adds only Host, and Content-Length for a body). */
function request(endpoint: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${endpoint}/`, { method, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const corsHeaders = (answer: Answer) => Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'));

// What a page on another origin would send: the preflight of a signed PutItem (any signature passes locally), the
// PutItem itself, and a no-cors GET (no Origin on it, only the fetch metadata headers a browser adds).
describe('requests a web page sends are refused with 403 and no CORS headers', () => {
  const PAGE = 'http://127.0.0.1:9';
  const putItem = JSON.stringify({ TableName: 'web', Item: { pk: { S: 'from-a-page' } } });
  const signed = {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'DynamoDB_20120810.PutItem',
    'x-amz-date': '20260101T000000Z',
    authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00',
  };

  beforeAll(async () => {
    const ddb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: 'us-east-1', credentials: creds });
    await ddb.send(
      new CreateTableCommand({
        TableName: 'web',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
  });

  test('DynamoDB: the preflight, the write, and a no-cors GET; nothing is written; one line each on stderr', async () => {
    const preflight = await request(emulators.dynamodbEndpoint, 'OPTIONS', {
      origin: PAGE,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,x-amz-date,x-amz-target',
    });
    expect([preflight.status, corsHeaders(preflight)]).toEqual([403, []]);
    const put = await request(emulators.dynamodbEndpoint, 'POST', { ...signed, origin: PAGE }, putItem);
    expect([put.status, corsHeaders(put)]).toEqual([403, []]);
    const get = await request(emulators.dynamodbEndpoint, 'GET', { 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'cross-site' });
    expect([get.status, corsHeaders(get)]).toEqual([403, []]);

    const ddb = new DynamoDBClient({ endpoint: emulators.dynamodbEndpoint, region: 'us-east-1', credentials: creds });
    expect((await ddb.send(new GetItemCommand({ TableName: 'web', Key: { pk: { S: 'from-a-page' } }, ConsistentRead: true }))).Item).toBe(
      undefined,
    );
    // The same request without Origin is what the SDK sends: it is answered (any signature passes locally).
    expect((await request(emulators.dynamodbEndpoint, 'POST', signed, putItem)).status).toBe(200);

    for (const line of [
      `refused a web page's request to the local DynamoDB emulator: OPTIONS / from ${PAGE}`,
      `refused a web page's request to the local DynamoDB emulator: POST / from ${PAGE}`,
      `refused a web page's request to the local DynamoDB emulator: GET / from Sec-Fetch-Site cross-site`,
    ])
      await waitFor(line, () => emulators.stderr().includes(line), 20_000);
  });

  test('SQS: a no-cors form POST (a simple request, sent without a preflight) and a no-cors GET', async () => {
    const form = await request(
      emulators.sqsEndpoint,
      'POST',
      { origin: PAGE, 'content-type': 'application/x-www-form-urlencoded' },
      'Action=CreateTopic&Name=from-a-page',
    );
    expect([form.status, corsHeaders(form)]).toEqual([403, []]);
    const get = await request(emulators.sqsEndpoint, 'GET', { 'sec-fetch-mode': 'no-cors', 'sec-fetch-site': 'same-site' });
    expect(get.status).toBe(403);
    await waitFor('the SQS refusal', () => emulators.stderr().includes(`local SQS emulator: POST / from ${PAGE}`), 20_000);
  });
});
