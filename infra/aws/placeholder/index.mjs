// Deployed only when `npm run synth` ran before this function's entry existed (a warning says so
// at synth; `-c strictBundles=true` makes it an error). Every invocation fails, so the queue keeps
// the keys (and, after maxReceiveCount, dead-letters them) instead of losing them.
export async function handler() {
  throw new Error('virt-reconciler: this function was deployed without its bundle; run `npm run build` and redeploy');
}
