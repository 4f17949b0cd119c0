/**
 * KubeVirt's legacy firmware UUID: UUIDv5 (SHA-1) of the VM name in namespace
 * `6a1a24a1-4061-4607-8bf4-a3963d0c5895`. The VM controller gives it to the VMIs of a VM whose
 * template names none; the restore controller writes it into a VM restored under its own name.
 */
import { createHash } from 'node:crypto';

/** KubeVirt's namespace UUID for firmware UUIDs derived from the VM name. */
export const FIRMWARE_UUID_NAMESPACE = '6a1a24a1-4061-4607-8bf4-a3963d0c5895';

/** RFC 4122 version-5 (SHA-1) UUID of `name` in namespace `ns`. */
export function uuidV5(ns: string, name: string): string {
  const nsBytes = Buffer.from(ns.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(nsBytes).update(name, 'utf8').digest();
  const b = hash.subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x50;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The firmware UUID of a VM named `vmName` whose template names none. */
export const legacyFirmwareUuid = (vmName: string) => uuidV5(FIRMWARE_UUID_NAMESPACE, vmName);
