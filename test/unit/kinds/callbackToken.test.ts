import fc from 'fast-check';
import { KEYS_MAX_AGE_MS, keysToCheck, REREAD_MIN_INTERVAL_MS, TokenKeyring, type TokenKeys } from '../../../shared/kinds/callback/secret';
import {
  checkToken,
  isRunId,
  jobIdInToken,
  makeToken,
  runIdOf,
  runIdOfToken,
  TOKEN_EXPIRY_MARGIN_SECONDS,
  tokenExpiry,
  TokenVerdict,
} from '../../../shared/kinds/callback/token';
import { ManualClock, T0 } from '../../support/fakes/manualClock';

/** Callback tokens (pure: MAC, run, expiry) and the keyring that holds a container's keys (clock injected). */

const KEY = 'key-1';
const run = T0 - 60_000;
const claims = { jobId: 'org:acme.order-7', run, expiresAt: tokenExpiry(T0, 600) };

describe('a token', () => {
  test('checks with the key it was made with, naming its job, its run and its expiry; not with another key', () => {
    const token = makeToken(KEY, claims);
    expect(token).toMatch(/^cb2\.[A-Za-z0-9_-]{43}\.\d+\.\d+\.org:acme\.order-7$/);
    expect(checkToken([KEY], token, T0)).toEqual({
      verdict: TokenVerdict.Valid,
      claims: { ...claims, expiresAt: T0 + (600 + TOKEN_EXPIRY_MARGIN_SECONDS) * 1000 },
      runId: runIdOf('org:acme.order-7', run),
    });
    expect(checkToken(['another key'], token, T0)).toEqual({ verdict: TokenVerdict.Forged });
    // During a rotation: the current key, then the previous one.
    expect(checkToken(['another key', KEY], token, T0).verdict).toBe(TokenVerdict.Valid);
  });

  test('a changed claim, a changed MAC, a MAC of another token, or junk is forged', () => {
    const token = makeToken(KEY, claims);
    const [, mac, runText, expires] = token.split('.');
    const other = makeToken(KEY, { ...claims, jobId: 'order-8' });
    const forged = [
      token.replace('order-7', 'order-8'),
      token.replace(`.${runText}.`, `.${Number(runText) + 1}.`),
      token.replace(`.${expires}.`, `.${Number(expires) + 3600}.`),
      `cb2.${mac!.slice(0, -1)}${mac!.endsWith('A') ? 'B' : 'A'}.${runText}.${expires}.org:acme.order-7`,
      `cb2.${other.split('.')[1]}.${runText}.${expires}.org:acme.order-7`,
      `cb1.${mac}.org:acme.order-7`,
      '',
      `cb2.${mac}.${runText}.${expires}.`,
      `cb2.${mac}.${runText}.${expires}.a b`,
      42,
      null,
      undefined,
    ];
    for (const junk of forged) expect([junk, checkToken([KEY], junk, T0).verdict]).toEqual([junk, TokenVerdict.Forged]);
    // Even the longest job id fits a run id's 256 characters.
    expect(makeToken(KEY, { ...claims, jobId: 'x'.repeat(128) }).length).toBeLessThanOrEqual(256);
  });

  test('past its expiry it is expired (its claims read only once its MAC checked)', () => {
    const token = makeToken(KEY, claims);
    const expiresAt = T0 + (600 + TOKEN_EXPIRY_MARGIN_SECONDS) * 1000;
    expect(checkToken([KEY], token, expiresAt - 1).verdict).toBe(TokenVerdict.Valid);
    expect(checkToken([KEY], token, expiresAt)).toMatchObject({ verdict: TokenVerdict.Expired, claims: { expiresAt } });
    expect(checkToken(['another key'], token, expiresAt).verdict).toBe(TokenVerdict.Forged);
  });

  test('its run id is the same for every token of one run (another expiry, another key) and ends nothing', () => {
    const first = makeToken(KEY, claims);
    const later = makeToken('key-2', { ...claims, expiresAt: claims.expiresAt + 5_000 });
    expect(runIdOfToken(first)).toBe(runIdOfToken(later));
    expect(runIdOfToken(first)).toBe(runIdOf(claims.jobId, run));
    const runId = runIdOf(claims.jobId, run);
    expect(isRunId(runId)).toBe(true);
    expect(runId).not.toContain(first.split('.')[1]);
    expect(checkToken([KEY], runId, T0).verdict).toBe(TokenVerdict.Forged);
    expect(jobIdInToken(runId)).toBeUndefined();
  });

  test('property: runs and job ids each have their own run id; a token of one run never checks as another', () => {
    const jobId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/);
    const time = fc.integer({ min: 0, max: 4_102_444_800_000 });
    fc.assert(
      fc.property(jobId, jobId, time, time, (a, b, r1, r2) => {
        fc.pre(a !== b || r1 !== r2);
        expect(runIdOf(a, r1)).not.toBe(runIdOf(b, r2));
        const token = makeToken(KEY, { jobId: a, run: r1, expiresAt: r1 + 1_000_000 });
        const check = checkToken([KEY], token, r1);
        expect(check).toMatchObject({ verdict: TokenVerdict.Valid, runId: runIdOf(a, r1) });
        expect(runIdOfToken(token)).toBe(runIdOf(a, r1));
      }),
    );
  });
});

describe('the keyring (a container keeps its keys, reads them again when due, never more than the rate limit allows)', () => {
  function keyring(values: Array<TokenKeys | Error>) {
    const clock = new ManualClock();
    let reads = 0;
    const read = async () => {
      const next = values[Math.min(reads, values.length - 1)]!;
      reads += 1;
      if (next instanceof Error) throw next;
      return next;
    };
    return { ring: new TokenKeyring(read, clock), clock, reads: () => reads };
  }

  test('reads once, keeps the keys for KEYS_MAX_AGE_MS, then reads them again', async () => {
    const { ring, clock, reads } = keyring([{ current: 'k1' }, { current: 'k2', previous: 'k1' }]);
    expect(await ring.current()).toEqual({ current: 'k1' });
    clock.advance(KEYS_MAX_AGE_MS - 1);
    expect(await ring.current()).toEqual({ current: 'k1' });
    expect(reads()).toBe(1);
    clock.advance(1);
    expect(await ring.current()).toEqual({ current: 'k2', previous: 'k1' });
    expect(reads()).toBe(2);
  });

  test('a token no key checks reads them again at once, but at most once per REREAD_MIN_INTERVAL_MS', async () => {
    const { ring, clock, reads } = keyring([{ current: 'k1' }, { current: 'k2', previous: 'k1' }]);
    await ring.current();
    // Within the interval since the first read: nothing new to learn so soon.
    clock.advance(REREAD_MIN_INTERVAL_MS - 1);
    expect(await ring.reread()).toBeUndefined();
    clock.advance(1);
    expect(await ring.reread()).toEqual({ current: 'k2', previous: 'k1' });
    expect(await ring.current()).toEqual({ current: 'k2', previous: 'k1' });
    // A flood of forged tokens: one read per interval, whatever their number.
    for (let i = 0; i < 100; i++) await ring.reread();
    expect(reads()).toBe(2);
    clock.advance(REREAD_MIN_INTERVAL_MS);
    await Promise.all([ring.reread(), ring.reread(), ring.reread()]);
    expect(reads()).toBe(3);
  });

  test('a failed read keeps the keys read before; with none read yet it fails, and the next call tries again', async () => {
    const failing = keyring([new Error('throttled'), { current: 'k1' }, new Error('throttled again')]);
    await expect(failing.ring.current()).rejects.toThrow('throttled');
    expect(await failing.ring.current()).toEqual({ current: 'k1' });
    failing.clock.advance(KEYS_MAX_AGE_MS);
    expect(await failing.ring.current()).toEqual({ current: 'k1' });
    failing.clock.advance(REREAD_MIN_INTERVAL_MS);
    expect(await failing.ring.reread()).toEqual({ current: 'k1' });
    expect(failing.reads()).toBe(4);
  });

  test('tokens are made with a new current key only once the keyring has known it for REREAD_MIN_INTERVAL_MS', async () => {
    const { ring, clock } = keyring([{ current: 'k1' }, { current: 'k2', previous: 'k1' }]);
    // Never rotated: the current key at once.
    expect(await ring.signingKey()).toBe('k1');
    clock.advance(KEYS_MAX_AGE_MS);
    // Just seen rotated: containers that read the keys less than the interval ago may not read them again yet.
    expect(await ring.signingKey()).toBe('k1');
    clock.advance(REREAD_MIN_INTERVAL_MS - 1);
    expect(await ring.signingKey()).toBe('k1');
    clock.advance(1);
    expect(await ring.signingKey()).toBe('k2');
    // A new container that finds the secret rotated does the same, from its first read.
    const cold = keyring([{ current: 'k2', previous: 'k1' }]);
    expect(await cold.ring.signingKey()).toBe('k1');
    cold.clock.advance(REREAD_MIN_INTERVAL_MS);
    expect(await cold.ring.signingKey()).toBe('k2');
  });

  test('keys are checked current first, then previous', () => {
    expect(keysToCheck({ current: 'a' })).toEqual(['a']);
    expect(keysToCheck({ current: 'a', previous: 'b' })).toEqual(['a', 'b']);
  });
});
