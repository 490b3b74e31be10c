import * as z from 'zod';
import { base } from '../../domain/job';

export const GLUE_KIND = 'glue';

/**
 * Characters the Glue API accepts (https://docs.aws.amazon.com/glue/latest/dg/aws-glue-api-common.html, "String
 * patterns"): names follow its "Single-line string pattern" [\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\t]
 * (the surrogate range there means well-formed pairs, U+10000-U+10FFFF). StartJobRun's Arguments (GenericMap) are
 * documented only as "UTF-8 string"; they get the most permissive documented class, the "URI address multi-line string
 * pattern" (the same plus \r and \n). Either way U+FFFE, U+FFFF, lone surrogates and other control characters are out:
 * Glue would refuse the start, so such a spec is refused here, at parse, instead of failing at every start.
 */
const GLUE_NAME_TEXT = /^[\t\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]+$/u;
const GLUE_MULTILINE_TEXT = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;

const glueArguments = z.record(
  z.string().min(1).max(1024).regex(GLUE_MULTILINE_TEXT),
  z
    .string()
    .max(262_144)
    .regex(GLUE_MULTILINE_TEXT, 'argument value has characters Glue rejects (control characters, U+FFFE, U+FFFF or a lone surrogate)'),
  // zod reports a bad key only as "Invalid key in record": say what is wrong.
  {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? 'argument name must be 1-1024 characters Glue accepts (no control characters, U+FFFE, U+FFFF or lone surrogates)'
        : undefined,
  },
);

/** Glue job names: 1-255 characters; arguments are string to string, keys usually start with "--". */
export const GlueJobSchema = z
  .object({
    ...base,
    kind: z.literal(GLUE_KIND),
    jobName: z.string().min(1).max(255).regex(GLUE_NAME_TEXT, 'jobName has characters Glue rejects'),
    arguments: glueArguments.optional(),
  })
  .strict();

export type GlueJob = z.infer<typeof GlueJobSchema>;
