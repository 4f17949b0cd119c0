/**
 * The one kind of container program the simulated kubelet runs to completion: a shell test of a
 * file on a mounted claim, `bash -c "ls <path> || exit <n>"` (the migration controller's
 * `recover-<migration>` Job, KubeVirt's `ls /meta/migrated || exit 42`). The path is resolved
 * through the container's volume mounts (mount path, sub-path) to a file in a claim
 * ({@link ClaimFiles}); the container exits 0 when it exists, `<n>` when it does not. Any other
 * program runs forever, as before. Pure apart from the read of `files`.
 */
import type { ClaimFiles } from './claim-files.ts';
import type { Container, Pod } from './objects.ts';

const LS_OR_EXIT = /^ls (\S+) \|\| exit (\d+)$/;

/** The script a container runs with `bash -c` / `sh -c`, if it runs one. */
function shellScript(c: Container): string | undefined {
  const argv = [...(c.command ?? []), ...(c.args ?? [])];
  const shell = argv[0]?.split('/').pop();
  if ((shell !== 'bash' && shell !== 'sh') || argv[1] !== '-c' || argv.length !== 3) return undefined;
  return argv[2];
}

/** Where a container path lands: the claim and the path inside it, if a claim is mounted there. */
function claimPathOf(pod: Pod, c: Container, path: string): { claim: string; path: string } | undefined {
  for (const m of c.volumeMounts ?? []) {
    const base = m.mountPath.replace(/\/+$/, '');
    if (path !== base && !path.startsWith(`${base}/`)) continue;
    const claim = pod.spec?.volumes?.find((v) => v.name === m.name)?.persistentVolumeClaim?.claimName;
    if (!claim) return undefined;
    const rest = path.slice(base.length);
    return { claim, path: `${m.subPath ?? ''}/${rest}` };
  }
  return undefined;
}

/**
 * The exit code of each of the pod's containers once they have run, or undefined when one of
 * them is not a program this kubelet can run to completion (the pod keeps running).
 */
export function scriptExitCodes(pod: Pod, files: ClaimFiles): Map<string, number> | undefined {
  const containers = pod.spec?.containers ?? [];
  if (containers.length === 0) return undefined;
  const out = new Map<string, number>();
  for (const c of containers) {
    const m = LS_OR_EXIT.exec(shellScript(c) ?? '');
    if (!m) return undefined;
    const target = claimPathOf(pod, c, m[1]!);
    const found = target !== undefined && files.exists(pod.metadata?.namespace ?? '', target.claim, target.path);
    out.set(c.name, found ? 0 : Number(m[2]));
  }
  return out;
}
