/**
 * `npm test` on a machine without Java: the system's `java` hidden (a private mount namespace binds
 * /dev/null over it, which needs root, as CI has; elsewhere the test skips, saying so), the runner's
 * JRE from the npm registry (scripts/jre.ts) runs DynamoDB Local, which answers.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { npmJava } from '../../scripts/jre.ts';
import { projectRoot } from '../support/reference.ts';

/** The system's java binary behind the PATH's links, or undefined without one. */
function systemJava(): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v java'], { encoding: 'utf8' });
  return which.status === 0 ? realpathSync(which.stdout.trim()) : undefined;
}

/** Runs a command with `hide` covered by /dev/null in a mount namespace of its own; undefined when that cannot be done here. */
function withHidden(hide: string, command: string[]): ReturnType<typeof spawnSync> | undefined {
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount --bind /dev/null "$1"', 'sh', hide], { encoding: 'utf8' });
  if (probe.status !== 0) return undefined;
  return spawnSync('unshare', ['-m', 'sh', '-c', 'mount --bind /dev/null "$1" && shift && exec "$@"', 'sh', hide, ...command], { encoding: 'utf8', cwd: projectRoot, timeout: 240_000 });
}

const java = systemJava();
const skip = java === undefined ? false : spawnSync('unshare', ['-m', 'true']).status === 0 ? false : 'hiding the system java needs a mount namespace (root): unshare -m is refused here';

test('without a system Java, DynamoDB Local runs on the npm registry\'s JRE', { skip }, () => {
  // arrange
  const probe = join(projectRoot, 'test', 'fixtures', 'no-java', 'dynamodb-probe.ts');
  const command = [process.execPath, probe];
  // act
  const r = java === undefined ? spawnSync(command[0]!, command.slice(1), { encoding: 'utf8', cwd: projectRoot, timeout: 240_000 }) : withHidden(java, command);
  // assert
  assert.ok(r, 'the mount namespace was available');
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  const out = JSON.parse(String(r.stdout).trim().split('\n').at(-1)!) as { systemJava: number | null; java: string; major: number | null; tables: string[] | null };
  assert.equal(out.systemJava, null, 'the system java does not run in there');
  assert.equal(out.java, npmJava, 'the npm JRE ran the emulator');
  assert.equal(out.major, 17);
  assert.deepEqual(out.tables, [], 'DynamoDB Local answered ListTables');
});
