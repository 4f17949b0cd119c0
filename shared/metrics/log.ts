/**
 * Structured JSON logs, one line each, every line carrying its context
 * (`{controller, key, uid, resourceVersion, attempt, reason}` — docs/operations.md).
 */
export type Fields = Record<string, unknown>;

export interface Logger {
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** A logger that adds `fields` to every line. */
  with(fields: Fields): Logger;
}

/** The part of a {@link Logger} a reconcile writes to: controllers' deps declare this one. */
export type ReconcileLogger = Pick<Logger, 'info' | 'warn'>;

export interface LoggerOptions {
  /** Where lines go; default stderr. */
  readonly write?: (line: string) => void;
  /** Drop `info` lines (warnings and errors still go out). */
  readonly quiet?: boolean;
  readonly now?: () => number;
}

export function jsonLogger(base: Fields = {}, opts: LoggerOptions = {}): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const now = opts.now ?? Date.now;
  const emit = (level: string, message: string, fields?: Fields) => {
    if (level === 'info' && opts.quiet) return;
    write(JSON.stringify({ time: new Date(now()).toISOString(), level, message, ...base, ...fields }));
  };
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    with: (fields) => jsonLogger({ ...base, ...fields }, opts),
  };
}

/** A logger that writes nothing (tests that assert on other things). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {}, with: () => silentLogger };
