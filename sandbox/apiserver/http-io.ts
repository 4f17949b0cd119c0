/**
 * Reading request bodies and writing answers: JSON out (with Warning headers when a request
 * earned some), JSON or protobuf (DeleteOptions, Eviction) in, 3 MiB request limit as upstream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest } from './errors.ts';
import { decodeProtobufBody } from './protobuf.ts';

const MAX_BODY = 3 * 1024 * 1024;

/** A decoded request body; `text` is the JSON text as sent (duplicate-field checks need it). */
export interface RequestBody {
  value: unknown;
  text?: string;
}

/** Sends `body` as JSON. */
export function send(res: ServerResponse, code: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * JSON of objects that never change once made — stored objects (store.ts) and the watch events
 * that carry them: a write's watch event and its answer, sent in the same turn of the event loop,
 * are the same text, encoded once. Kept for that turn only: holding the text of every stored
 * object would add a quarter to the emulator's heap for the rare GET that could reuse it.
 */
let storedJsons = new WeakMap<object, string>();
let forgetScheduled = false;

/** `JSON.stringify(obj)` of an object nothing changes any more, encoded once per turn. */
export function storedJson(obj: object): string {
  let text = storedJsons.get(obj);
  if (text === undefined) {
    storedJsons.set(obj, (text = JSON.stringify(obj)));
    if (!forgetScheduled) {
      forgetScheduled = true;
      setImmediate(() => {
        storedJsons = new WeakMap();
        forgetScheduled = false;
      }).unref();
    }
  }
  return text;
}

/** Sends an object nothing changes any more (a stored object) as JSON: {@link storedJson}. */
export function sendStored(res: ServerResponse, code: number, obj: object, headers: Record<string, string | string[]> = {}): void {
  const text = storedJson(obj);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Sends an ApiError as its Status body (Retry-After when it has one). */
export function sendError(res: ServerResponse, err: ApiError): void {
  const headers: Record<string, string> = {};
  if (err.details?.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.details.retryAfterSeconds);
  send(res, err.code, err.toStatus(), headers);
}

/** `299 - "message"` warning header values. */
export function warningHeaders(warnings: readonly string[]): Record<string, string[]> {
  return warnings.length ? { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) } : {};
}

/** The body's bytes, up to the 3 MiB limit. */
export async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads and decodes the body: protobuf by content type, otherwise JSON (empty → undefined). */
export async function readBody(req: IncomingMessage): Promise<RequestBody> {
  const raw = await readRaw(req);
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/vnd.kubernetes.protobuf' && raw.length > 0) return { value: decodeProtobufBody(raw) };
  const text = raw.toString('utf8');
  if (text.trim() === '') return { value: undefined };
  try {
    return { value: JSON.parse(text), text };
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
  }
}
