/**
 * A worker that dies mid-reconcile (a Lambda timeout, an OOM kill, a node lost). Thrown by fault
 * injection (the chaos suite) to stand for the process vanishing: the local worker pool treats
 * it as a crash and abandons the key WITHOUT settling it, so the key comes back only when its
 * lease (the queue's visibility timeout) runs out — exactly what a real crash leaves behind.
 * Never thrown by production code.
 */
export class WorkerCrash extends Error {
  constructor(message = 'worker killed') {
    super(message);
    this.name = 'WorkerCrash';
  }
}

/** True for a {@link WorkerCrash} (also across bundle copies of this class, by name). */
export function isWorkerCrash(err: unknown): err is WorkerCrash {
  return err instanceof WorkerCrash || (err instanceof Error && err.name === 'WorkerCrash');
}
