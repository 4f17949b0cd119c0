/**
 * Type-checks a TypeScript snippet in memory with the project's compiler options, so tests can
 * prove that a value (e.g. a KubeVirt example as an object literal) is assignable to a generated
 * type, excess-property checks included.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';

/** Compiler diagnostics for `code`, one line each; empty when it type-checks. */
export function typecheckSnippet(code: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'virt-reconciler-typecheck-'));
  try {
    const file = join(dir, 'snippet.mts');
    writeFileSync(file, code);
    const program = ts.createProgram([file], {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2024.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      allowImportingTsExtensions: true,
      skipLibCheck: true,
      types: [],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      return where ? `${d.file?.fileName}:${where.line + 1}: ${text}` : text;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
