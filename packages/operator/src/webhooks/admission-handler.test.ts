import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionDenied } from './admission-denied.js';
import { mutate, validate, type AdmissionContext } from './admission-handler.js';
import type { AdmissionOperation, AdmissionRequest } from './admission-review.js';

interface Thing {
  metadata: { name: string; labels?: Record<string, string> };
  spec: { size?: number };
}

function request(operation: AdmissionOperation, object: Thing | null, oldObject: Thing | null = null, dryRun = false) {
  return {
    uid: 'uid-1',
    kind: { group: 'g', version: 'v1', kind: 'Thing' },
    resource: { group: 'g', version: 'v1', resource: 'things' },
    operation,
    userInfo: { username: 'alice' },
    object,
    oldObject,
    dryRun,
  } satisfies AdmissionRequest<Thing>;
}

const thing = (size?: number): Thing => ({ metadata: { name: 't' }, spec: size === undefined ? {} : { size } });

describe('validate', () => {
  it('calls the handler of the operation with the object, the old object and the context', async () => {
    const seen: unknown[] = [];
    const handlers = {
      create: (o: Thing, c: AdmissionContext<Thing>) =>
        void seen.push(['create', o.spec.size, c.userInfo.username, c.dryRun]),
      update: (o: Thing, old: Thing) => void seen.push(['update', o.spec.size, old.spec.size]),
      delete: (o: Thing, c: AdmissionContext<Thing>) => void seen.push(['delete', o.spec.size, c.oldObject?.spec.size]),
    };
    await validate(handlers, request('CREATE', thing(1), null, true));
    await validate(handlers, request('UPDATE', thing(2), thing(1)));
    await validate(handlers, request('DELETE', null, thing(3)));
    assert.deepEqual(seen, [
      ['create', 1, 'alice', true],
      ['update', 2, 1],
      ['delete', 3, 3],
    ]);
  });

  it('allows with warnings, denies with AdmissionDenied’s message, code and warnings', async () => {
    assert.deepEqual(await validate({ create: () => ['big'] }, request('CREATE', thing(1))), {
      uid: 'uid-1',
      allowed: true,
      warnings: ['big'],
    });
    const denied = await validate(
      {
        create: () => {
          throw new AdmissionDenied('size must be at most 5', { code: 422, reason: 'Invalid', warnings: ['w'] });
        },
      },
      request('CREATE', thing(9)),
    );
    assert.deepEqual(denied, {
      uid: 'uid-1',
      allowed: false,
      status: { code: 422, message: 'size must be at most 5', reason: 'Invalid' },
      warnings: ['w'],
    });
    const forbidden = await validate(
      { create: () => Promise.reject(new AdmissionDenied('no')) },
      request('CREATE', thing()),
    );
    assert.equal(forbidden.status?.code, 403);
  });

  it('gives a denial the reason the API server gives its code, which kubectl prints in brackets', async () => {
    const statusOf = async (denial: AdmissionDenied) =>
      (
        await validate(
          {
            create: () => {
              throw denial;
            },
          },
          request('CREATE', thing()),
        )
      ).status;
    assert.deepEqual(await statusOf(new AdmissionDenied('no')), { code: 403, message: 'no', reason: 'Forbidden' });
    assert.equal((await statusOf(new AdmissionDenied('bad size', { code: 422 })))?.reason, 'Invalid');
    assert.equal((await statusOf(new AdmissionDenied('bad', { code: 400 })))?.reason, 'BadRequest');
    assert.equal((await statusOf(new AdmissionDenied('taken', { code: 409 })))?.reason, 'Conflict');
    // The API server raises a code below 400 to 400.
    assert.equal((await statusOf(new AdmissionDenied('odd', { code: 200 })))?.reason, 'BadRequest');
    // A reason given wins; a code the API server has no reason for gets none.
    assert.equal(
      (await statusOf(new AdmissionDenied('quota', { code: 403, reason: 'QuotaExceeded' })))?.reason,
      'QuotaExceeded',
    );
    assert.equal((await statusOf(new AdmissionDenied('teapot', { code: 418 })))?.reason, undefined);
  });

  it('denies with 500 when a handler breaks, and reports the error', async () => {
    const failures: unknown[] = [];
    const response = await validate(
      {
        update: () => {
          throw new TypeError('boom');
        },
      },
      request('UPDATE', thing(1), thing(0)),
      (error) => failures.push(error),
    );
    assert.equal(response.allowed, false);
    assert.equal(response.status?.code, 500);
    assert.match(response.status!.message, /boom/);
    assert.equal(failures.length, 1);
  });

  it('allows an operation it has no handler for', async () => {
    assert.deepEqual(await validate({}, request('DELETE', null, thing())), { uid: 'uid-1', allowed: true });
  });
});

describe('mutate', () => {
  const decode = (patch?: string) => JSON.parse(Buffer.from(patch!, 'base64').toString()) as unknown;

  it('sends the diff of an object changed in place, as a base64 JSON Patch', async () => {
    const original = thing();
    const response = await mutate<Thing>(
      (o) => {
        o.spec.size ??= 1;
        o.metadata.labels = { defaulted: 'true' };
      },
      request('CREATE', original),
    );
    assert.equal(response.allowed, true);
    assert.equal(response.patchType, 'JSONPatch');
    assert.deepEqual(decode(response.patch), [
      { op: 'add', path: '/metadata/labels', value: { defaulted: 'true' } },
      { op: 'add', path: '/spec/size', value: 1 },
    ]);
    assert.deepEqual(original, thing(), 'the request’s object is not changed');
  });

  it('uses a returned object, and sends no patch when nothing changed', async () => {
    const returned = await mutate<Thing>((o) => ({ ...o, spec: { size: 2 } }), request('UPDATE', thing(1), thing(1)));
    assert.deepEqual(decode(returned.patch), [{ op: 'replace', path: '/spec/size', value: 2 }]);
    const unchanged = await mutate<Thing>(() => {}, request('CREATE', thing(1)));
    assert.deepEqual(unchanged, { uid: 'uid-1', allowed: true });
  });

  it('never patches a DELETE, and denies without a patch when the defaulter denies', async () => {
    let called = false;
    assert.deepEqual(await mutate(() => void (called = true), request('DELETE', null, thing())), {
      uid: 'uid-1',
      allowed: true,
    });
    assert.equal(called, false);
    const denied = await mutate<Thing>(
      (o) => {
        o.spec.size = 1;
        throw new AdmissionDenied('cannot default');
      },
      request('CREATE', thing()),
    );
    assert.equal(denied.allowed, false);
    assert.equal(denied.patch, undefined);
  });

  it('refuses an object nested past MAX_OBJECT_DEPTH with the server’s denial, before any recursive work', async () => {
    // Built in a loop: 2,000 levels, as the attack sends through the defaulting webhook.
    const deep = thing() as Thing & { spec: Record<string, unknown> };
    let level: Record<string, unknown> = deep.spec;
    for (let i = 0; i < 2_000; i++) level = (level.a = {}) as Record<string, unknown>;
    let called = false;
    const response = await mutate<Thing>(
      (o) => {
        called = true;
        o.spec.size = 1;
      },
      request('CREATE', deep),
    );
    assert.equal(called, false, 'the defaulter never sees it');
    assert.equal(response.allowed, false);
    assert.equal(response.patch, undefined);
    assert.equal(response.status?.code, 400);
    assert.equal(response.status?.reason, 'BadRequest');
    assert.match(response.status?.message ?? '', /more than 1000 deep \(MAX_OBJECT_DEPTH\)/);
    const old = await mutate<Thing>(() => {}, request('UPDATE', thing(), deep));
    assert.equal(old.status?.code, 400, 'the old object too');
  });
});
