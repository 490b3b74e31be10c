import * as z from 'zod';
import { JobSpecSchema } from './registry';

/**
 * A job message as JSON Schema (draft 2020-12), made from the very schemas the acquirer parses with, for producers
 * in other languages to check a message before they send it. `sluice schema` prints it; docs/job-message.schema.json is
 * a copy kept equal by a test. What JSON Schema cannot say (limits that must not repeat, say) the acquirer still
 * refuses with its reason, in the dead-letter queue. `id` is not required: a message without one is keyed by its SQS
 * message id (each send is then a new job).
 */
export function jobMessageJsonSchema(): Record<string, unknown> {
  return portablePatterns(generatedSchema()) as Record<string, unknown>;
}

function generatedSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(JobSpecSchema as z.ZodType, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown> & {
    oneOf?: Array<{ required?: string[] }>;
  };
  const variants = (generated.oneOf ?? []).map((variant) => ({ ...variant, required: (variant.required ?? []).filter((f) => f !== 'id') }));
  return {
    $schema: generated.$schema,
    title: 'Sluice job message',
    description: "The body of one message on Sluice's job queue: one job of one kind, told apart by `kind`.",
    oneOf: variants,
    ...(generated.$defs !== undefined && { $defs: generated.$defs }),
  };
}

/** `^[<ranges>\u{10000}-\u{10FFFF}]<quantifier>$`: a class of allowed characters that needs the u flag. */
const ASTRAL_CLASS = /^\^\[((?:\\[tnr]|\\u[0-9A-Fa-f]{4}-\\u[0-9A-Fa-f]{4})+)\\u\{10000\}-\\u\{10FFFF\}\]([*+])\$$/;
const ESCAPES: Record<string, number> = { t: 0x09, n: 0x0a, r: 0x0d };
const hex4 = (code: number) => `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * JSON Schema's patterns are ECMA-262 regular expressions, read without the u flag by most validators (and by Python's
 * re, which knows no `\u{...}`): a class of allowed characters that names the astral planes is rewritten as the class of
 * the BMP characters it refuses, which every engine reads alike (an astral character is allowed either as one code
 * point or as a pair of surrogates). Lone surrogates then pass the schema; the acquirer still refuses them.
 */
function portablePatterns(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portablePatterns);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      if (key !== 'pattern' || typeof value !== 'string') return [key, portablePatterns(value)];
      const match = ASTRAL_CLASS.exec(value);
      if (!match) return [key, value];
      const allowed: Array<[number, number]> = [[0xd800, 0xdfff]];
      for (const item of match[1]!.match(/\\[tnr]|\\u[0-9A-Fa-f]{4}-\\u[0-9A-Fa-f]{4}/g)!) {
        if (item.length === 2) allowed.push([ESCAPES[item[1]!]!, ESCAPES[item[1]!]!]);
        else allowed.push([parseInt(item.slice(2, 6), 16), parseInt(item.slice(9, 13), 16)]);
      }
      allowed.sort((a, b) => a[0] - b[0]);
      const refused: string[] = [];
      let next = 0;
      for (const [from, to] of allowed) {
        if (from > next) refused.push(from - 1 === next ? hex4(next) : `${hex4(next)}-${hex4(from - 1)}`);
        next = Math.max(next, to + 1);
      }
      if (next <= 0xffff) refused.push(next === 0xffff ? hex4(next) : `${hex4(next)}-${hex4(0xffff)}`);
      return [key, `^[^${refused.join('')}]${match[2]}$`];
    }),
  );
}
