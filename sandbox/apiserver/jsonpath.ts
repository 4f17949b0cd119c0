/**
 * The JSONPath dialect of CRD printer columns (`.status.phase`,
 * `.status.interfaces[0].ipAddress`, `.status.conditions[?(@.type=='Ready')].status`): field
 * steps, `['quoted']` fields, indexes (negative from the end), slices, `[*]` / `.*`, `..field`
 * (recursive descent) and filters comparing a relative path with a literal (`== != < <= > >=`)
 * or testing that it exists. Evaluation yields every match, in document order.
 */
import { isObject } from './types.ts';

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'recursive'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start: number | undefined; end: number | undefined }
  | { kind: 'wildcard' }
  | { kind: 'filter'; path: Step[]; op: string | undefined; value: unknown };

/** A compiled path; `evaluate` returns all matches. */
export interface JsonPath {
  readonly source: string;
  evaluate(root: unknown): unknown[];
}

function fail(source: string, why: string): never {
  throw new Error(`invalid JSONPath ${JSON.stringify(source)}: ${why}`);
}

function literal(raw: string, source: string): unknown {
  const t = raw.trim();
  if (/^'.*'$|^".*"$/.test(t)) return t.slice(1, -1);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t === 'null') return null;
  const n = Number(t);
  if (t !== '' && Number.isFinite(n)) return n;
  return fail(source, `bad literal ${t}`);
}

function parseSteps(text: string, source: string): Step[] {
  const steps: Step[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '.') {
      const recursive = text[i + 1] === '.';
      i += recursive ? 2 : 1;
      if (text[i] === '*') {
        steps.push({ kind: 'wildcard' });
        i++;
        continue;
      }
      const m = /^[^.[\]]+/.exec(text.slice(i));
      if (!m) {
        if (recursive) continue; // `..[…]`: descend, then apply the bracket
        if (i >= text.length) break; // a lone trailing dot: `.` is the root itself
        fail(source, `expected a field name at ${i}`);
      }
      steps.push(recursive ? { kind: 'recursive', name: m[0] } : { kind: 'field', name: m[0] });
      i += m[0].length;
    } else if (c === '[') {
      const close = findClose(text, i, source);
      const inner = text.slice(i + 1, close).trim();
      i = close + 1;
      if (inner === '*') steps.push({ kind: 'wildcard' });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ kind: 'field', name: inner.slice(1, -1) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) steps.push(parseFilter(inner.slice(2, -1), source));
      else if (inner.includes(':')) {
        const [a, b] = inner.split(':').map((s) => (s.trim() === '' ? undefined : Number(s)));
        steps.push({ kind: 'slice', start: a, end: b });
      } else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else fail(source, `unsupported subscript [${inner}]`);
    } else if (c === '@' || c === '$') i++;
    else fail(source, `unexpected ${c} at ${i}`);
  }
  return steps;
}

function findClose(text: string, open: number, source: string): number {
  let depth = 0;
  let quote: string | undefined;
  for (let j = open; j < text.length; j++) {
    const c = text[j]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return j;
  }
  return fail(source, 'unterminated [');
}

function parseFilter(expr: string, source: string): Step {
  const m = /^(@[^=!<>]*?)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(expr.trim());
  if (m) return { kind: 'filter', path: parseSteps(m[1]!.trim(), source), op: m[2], value: literal(m[3]!, source) };
  if (expr.trim().startsWith('@')) return { kind: 'filter', path: parseSteps(expr.trim(), source), op: undefined, value: undefined };
  return fail(source, `unsupported filter ${expr}`);
}

function children(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isObject(v)) return Object.values(v);
  return [];
}

function descend(v: unknown, name: string, out: unknown[]): void {
  if (isObject(v) && name in v) out.push(v[name]);
  for (const c of children(v)) descend(c, name, out);
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    default: {
      if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string')) return false;
      const [x, y] = [a as number | string, b as number | string];
      return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
    }
  }
}

function apply(steps: Step[], roots: unknown[]): unknown[] {
  let cur = roots;
  for (const s of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (s.kind === 'field') {
        if (isObject(v) && v[s.name] !== undefined) next.push(v[s.name]);
      } else if (s.kind === 'recursive') descend(v, s.name, next);
      else if (s.kind === 'wildcard') next.push(...children(v));
      else if (s.kind === 'index') {
        if (Array.isArray(v)) {
          const at = s.index < 0 ? v.length + s.index : s.index;
          if (at >= 0 && at < v.length) next.push(v[at]);
        }
      } else if (s.kind === 'slice') {
        if (Array.isArray(v)) next.push(...v.slice(s.start, s.end));
      } else {
        for (const item of children(v)) {
          const found = apply(s.path, [item]);
          if (s.op === undefined ? found.length > 0 : found.some((f) => compare(f, s.op!, s.value))) next.push(item);
        }
      }
    }
    cur = next;
  }
  return cur;
}

/** Compiles `source` (with or without the `{…}` template braces); throws on syntax errors. */
export function compileJsonPath(source: string): JsonPath {
  let text = source.trim();
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1).trim();
  const steps = parseSteps(text, source);
  return { source, evaluate: (root) => apply(steps, [root]) };
}
