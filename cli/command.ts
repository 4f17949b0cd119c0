import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A CLI command: parses its own flags and returns the process exit code. */
export interface Command {
  run(argv: string[]): Promise<number>;
}

/** An error meant for the person at the terminal: printed as one line, no stack trace. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

/**
 * `node:util` parseArgs with errors turned into {@link CliError}s a person can act on
 * ("unknown flag --foo", "--port needs a value").
 */
export function parseFlags<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    throw new CliError(msg.replace(/\. To specify a positional argument.*$/s, '').replace(/^Unknown option/, 'unknown flag'));
  }
}

/** Parses a whole, positive number flag or throws a {@link CliError} naming the flag. */
export function intFlag(name: string, value: string | undefined, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new CliError(`--${name} takes a whole number >= ${min}, got '${value}'`);
  return n;
}

/** `--control-plane emulator|real` (default: VR_CONTROL_PLANE, else the emulator). */
export function controlPlaneFlag(value: string | undefined): 'emulator' | 'real' | undefined {
  if (value === undefined) return undefined;
  if (value === 'emulator' || value === 'real') return value;
  throw new CliError(`--control-plane takes 'emulator' or 'real', got '${value}'`);
}
