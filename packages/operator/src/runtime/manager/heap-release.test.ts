import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeapRelease, processHeapProbe, type HeapProbe } from './heap-release.js';

const MB = 2 ** 20;

/** A process whose clock, CPU and RSS the test moves; a collection drops RSS to `collectsTo`. */
class FakeProcess implements HeapProbe {
  at = 0;
  cpu = 0;
  rss = 80 * MB;
  collectsTo = 70 * MB;
  collections = 0;
  collect = () => {
    this.collections++;
    this.rss = this.collectsTo;
  };
  rssBytes = () => this.rss;
  cpuMicros = () => this.cpu;
  nowMs = () => this.at;
  /** `ms` pass, during which the process used `share` of a core. */
  spend(ms: number, share: number): void {
    this.at += ms;
    this.cpu += ms * share * 1000;
  }
}

function released(): { release: HeapRelease; process: FakeProcess } {
  const process = new FakeProcess();
  const release = new HeapRelease({ intervalMs: 10_000 }, undefined, process);
  assert.equal(release.start(), true);
  release.stop(); // the test calls look() itself
  return { release, process };
}

describe('HeapRelease', () => {
  it('collects once the process is idle, the first time whatever its RSS', () => {
    const { release, process } = released();
    process.spend(10_000, 0.5);
    assert.equal(release.look(), false, 'busy since start: nothing');
    process.spend(10_000, 0.01);
    assert.equal(release.look(), true);
    assert.equal(process.collections, 1);
  });

  it('collects again only after the RSS grew by the bound since the last release', () => {
    const { release, process } = released();
    process.spend(10_000, 0);
    assert.equal(release.look(), true); // RSS now 70 MB
    process.rss = 75 * MB;
    process.spend(10_000, 0);
    assert.equal(release.look(), false, '5 MB of growth is under the 8 MiB bound');
    process.rss = 79 * MB;
    process.spend(10_000, 0);
    assert.equal(release.look(), true);
    assert.equal(process.collections, 2);
  });

  it('judges idleness on the spell since the last look, not on the whole run', () => {
    const { release, process } = released();
    process.spend(10_000, 0);
    release.look();
    process.rss = 100 * MB;
    process.spend(10_000, 0.9); // a burst
    assert.equal(release.look(), false);
    process.spend(10_000, 0.015); // quiet again: 1.5% of a core
    assert.equal(release.look(), true);
  });

  it('moves its baseline up when the collection could not give much back', () => {
    const { release, process } = released();
    process.spend(10_000, 0);
    release.look();
    process.rss = process.collectsTo = 120 * MB; // the live objects grew: a cache filled
    process.spend(10_000, 0);
    assert.equal(release.look(), true);
    process.spend(10_000, 0);
    assert.equal(release.look(), false, 'no collection per look while nothing grows');
    assert.equal(process.collections, 2);
  });

  it('does nothing without a way to collect (no --expose-gc)', () => {
    const process = new FakeProcess();
    const release = new HeapRelease({}, undefined, { ...process, collect: undefined } as HeapProbe);
    assert.equal(release.start(), false);
    assert.equal(release.look(), false);
  });

  it('refuses options that would never or always collect', () => {
    assert.throws(() => new HeapRelease({ intervalMs: 0 }), /heapRelease.intervalMs must be .* greater than 0, got 0/);
    assert.throws(
      () => new HeapRelease({ idleCpuShare: 2 }),
      /heapRelease.idleCpuShare must be a number from 0 to 1, got 2/,
    );
    assert.throws(() => new HeapRelease({ minGrowthBytes: -1 }), /heapRelease.minGrowthBytes must be/);
  });

  it("the process's own probe collects through gc when node runs with --expose-gc", () => {
    const probe = processHeapProbe();
    assert.equal(typeof probe.collect === 'function', typeof globalThis.gc === 'function');
    assert.ok(probe.rssBytes() > 0 && probe.cpuMicros() > 0);
  });
});
