/**
 * The JS heap a process still holds after a full garbage collection: what it retains per object,
 * unlike resident memory, which keeps the pages of garbage already freed (the bench runs every
 * file in one process, so its RSS before a run still holds the earlier runs' freed heap).
 * `--expose-gc` set at run time: the bench needs no special node flags.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

export function retainedHeapBytes(): number {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  // Twice: weak references and finalizers freed by the first collection go in the second.
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
