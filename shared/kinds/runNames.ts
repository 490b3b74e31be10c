import { createHash } from 'node:crypto';

/**
 * Names and tokens derived from a job id, for APIs whose own name rules are narrower than Sluice's ids (1-128 of
 * letters, digits, `.`, `_`, `:`, `-`): ECS client tokens and `startedBy` markers, Batch job names.
 *
 * - `sluice-<id>` when every character of the id is allowed and it fits: readable, and the id can be read back.
 * - otherwise `sluiceh-<the id, disallowed characters as _, cut to fit>-<20 hex digits of the id's SHA-256>`.
 *
 * The two forms cannot meet (`sluice-` against `sluiceh`), the first is the id itself and the second carries 80 bits
 * of a hash of the whole id: two ids never share a name (short of a hash collision), and one id always gets the same
 * one. Every name starts with NAME_PREFIX, which is how rules and parsers tell Sluice's runs from the account's others.
 */
export const NAME_PREFIX = 'sluice';

const PLAIN = `${NAME_PREFIX}-`;
const HASHED = `${NAME_PREFIX}h-`;
const HASH_HEX = 20;

export interface NameRules {
  /** The longest name the API takes. */
  readonly maxLength: number;
  /** One character the API takes (a character class, no anchors or quantifier): /[A-Za-z0-9_-]/. */
  readonly allowed: RegExp;
}

export function nameOfJob(jobId: string, rules: NameRules): string {
  const allowed = new RegExp(`^${rules.allowed.source}$`);
  const chars = [...jobId];
  if (PLAIN.length + jobId.length <= rules.maxLength && chars.every((c) => allowed.test(c))) return `${PLAIN}${jobId}`;
  const hash = createHash('sha256').update(jobId).digest('hex').slice(0, HASH_HEX);
  const room = rules.maxLength - HASHED.length - 1 - HASH_HEX;
  if (room < 1) throw new Error(`a name of at most ${rules.maxLength} characters cannot hold a job id's hash`);
  const readable = chars
    .map((c) => (allowed.test(c) ? c : '_'))
    .join('')
    .slice(0, room);
  return `${HASHED}${readable}-${hash}`;
}

/** The job id a name of the plain form was made from; undefined for the hashed form (and for names Sluice did not make). */
export function jobIdOfName(name: string | undefined): string | undefined {
  return name?.startsWith(PLAIN) ? name.slice(PLAIN.length) : undefined;
}
