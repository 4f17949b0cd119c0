/**
 * The cutover's settings from the environment, read the same way by the relay's Deployment and by
 * every Lambda function (docs/cutover.md, docs/deploy-aws.md):
 *
 *   VR_MODE              normal (write while we hold virt-controller's Lease) | shadow (dry-run
 *                        every write while we do not); unset: no cutover at all (tests, a lone
 *                        development deployment)
 *   VR_LEASE_IDENTITY    our holder identity (default virt-reconciler)
 *   KUBEVIRT_NAMESPACE   where the Lease is (default kubevirt)
 */
import { DEFAULT_KUBEVIRT_NAMESPACE } from './lease.ts';

export interface CutoverEnv {
  readonly mode: 'normal' | 'shadow';
  readonly identity: string;
  readonly namespace: string;
}

/** Default holder identity. */
export const DEFAULT_LEASE_IDENTITY = 'virt-reconciler';

/** The settings, or undefined when VR_MODE is unset; a bad VR_MODE is an error naming it. */
export function cutoverEnv(vars: NodeJS.ProcessEnv): CutoverEnv | undefined {
  const mode = vars.VR_MODE;
  if (mode === undefined || mode === '') return undefined;
  if (mode !== 'normal' && mode !== 'shadow') throw new Error(`VR_MODE=${mode}: expected normal or shadow (docs/cutover.md)`);
  return { mode, identity: vars.VR_LEASE_IDENTITY || DEFAULT_LEASE_IDENTITY, namespace: vars.KUBEVIRT_NAMESPACE || DEFAULT_KUBEVIRT_NAMESPACE };
}
