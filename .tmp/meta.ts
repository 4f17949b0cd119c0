import { build } from 'esbuild';
import { bundleOptions, ENTRIES } from '/work/main/scripts/build.ts';
const e = ENTRIES.find((x) => x.name === process.argv[2])!;
const r = await build({ ...bundleOptions(e, '/work/main'), outfile: '/tmp/x/index.mjs', metafile: true, write: false });
const out = Object.values(r.metafile.outputs).find((o) => o.entryPoint)!;
const by = new Map<string, number>();
for (const [f, i] of Object.entries(out.inputs)) { const k = f.startsWith('node_modules/') ? f.split('/').slice(0, f.split('/')[1]!.startsWith('@') ? 3 : 2).join('/') : f.split('/').slice(0, 2).join('/'); by.set(k, (by.get(k) ?? 0) + i.bytesInOutput); }
for (const [k, v] of [...by].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log((v / 1024).toFixed(1).padStart(8), k);
