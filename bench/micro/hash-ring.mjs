#!/usr/bin/env node
// The sharding ring's cost and balance, without any I/O: ns per hash of a 40-character key
// (CPU time), ns per shardFor() lookup, and the spread of 9,000 keys over random shard-name
// sets (fullest and emptiest shard relative to a fair share).
//   npm run build && node bench/micro/hash-ring.mjs [keys=1000000] [sets=200]
import { HashRing, ringPosition } from '@nestor/operator/sharding';

const count = Number(process.argv[2] ?? 1_000_000);
const sets = Number(process.argv[3] ?? 200);

// 40 characters, as group/kind/namespace/name of a typical object.
const keys = Array.from({ length: 1024 }, (_, i) => `example.com/Website/team-a/site-${String(i).padStart(8, '0')}`);
if (keys[0].length !== 40) throw new Error(`key length ${keys[0].length}`);

function cpuNsPer(label, fn) {
  for (let i = 0; i < 200_000; i++) fn(keys[i & 1023]); // warm up
  let sink = 0;
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) sink += fn(keys[i & 1023]) ? 1 : 0;
  const used = process.cpuUsage(cpu);
  const ns = ((used.user + used.system) * 1000) / count;
  console.log(`${label}: ${ns.toFixed(1)} ns CPU per call (${count} calls, sink ${sink})`);
}

cpuNsPer('ringPosition (FNV-1a 64 + fmix64), 40-char key', ringPosition);

// The same hash in BigInt, for comparison: what the limbs save.
const MASK = (1n << 64n) - 1n;
function bigIntPosition(key) {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < key.length; i++) h = ((h ^ BigInt(key.charCodeAt(i))) * 0x100000001b3n) & MASK;
  h ^= h >> 33n;
  h = (h * 0xff51afd7ed558ccdn) & MASK;
  h ^= h >> 33n;
  h = (h * 0xc4ceb9fe1a85ec53n) & MASK;
  h ^= h >> 33n;
  return Number(h >> 11n);
}
if (bigIntPosition(keys[7]) !== ringPosition(keys[7])) throw new Error('BigInt and limb hashes differ');
cpuNsPer('the same in BigInt (ASCII), 40-char key', bigIntPosition);
for (const shards of [3, 5]) {
  const ring = new HashRing(Array.from({ length: shards }, (_, i) => `operator-${i}`));
  cpuNsPer(`shardFor, ${shards} shards x 100 tokens`, (key) => ring.shardFor(key));
}

// Balance over random pod-name sets (Deployment pods: <name>-<rs hash>-<5 chars>).
const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
const random = (n) => Array.from({ length: n }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('');
const objects = Array.from({ length: 9000 }, (_, i) => `example.com/Website/team-${i % 37}/site-${i}`);
for (const tokensPerShard of [100, 1000]) {
  for (const shards of [3, 5]) {
    let min = Infinity;
    let max = 0;
    for (let s = 0; s < sets; s++) {
      const hash = random(10);
      const ring = new HashRing(
        Array.from({ length: shards }, () => `operator-${hash}-${random(5)}`),
        { tokensPerShard },
      );
      const counts = new Map(ring.shards.map((id) => [id, 0]));
      for (const key of objects) counts.set(ring.shardFor(key), counts.get(ring.shardFor(key)) + 1);
      const fair = objects.length / shards;
      for (const c of counts.values()) {
        min = Math.min(min, c / fair);
        max = Math.max(max, c / fair);
      }
    }
    console.log(
      `${shards} shards x ${tokensPerShard} tokens, ${sets} random name sets: every shard within ${min.toFixed(2)}x to ${max.toFixed(2)}x of fair share`,
    );
  }
}
