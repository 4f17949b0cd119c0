/**
 * How the benchmarks find and measure processes that are not theirs: KubeVirt's binaries
 * (KUBEVIRT_VIRT_CONTROLLER, KUBEVIRT_APISHIM), virt-controller's log grouped into findings,
 * CPU and memory from /proc, and `go tool pprof -top` read back.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { kubevirtSetup, logFindings } from './support/kubevirt.ts';
import { procCpuMicros, procMemory } from './support/proc-stat.ts';
import { parsePprofTop } from './support/control-plane-profile.ts';

describe("KubeVirt's binaries", () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubevirt-setup-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, mode: number) => {
    const p = join(dir, name);
    writeFileSync(p, '#!/bin/sh\n');
    chmodSync(p, mode);
    return p;
  };

  test('the shim is found next to virt-controller, or named; a named shim that is not executable skips, saying so', () => {
    // arrange
    const vc = file('virt-controller', 0o755);
    const other = file('other-shim', 0o755);
    const notExec = file('plain-file', 0o644);
    // act, assert
    assert.deepEqual(kubevirtSetup({ KUBEVIRT_VIRT_CONTROLLER: vc }), { binary: vc, shim: undefined }, 'no apishim beside it: none (the emulator run will say it needs one)');
    const shim = file('apishim', 0o755);
    assert.deepEqual(kubevirtSetup({ KUBEVIRT_VIRT_CONTROLLER: vc }), { binary: vc, shim });
    assert.deepEqual(kubevirtSetup({ KUBEVIRT_VIRT_CONTROLLER: vc, KUBEVIRT_APISHIM: other }), { binary: vc, shim: other });
    assert.deepEqual(kubevirtSetup({ KUBEVIRT_VIRT_CONTROLLER: vc, KUBEVIRT_APISHIM: notExec }), { skipped: `KUBEVIRT_APISHIM=${notExec}: not executable` });
    assert.deepEqual(kubevirtSetup({ KUBEVIRT_VIRT_CONTROLLER: notExec }), { skipped: `KUBEVIRT_VIRT_CONTROLLER=${notExec}: not executable` });
    assert.deepEqual(kubevirtSetup({ KUBEVIRT_VIRT_CONTROLLER: dir }), { skipped: `KUBEVIRT_VIRT_CONTROLLER=${dir}: not a file` });
  });
});

describe("virt-controller's log, grouped", () => {
  test('warnings and errors by message, names and numbers folded, most frequent first; info lines and cut lines left out', () => {
    // arrange
    const log = [
      '{"component":"virt-controller","level":"info","msg":"Starting vmi controller."}',
      '{"level":"error","msg":"failed to sync vmi default/burst-00001","reason":"conflict"}',
      '{"level":"error","msg":"failed to sync vmi default/burst-00002","reason":"conflict"}',
      '{"level":"fatal","msg":"Failed to establish a watch on /etc/virt-controller/certificates/tls.crt"}',
      'E1206 06:35:16.320806   28668 reflector.go:200] "Failed to watch" err="the server could not find the requested resource"',
      'W1206 06:35:16.320806   28668 shared_informer.go:682] "Warning: resync period is smaller"',
      'I1206 06:35:16.341334   28668 leaderelection.go:271] successfully acquired lease kubevirt/virt-controller',
      '{"level":"error","msg":"cut sh',
    ].join('\n');
    // act
    const f = logFindings(log);
    // assert
    assert.deepEqual(f, [
      { level: 'error', message: 'failed to sync vmi default/burst-N (conflict)', count: 2 },
      { level: 'fatal', message: 'Failed to establish a watch on /etc/virt-controller/certificates/tls.crt', count: 1 },
      { level: 'error', message: '"Failed to watch" err="the server could not find the requested resource"', count: 1 },
      { level: 'warning', message: '"Warning: resync period is smaller"', count: 1 },
    ]);
  });
});

describe('another process from /proc', () => {
  test("this process's CPU and memory read from /proc agree with Node's own figures", () => {
    // arrange: some CPU to count
    const until = Date.now() + 50;
    while (Date.now() < until) Math.sqrt(Math.random());
    // act
    const u = process.cpuUsage();
    const proc = procCpuMicros(process.pid);
    const mem = procMemory(process.pid);
    // assert: /proc counts in clock ticks (10 ms at 100 Hz)
    assert.ok(Math.abs(proc - (u.user + u.system)) < 50_000, `/proc ${proc} µs vs cpuUsage ${u.user + u.system} µs`);
    assert.ok(mem.rssBytes > 10 * 2 ** 20, `resident ${mem.rssBytes} bytes`);
    assert.ok(mem.hwmBytes >= mem.rssBytes, 'the peak is at least what is resident now');
  });
});

describe('go tool pprof -top, read back', () => {
  test('the duration, the CPU seconds sampled, and each row by flat and cumulative share', () => {
    // arrange
    const text = [
      'File: control-plane',
      'Type: cpu',
      'Duration: 15.01s, Total samples = 4.52s (30.11%)',
      'Showing nodes accounting for 1.2s, 26.55% of 4.52s total',
      '      flat  flat%   sum%        cum   cum%',
      '     0.45s  9.96%  9.96%      0.45s  9.96%  runtime.memmove',
      '      90ms  1.99% 11.95%      2.10s 46.46%  k8s.io/apiserver/pkg/endpoints/handlers.(*patcher).patchResource.func2',
      '         0     0% 11.95%      1.90s 42.04%  net/http.(*conn).serve',
    ].join('\n');
    // act
    const top = parsePprofTop(text);
    // assert
    assert.equal(top.seconds, 15);
    assert.equal(top.cpuSeconds, 4.52);
    assert.deepEqual(top.flat, { 'runtime.memmove': 9.96, 'k8s.io/apiserver/pkg/endpoints/handlers.(*patcher).patchResource.func2': 1.99, 'net/http.(*conn).serve': 0 });
    assert.equal(top.cum['net/http.(*conn).serve'], 42.04);
  });

  test('milliseconds and minutes in the header', () => {
    // arrange, act
    const top = parsePprofTop('Duration: 1.5mins, Total samples = 950ms ( 1.05%)');
    // assert
    assert.equal(top.seconds, 90);
    assert.equal(top.cpuSeconds, 0.95);
  });
});
