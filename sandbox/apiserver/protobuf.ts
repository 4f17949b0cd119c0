/**
 * The protobuf request bodies kubectl sends (`Content-Type: application/vnd.kubernetes.protobuf`):
 * `DeleteOptions` on DELETE and `Eviction` on pods/eviction (kubectl drain). The wire format is
 * the `k8s\0` magic, then a `runtime.Unknown` envelope (1: typeMeta {1: apiVersion, 2: kind},
 * 2: raw, 3: contentEncoding, 4: contentType) whose `raw` is the message itself. Only those two
 * kinds are decoded — into the JSON shape the rest of the emulator reads; anything else, or a
 * malformed body, is a 400/415 naming the problem.
 */
import { ApiError, badRequest } from './errors.ts';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

/** One field of a message: its number and either a varint or the bytes of a length-delimited value. */
interface Field {
  no: number;
  varint?: bigint;
  bytes?: Buffer;
}

/** Splits a protobuf message into fields; throws a plain Error on malformed input. */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= buf.length) throw new Error('truncated varint');
      if (shift > 63n) throw new Error('varint longer than 64 bits');
      const b = buf[at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return v;
    }
  };
  while (at < buf.length) {
    const key = varint();
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (no === 0) throw new Error('field number 0');
    if (wire === 0) out.push({ no, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (at + len > buf.length) throw new Error(`field ${no}: length ${len} runs past the end of the message`);
      out.push({ no, bytes: buf.subarray(at, at + len) });
      at += len;
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4; // fixed64/fixed32: no field the emulator reads
      if (at > buf.length) throw new Error('truncated fixed-width field');
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

function str(f: Field): string {
  if (!f.bytes) throw new Error(`field ${f.no}: expected a string`);
  return f.bytes.toString('utf8');
}

/** Signed int64 from a varint (two's complement, as Go writes negative int64s). */
function int64(f: Field): number {
  if (f.varint === undefined) throw new Error(`field ${f.no}: expected a varint`);
  return Number(BigInt.asIntN(64, f.varint));
}

function decodePreconditions(buf: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields(buf)) {
    if (f.no === 1) out.uid = str(f);
    else if (f.no === 2) out.resourceVersion = str(f);
  }
  return out;
}

/** metav1.DeleteOptions (1 gracePeriodSeconds, 2 preconditions, 3 orphanDependents, 4 propagationPolicy, 5 dryRun). */
export function decodeDeleteOptions(buf: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
  for (const f of fields(buf)) {
    if (f.no === 1) out.gracePeriodSeconds = int64(f);
    else if (f.no === 2) out.preconditions = decodePreconditions(f.bytes ?? Buffer.alloc(0));
    else if (f.no === 3) out.orphanDependents = int64(f) !== 0;
    else if (f.no === 4) out.propagationPolicy = str(f);
    else if (f.no === 5) ((out.dryRun ??= []) as string[]).push(str(f));
  }
  return out;
}

/** The name and namespace of an ObjectMeta (1 name, 3 namespace, 5 uid); other fields are skipped. */
function decodeObjectMeta(buf: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields(buf)) {
    if (f.no === 1) out.name = str(f);
    else if (f.no === 3) out.namespace = str(f);
    else if (f.no === 5) out.uid = str(f);
  }
  return out;
}

/** policy/v1 Eviction (1 metadata, 2 deleteOptions). */
export function decodeEviction(buf: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: 'Eviction', apiVersion: 'policy/v1', metadata: {} };
  for (const f of fields(buf)) {
    if (f.no === 1) out.metadata = decodeObjectMeta(f.bytes ?? Buffer.alloc(0));
    else if (f.no === 2) out.deleteOptions = decodeDeleteOptions(f.bytes ?? Buffer.alloc(0));
  }
  return out;
}

const DECODERS: Readonly<Record<string, (buf: Buffer) => Record<string, unknown>>> = { DeleteOptions: decodeDeleteOptions, Eviction: decodeEviction };

/** Decodes a `k8s\0` + runtime.Unknown body into the JSON object it carries. */
export function decodeProtobufBody(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw badRequest('the body of the request could not be decoded: protobuf body does not start with the "k8s\\x00" prefix');
  }
  let apiVersion = '';
  let kind = '';
  let raw: Buffer | undefined;
  let decoded: Record<string, unknown>;
  try {
    for (const f of fields(body.subarray(MAGIC.length))) {
      if (f.no === 1) {
        for (const t of fields(f.bytes ?? Buffer.alloc(0))) {
          if (t.no === 1) apiVersion = str(t);
          else if (t.no === 2) kind = str(t);
        }
      } else if (f.no === 2) raw = f.bytes ?? Buffer.alloc(0);
    }
    const decode = DECODERS[kind];
    if (!decode) {
      throw new ApiError(415, 'UnsupportedMediaType', `the sandbox decodes protobuf only for DeleteOptions and Eviction, not ${kind ? `${apiVersion}, Kind=${kind}` : 'a body without a kind'}: send application/json`);
    }
    decoded = decode(raw ?? Buffer.alloc(0));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw badRequest(`the body of the request could not be decoded: malformed protobuf ${kind || 'envelope'}: ${(err as Error).message}`);
  }
  if (apiVersion) decoded.apiVersion = apiVersion;
  return decoded;
}
