import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { jobApiClient } from '../../../adapters/awsClients';
import type { TargetMessage } from '../messages';
import type { TargetSender } from './sender';

/**
 * An asynchronous invoke of the user's function (InvocationType Event): Lambda queues the event and answers 202. Lambda
 * retries a failing function twice by itself; its own delivery is at least once, like the others.
 */
export class LambdaSender implements TargetSender {
  constructor(private readonly lambda: LambdaClient) {}

  async send(functionName: string, message: TargetMessage): Promise<void> {
    await this.lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        Payload: new TextEncoder().encode(JSON.stringify(message)),
      }),
    );
  }
}

export const createLambdaSender = (): LambdaSender => new LambdaSender(jobApiClient('lambda', () => new LambdaClient({ maxAttempts: 1 })));
