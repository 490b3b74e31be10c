import * as z from 'zod';
import { base } from '../../domain/job';

export const APPFLOW_KIND = 'appflow';

/** AppFlow flow names: [a-zA-Z0-9][\w!@#.-]+, at most 256 characters. */
export const AppFlowJobSchema = z
  .object({
    ...base,
    kind: z.literal(APPFLOW_KIND),
    flowName: z.string().regex(/^[a-zA-Z0-9][\w!@#.-]{0,255}$/, 'flowName is not a valid AppFlow flow name'),
  })
  .strict();

export type AppFlowJob = z.infer<typeof AppFlowJobSchema>;
