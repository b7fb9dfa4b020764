// `nestor crd diff` against what a real API server does with the same CRDs: what the check
// calls breaking is what the API server refuses or loses, and where it parts from crdify
// (a required field with a default, a field removed under preserved unknown fields, a
// version removed once storedVersions no longer lists it) the API server takes the change.
// Release n of a CRD has defaulted fields r1 ... rn in its spec (fields added: no finding): once
// a stored object reads rn, the API server serves release n's schema.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestEnvironment, waitFor } from '@nestor/testing';
import { run } from '../cli.js';

const GROUP = `compat-${randomBytes(3).toString('hex')}.e2e.nestor.dev`;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

type Schema = Record<string, unknown>;
interface Version {
  name: string;
  storage?: boolean;
  served?: boolean;
  deprecated?: boolean;
  spec: Record<string, Schema>;
  required?: string[];
  preserve?: boolean;
}

let env: TestEnvironment;
let namespace: string;
let dir: string;
const installed: string[] = [];

before(async () => {
  env = await TestEnvironment.start();
  namespace = await env.createNamespace('crd-diff');
  dir = await mkdtemp(join(tmpdir(), 'nestor-crd-diff-e2e-'));
});

after(async () => {
  for (const name of installed) await env?.client.raw('DELETE', `${CRDS}/${name}`);
  await rm(dir, { recursive: true, force: true });
  await env?.stop();
});

/** Release `release` of `<plural>.GROUP` with these versions, the first the storage version unless one says so. */
function crd(plural: string, release: number, versions: Version[]): Record<string, unknown> {
  const markers = Object.fromEntries(
    Array.from({ length: release }, (_, i) => [`r${i + 1}`, { type: 'string', default: `r${i + 1}` }]),
  );
  const storage = versions.some((v) => v.storage) ? undefined : versions[0]!.name;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: `${plural[0]!.toUpperCase()}${plural.slice(1, -1)}`, plural },
      scope: 'Namespaced',
      versions: versions.map((version) => ({
        name: version.name,
        served: version.served ?? true,
        storage: version.storage ?? version.name === storage,
        ...(version.deprecated ? { deprecated: true } : {}),
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: { ...version.spec, ...markers },
                ...(version.required ? { required: version.required } : {}),
                ...(version.preserve ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
              },
            },
          },
        },
      })),
    },
  };
}

async function install(definition: Record<string, unknown>): Promise<void> {
  await env.installCRDs([definition as never]);
  installed.push((definition.metadata as { name: string }).name);
}

/** The CRD as the cluster holds it, status.storedVersions included. */
function live(name: string): Promise<Record<string, unknown>> {
  return env.client.request('GET', `${CRDS}/${name}`);
}

/** Replaces the CRD's spec; the API server's answer. */
async function replace(definition: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const name = (definition.metadata as { name: string }).name;
  const current = (await live(name)) as { metadata: { resourceVersion: string } };
  return env.client.raw('PUT', `${CRDS}/${name}`, {
    ...definition,
    metadata: { ...(definition.metadata as object), resourceVersion: current.metadata.resourceVersion },
  });
}

/** `nestor crd diff` of the two, and its findings as `rule version path`. */
async function diff(old: unknown, now: unknown, ...args: string[]) {
  const tag = randomBytes(3).toString('hex');
  await writeFile(join(dir, `${tag}-old.json`), JSON.stringify(old));
  await writeFile(join(dir, `${tag}-new.json`), JSON.stringify(now));
  let stdout = '';
  const code = await run(['crd', 'diff', `${tag}-old.json`, `${tag}-new.json`, ...args], {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stdout += text),
    cwd: dir,
  });
  const findings = [...stdout.matchAll(/^\S+ (\S+) (\S+)\n {2}([a-z-]+):/gm)].map((m) => `${m[3]} ${m[1]} ${m[2]}`);
  return { code, stdout, findings };
}

function objects(plural: string, version: string, name = ''): string {
  return `/apis/${GROUP}/${version}/namespaces/${namespace}/${plural}${name ? `/${name}` : ''}`;
}

async function create(plural: string, version: string, name: string, spec: Schema): Promise<void> {
  const kind = `${plural[0]!.toUpperCase()}${plural.slice(1, -1)}`;
  await waitFor(
    async () =>
      (
        await env.client.raw('POST', objects(plural, version), {
          apiVersion: `${GROUP}/${version}`,
          kind,
          metadata: { name },
          spec,
        })
      ).status === 201,
    { what: `${kind} ${name} created`, timeoutMs: 30_000 },
  );
}

/** Waits until the stored object reads release n's marker: the API server serves its schema. */
async function servedWith(plural: string, version: string, name: string, release: number): Promise<Schema> {
  return waitFor(
    async () => {
      const object = await env.client.request<{ spec: Schema }>('GET', objects(plural, version, name));
      return object.spec[`r${release}`] === `r${release}` ? object.spec : undefined;
    },
    { what: `${plural}/${name} read with release ${release}'s schema`, timeoutMs: 30_000 },
  );
}

describe('nestor crd diff says what the API server does', () => {
  it('a removed version fails the check while storedVersions lists it, as the API server refuses it, and passes after the migration', async () => {
    const versions = (deprecated: boolean): Version[] => [
      { name: 'v1', storage: true, spec: { size: { type: 'integer' } } },
      { name: 'v1beta1', spec: { size: { type: 'integer' } }, deprecated },
    ];
    await install(crd('gizmos', 1, [{ name: 'v1beta1', spec: { size: { type: 'integer' } } }]));
    await create('gizmos', 'v1beta1', 'old', { size: 1 });
    assert.equal((await replace(crd('gizmos', 2, versions(true)))).status, 200);
    const next = crd('gizmos', 3, [{ name: 'v1', spec: { size: { type: 'integer' } } }]);
    const before = await live(`gizmos.${GROUP}`);
    assert.deepEqual((before.status as { storedVersions: string[] }).storedVersions, ['v1beta1', 'v1']);

    const refused = await diff(before, next);
    assert.equal(refused.code, 1, refused.stdout);
    assert.deepEqual(refused.findings, ['stored-version-removed v1beta1 spec.versions[v1beta1]']);
    const answer = await replace(next);
    assert.equal(answer.status, 422, answer.text);
    assert.match(answer.text, /storedVersions/);

    // The migration by hand: the object written again (stored as v1), storedVersions trimmed.
    await servedWith('gizmos', 'v1', 'old', 2);
    const object = await env.client.request<Record<string, unknown>>('GET', objects('gizmos', 'v1', 'old'));
    await env.client.request('PUT', objects('gizmos', 'v1', 'old'), object);
    await env.client.request('PATCH', `${CRDS}/gizmos.${GROUP}/status`, { status: { storedVersions: ['v1'] } });
    const migrated = await diff(await live(`gizmos.${GROUP}`), next);
    assert.equal(migrated.code, 0, migrated.stdout);
    assert.match(migrated.stdout, /note: gizmos\.\S+: v1beta1, deprecated, is removed/);
    assert.equal((await replace(next)).status, 200);
    await servedWith('gizmos', 'v1', 'old', 3);
  });

  it('a new required field fails the check without a default, as the API server refuses the next update, and passes with one', async () => {
    const old = crd('doodads', 1, [{ name: 'v1', spec: { size: { type: 'integer' } } }]);
    await install(old);
    await create('doodads', 'v1', 'old', { size: 1 });

    const defaulted = crd('doodads', 2, [
      {
        name: 'v1',
        spec: { size: { type: 'integer' }, mode: { type: 'string', default: 'fast' } },
        required: ['mode'],
      },
    ]);
    assert.equal((await diff(old, defaulted)).code, 0);
    assert.equal((await replace(defaulted)).status, 200);
    assert.equal((await servedWith('doodads', 'v1', 'old', 2)).mode, 'fast');
    const kept = await env.client.raw('PATCH', objects('doodads', 'v1', 'old'), { spec: { size: 2 } });
    assert.equal(kept.status, 200, kept.text);

    const required = crd('doodads', 3, [
      {
        name: 'v1',
        spec: { size: { type: 'integer' }, mode: { type: 'string', default: 'fast' }, owner: { type: 'string' } },
        required: ['mode', 'owner'],
      },
    ]);
    const report = await diff(defaulted, required);
    assert.equal(report.code, 1, report.stdout);
    assert.deepEqual(report.findings, ['required-added v1 .spec.owner']);
    assert.equal((await replace(required)).status, 200);
    await servedWith('doodads', 'v1', 'old', 3);
    const refused = await env.client.raw('PATCH', objects('doodads', 'v1', 'old'), { spec: { size: 3 } });
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.text, /spec\.owner: Required value/);
  });

  it('a removed field fails the check, as the next write drops it, unless the object keeps unknown fields', async () => {
    const old = crd('widgets', 1, [{ name: 'v1', spec: { size: { type: 'integer' }, mode: { type: 'string' } } }]);
    await install(old);
    await create('widgets', 'v1', 'kept', { size: 1, mode: 'fast' });
    await create('widgets', 'v1', 'pruned', { size: 1, mode: 'fast' });

    const preserved = crd('widgets', 2, [{ name: 'v1', spec: { size: { type: 'integer' } }, preserve: true }]);
    assert.equal((await diff(old, preserved)).code, 0);
    assert.equal((await replace(preserved)).status, 200);
    await servedWith('widgets', 'v1', 'kept', 2);
    await env.client.request('PATCH', objects('widgets', 'v1', 'kept'), { spec: { size: 2 } });
    assert.equal((await servedWith('widgets', 'v1', 'kept', 2)).mode, 'fast');

    const removed = crd('widgets', 3, [{ name: 'v1', spec: { size: { type: 'integer' } } }]);
    const report = await diff(preserved, removed);
    // The field was only kept as an unknown one: no schema names it; the pruning is what breaks.
    assert.deepEqual(report.findings, ['unknown-fields-pruned v1 .spec']);
    assert.deepEqual((await diff(old, removed)).findings, ['field-removed v1 .spec.mode']);
    assert.equal((await replace(removed)).status, 200);
    await servedWith('widgets', 'v1', 'pruned', 3);
    await env.client.request('PATCH', objects('widgets', 'v1', 'pruned'), { spec: { size: 2 } });
    const written = await env.client.request<{ spec: Schema }>('GET', objects('widgets', 'v1', 'pruned'));
    assert.equal(written.spec.mode, undefined, 'the next write dropped the removed field');
  });

  it('a tighter limit fails the check, as the API server refuses a value the old one took', async () => {
    const old = crd('gadgets', 1, [{ name: 'v1', spec: { name: { type: 'string', maxLength: 10 } } }]);
    await install(old);
    await create('gadgets', 'v1', 'old', { name: 'abcdef' });
    const tighter = crd('gadgets', 2, [{ name: 'v1', spec: { name: { type: 'string', maxLength: 3 } } }]);
    assert.deepEqual((await diff(old, tighter)).findings, ['limit-tightened v1 .spec.name']);
    assert.equal((await replace(tighter)).status, 200);
    await servedWith('gadgets', 'v1', 'old', 2);
    const refused = await env.client.raw('POST', objects('gadgets', 'v1'), {
      apiVersion: `${GROUP}/v1`,
      kind: 'Gadget',
      metadata: { name: 'again' },
      spec: { name: 'abcdef' },
    });
    assert.equal(refused.status, 422, refused.text);
    assert.match(refused.text, /spec\.name: Too long/);
  });
});
