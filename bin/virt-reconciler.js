#!/usr/bin/env node
// Runs the TypeScript CLI directly on Node 24 (built-in type stripping). `npm exec virt-reconciler`
// and the npm scripts put the project's pinned Node 24 first on PATH.
import { main } from '../cli/main.ts';

process.exitCode = await main(process.argv.slice(2));
