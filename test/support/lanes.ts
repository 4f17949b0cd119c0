/**
 * The two test lanes: the emulator (`npm test`) and the real control plane
 * (VR_CONTROL_PLANE=real, `npm run test:real`; docs/control-plane.md). What only the emulator
 * has (its knobs, fault injection, history compaction, the frozen clock driving the server) is
 * marked with {@link emulatorOnly}, and skipped on the real lane with the reason as the message.
 */
import { onRealControlPlane } from '../../sandbox/real/control-plane.ts';

/** True when the suites run against the real control plane. */
export const REAL = onRealControlPlane();

/** node:test options that skip a test on the real lane, saying why. */
export function emulatorOnly(why: string): { skip: string | false } {
  return { skip: REAL ? `emulator-only: ${why}` : false };
}

/**
 * node:test options that skip a test on the real lane because it is known to fail there for a
 * reason not yet fixed (listed in docs/control-plane.md); not for emulator-only machinery.
 */
export function knownIssueOnReal(why: string): { skip: string | false } {
  return { skip: REAL ? `known issue on the real lane (docs/control-plane.md): ${why}` : false };
}
