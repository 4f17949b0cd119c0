/**
 * Duplicate object keys in a request body. `JSON.parse` silently keeps the last of two equal
 * keys; the real server's strict decoder (sigs.k8s.io/json) reports each repeat as
 * `duplicate field "spec.ports[0].hostPort"`, and a YAML body through go-yaml as
 * `line 7: key "paused" already set in map`. Both readers here only look for repeats: the body
 * has already been parsed once, so syntax errors are not their concern.
 */
import { parseDocument } from 'yaml';

/** `spec.ports[0].hostPort`: how upstream's strict decoder spells a field path. */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

const DELIMITERS = new Set([',', '}', ']', ' ', '\n', '\r', '\t']);

interface Frame {
  path: string;
  /** Keys seen so far (objects) — undefined for arrays. */
  seen?: Set<string>;
  /** Next array index. */
  index: number;
  /** The key whose value comes next (objects). */
  key?: string;
}

/** Paths of repeated keys in a JSON text, in document order. */
export function duplicateJsonFields(text: string): string[] {
  return hasRepeatedKeys(text) ? repeatedKeyPaths(text) : [];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const COLON = 0x3a;

/**
 * Whether any object in a JSON text repeats a key: the common answer (no) without spelling a
 * path. A string is a key when a colon follows it; keys are compared as written, decoded only
 * when they hold an escape.
 */
function hasRepeatedKeys(text: string): boolean {
  const stack: (Set<string> | undefined)[] = [];
  let top: Set<string> | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // The closing quote: the first one after an even run of backslashes (none included).
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) return false;
        let k = j - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      if (top) {
        let k = j + 1;
        while (k < text.length && (text.charCodeAt(k) === 0x20 || text.charCodeAt(k) === 0x0a || text.charCodeAt(k) === 0x0d || text.charCodeAt(k) === 0x09)) k++;
        if (text.charCodeAt(k) === COLON) {
          const raw = text.slice(i + 1, j);
          const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
          if (top.has(key)) return true;
          top.add(key);
        }
      }
      i = j;
    } else if (c === OPEN_OBJECT || c === OPEN_LIST) {
      stack.push(top);
      top = c === OPEN_OBJECT ? new Set() : undefined;
    } else if (c === CLOSE_OBJECT || c === CLOSE_LIST) {
      top = stack.pop();
    }
  }
  return false;
}

/** The paths of {@link duplicateJsonFields}, for a text known to repeat a key. */
function repeatedKeyPaths(text: string): string[] {
  const out: string[] = [];
  const stack: Frame[] = [];
  // Where the value about to start lives (the path of a key's value, or of an array item).
  const valuePath = (): string => {
    const top = stack.at(-1);
    if (!top) return '';
    if (top.seen) return fieldPath(top.path, top.key ?? '');
    return fieldPath(top.path, top.index);
  };
  const valueDone = (): void => {
    const top = stack.at(-1);
    if (top && !top.seen) top.index++;
    else if (top) top.key = undefined;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '{' || c === '[') {
      const path = valuePath();
      stack.push(c === '{' ? { path, seen: new Set(), index: 0 } : { path, index: 0 });
    } else if (c === '}' || c === ']') {
      stack.pop();
      valueDone();
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (top?.seen && top.key === undefined) {
        // A key: the next non-space character is ':'.
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.seen.has(key)) out.push(fieldPath(top.path, key));
        top.seen.add(key);
        top.key = key;
      } else valueDone();
      i = j;
    } else if (c === '-' || (c >= '0' && c <= '9') || c === 't' || c === 'f' || c === 'n') {
      // A number or literal: runs to the next delimiter.
      while (i + 1 < text.length && !DELIMITERS.has(text[i + 1]!)) i++;
      valueDone();
    }
  }
  return out;
}

/** go-yaml's words for repeated keys in a YAML (or JSON-as-YAML) text, in document order. */
export function duplicateYamlKeys(text: string): string[] {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  return doc.errors
    .filter((e) => e.code === 'DUPLICATE_KEY')
    .map((e) => {
      const line = text.slice(0, e.pos[0]).split('\n').length;
      const key = keyAt(text, e.pos[0]);
      return `line ${line}: key ${JSON.stringify(key)} already set in map`;
    });
}

/** The key that starts at `offset` (quoted or plain). */
function keyAt(text: string, offset: number): string {
  const rest = text.slice(offset);
  const quoted = /^"((?:[^"\\]|\\.)*)"/.exec(rest) ?? /^'([^']*)'/.exec(rest);
  if (quoted) return quoted[1]!;
  return /^[^:\s,{}[\]]+/.exec(rest)?.[0] ?? '';
}
