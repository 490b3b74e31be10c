import type { IncomingMessage, RequestListener, Server } from 'node:http';

/** A request an emulator refused because a web page sent it. */
export interface BrowserRefusal {
  emulator: string;
  method: string;
  path: string;
  /** the Origin header, or the Sec-Fetch-Site header's value for a request without one */
  from: string;
}

/**
 * The emulators answer any signature (dynalite checks only that one is there, fauxqs not even that) and dynalite answers
 * every CORS preflight with `Access-Control-Allow-Origin: *`, so without this any web page open in the user's browser
 * could read and write the local table and queues on their fixed ports. The AWS SDK never sends `Origin` or the
 * `Sec-Fetch-*` headers; a browser adds them itself and a page can neither set nor remove them (forbidden header names):
 * - `Origin` on every CORS request (preflights included) and on every request whose method is neither GET nor HEAD,
 *   so on each no-cors POST too (https://fetch.spec.whatwg.org/#origin-header, step "append a request Origin header");
 * - `Sec-Fetch-Mode`/`Sec-Fetch-Site` on every request to a potentially trustworthy URL, which http://127.0.0.1 is,
 *   so also on a no-cors GET, which has no Origin
 *   (https://developer.mozilla.org/en-US/docs/Web/HTTP/Guides/Fetch_metadata).
 * A request with any of them is answered 403 before the emulator sees it, with no CORS header, so a preflight fails
 * and a no-cors request has no effect.
 *
 * The server's request listener is replaced by one that checks first (as local/dynaliteTransactions.ts does), so a
 * restart of the listener (Emulators.restart) keeps the check.
 */
export function refuseBrowserRequests(server: Server, emulator: string, onRefused: (refusal: BrowserRefusal) => void): Server {
  const listeners = server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected the ${emulator}'s one request listener, found ${listeners.length}`);
  const [serve] = listeners as [RequestListener];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res) => {
    const from = browserOf(req);
    if (from === undefined) return serve(req, res);
    onRefused({ emulator, method: req.method ?? '', path: (req.url ?? '/').split('?')[0]!, from });
    // The body is not read: the connection closes after the answer, so nothing of it is taken for a next request.
    res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
    res.end(`the local ${emulator} answers only the AWS SDK, not web pages\n`);
  });
  return server;
}

/** What says a browser sent the request, or undefined for a request with none of the headers only browsers send. */
export function browserOf(req: Pick<IncomingMessage, 'headers'>): string | undefined {
  const origin = req.headers.origin;
  if (origin !== undefined) return origin;
  const site = req.headers['sec-fetch-site'] ?? req.headers['sec-fetch-mode'];
  return site === undefined ? undefined : `Sec-Fetch-Site ${String(site)}`;
}

/**
 * One line per emulator, method and origin on stderr (the terminal of `npm start -- --serve`), so a page that retries
 * cannot flood it; after 100 different ones, nothing more.
 */
export function refusalLogger(write: (line: string) => void): (refusal: BrowserRefusal) => void {
  const seen = new Set<string>();
  return (refusal) => {
    const key = `${refusal.emulator} ${refusal.method} ${refusal.from}`;
    if (seen.has(key) || seen.size >= 100) return;
    seen.add(key);
    write(
      `refused a web page's request to the local ${refusal.emulator}: ${refusal.method} ${refusal.path} from ${refusal.from} (the emulators answer only the AWS SDK)`,
    );
  };
}
