/**
 * `npm test`'s own promises to a new user: a test file whose set-up fails ends promptly with that
 * error (it cannot hang the run), what the registries provide is installed by the runner, and what
 * cannot be had is named in one line (with the command that installs it, for a system package).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TEST_RUNNER_FLAGS } from '../../scripts/run-tests.ts';
import { ensureTestPrerequisites, missingSystemPrerequisites } from '../../scripts/test-prerequisites.ts';
import { javaCommand, javaMajorVersion } from '../../scripts/jre.ts';
import { projectRoot } from '../support/reference.ts';

describe('npm test', () => {
  test('a file whose before() fails and leaks a server ends with the set-up error instead of hanging', () => {
    // arrange
    const file = join(projectRoot, 'test/fixtures/runner/leaky-setup.ts');
    // Without NODE_TEST_CONTEXT the child is a runner of its own, not a subtest of this one.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    // act: a generous bound that only matters if the runner regresses (the leak held it 5 minutes)
    const r = spawnSync(process.execPath, [...TEST_RUNNER_FLAGS.filter((f) => f !== '--test-concurrency=2'), file], { encoding: 'utf8', timeout: 120_000, env });
    // assert
    assert.equal(r.error, undefined, `the runner did not end by itself: ${r.error?.message}`);
    assert.notEqual(r.status, 0, 'a failed set-up fails the run');
    assert.match(r.stdout, /set-up failed on purpose/, 'the set-up error is what the run reports');
  });

  test('every verdict of a file reaches the report (none lost at exit, as --test-force-exit loses them)', () => {
    // arrange
    const file = join(projectRoot, 'test/fixtures/runner/many-tests.ts');
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    // act
    const r = spawnSync(process.execPath, [...TEST_RUNNER_FLAGS.filter((f) => f !== '--test-concurrency=2'), file], { encoding: 'utf8', timeout: 120_000, env });
    // assert
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^ℹ tests 2000$/m, 'all 2,000 tests reported');
    assert.match(r.stdout, /^ℹ pass 2000$/m);
  });

  test('missing system packages are named in one line with the command that installs them', () => {
    // arrange
    const checks = [
      { what: 'openssl', debianPackage: 'openssl', present: () => false },
      { what: 'something else', debianPackage: 'something-else', present: () => false },
      { what: 'a third', debianPackage: 'third', present: () => true },
    ];
    // act
    const line = missingSystemPrerequisites(checks);
    // assert
    assert.ok(line !== undefined && !line.includes('\n'), 'one line');
    assert.match(line, /openssl, something else/, 'names each missing prerequisite');
    assert.match(line, /apt-get install -y --no-install-recommends openssl something-else$/, 'ends with the command installing both');
    assert.doesNotMatch(line, /third/, 'what is present is not named');
    assert.equal(missingSystemPrerequisites(checks.filter((c) => c.present())), undefined, 'nothing missing, nothing said');
  });

  test('what the registries provide: every install is tried, the ones that fail are named in one line', () => {
    // arrange
    const ran: string[] = [];
    const steps = [
      { what: 'first', run: () => void ran.push('first') },
      { what: 'second', run: () => { ran.push('second'); throw new Error('second: npm pack failed (exit 1): E404\nmore detail'); } },
      { what: 'third', run: (log: (l: string) => void) => { ran.push('third'); log('third: already installed at /x'); log('third: installed /y'); } },
    ];
    const logged: string[] = [];
    // act
    const err = (() => {
      try {
        ensureTestPrerequisites((l) => logged.push(l), steps, [{ what: 'openssl', debianPackage: 'openssl', present: () => false }]);
        return undefined;
      } catch (e) {
        return e as Error;
      }
    })();
    // assert
    assert.deepEqual(ran, ['first', 'second', 'third'], 'a failed install does not stop the ones after it');
    assert.ok(err, 'a failure is reported');
    assert.equal(err.message, 'second: npm pack failed (exit 1): E404; npm test needs openssl, which need root to install — as root (or with sudo): apt-get update && apt-get install -y --no-install-recommends openssl');
    assert.deepEqual(logged, ['third: installed /y'], '"already installed" is not worth a line');
    assert.doesNotThrow(() => ensureTestPrerequisites(() => {}, steps.filter((s) => s.what !== 'second'), []), 'nothing missing, nothing thrown');
  });

  test('the Java version is read from `java -version` (or reported absent), and DynamoDB Local gets a Java 17+', () => {
    const v = javaMajorVersion();
    assert.ok(v === undefined || (Number.isInteger(v) && v >= 1), `a major version or undefined, got ${v}`);
    assert.equal(javaMajorVersion('/nonexistent/java'), undefined, 'a java that does not run has no version');
    const java = javaCommand();
    // After npm test's prerequisites: the system's Java 17+, or the npm registry's JRE.
    assert.ok(java !== undefined && (javaMajorVersion(java) ?? 0) >= 17, `a Java 17+ to run DynamoDB Local with, got ${java}`);
  });
});
