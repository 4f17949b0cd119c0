/**
 * `npm test`'s own promises to a new user: a test file whose set-up fails ends promptly with that
 * error (it cannot hang the run), and what the tests need from the system is named in one line with
 * the command that installs it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TEST_RUNNER_FLAGS } from '../../scripts/run-tests.ts';
import { javaMajorVersion, missingSystemPrerequisites } from '../../scripts/test-prerequisites.ts';
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
      { what: 'Java 17+ (for DynamoDB Local)', debianPackage: 'openjdk-17-jre-headless', present: () => false },
      { what: 'Chromium', debianPackage: 'chromium', present: () => false },
      { what: 'openssl', debianPackage: 'openssl', present: () => true },
    ];
    // act
    const line = missingSystemPrerequisites(checks);
    // assert
    assert.ok(line !== undefined && !line.includes('\n'), 'one line');
    assert.match(line, /Java 17\+ .*Chromium/, 'names each missing prerequisite');
    assert.match(line, /apt-get install -y --no-install-recommends openjdk-17-jre-headless chromium$/, 'ends with the command installing both');
    assert.doesNotMatch(line, /openssl/, 'what is present is not named');
    assert.equal(missingSystemPrerequisites(checks.filter((c) => c.present())), undefined, 'nothing missing, nothing said');
  });

  test('the Java version is read from `java -version` (or reported absent)', () => {
    const v = javaMajorVersion();
    assert.ok(v === undefined || (Number.isInteger(v) && v >= 1), `a major version or undefined, got ${v}`);
  });
});
