/**
 * Moves SQLite's WAL checkpoints off the event loop. A checkpoint copies the write-ahead log into
 * the database and fsyncs it; run by the main connection (SQLite's auto-checkpoint) it stalls
 * every reconcile, relay send and receive for as long as that takes — the benchmarks' tail
 * latency. Here the main connection never checkpoints (`wal_autocheckpoint = 0`) and a worker
 * thread with its own connection runs a PASSIVE checkpoint every interval: passive checkpoints
 * never block writers, and the WAL stays small.
 */
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 5000');
const tick = () => { try { db.exec('PRAGMA wal_checkpoint(PASSIVE)'); } catch {} };
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  // At shutdown nothing writes any more: fold the whole log back and truncate it.
  try { db.exec('PRAGMA wal_checkpoint(TRUNCATE)'); } catch {}
  db.close();
  parentPort.postMessage('stopped');
});
`;

export class Checkpointer {
  readonly #worker: Worker;

  constructor(path: string, intervalMs = 1000) {
    this.#worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, intervalMs } });
    this.#worker.unref();
  }

  /** Stops the thread after one last full checkpoint. */
  async stop(): Promise<void> {
    const stopped = new Promise<void>((resolve) => {
      this.#worker.once('message', () => resolve());
      this.#worker.once('exit', () => resolve());
    });
    this.#worker.postMessage('stop');
    await stopped;
    await this.#worker.terminate();
  }
}
