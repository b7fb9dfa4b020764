// The installer's requests and its failures, over a scripted transport (crd.e2e.test.ts
// runs it against a real API server).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeApiError } from './errors.js';
import type { RequestOptions } from './transport-requests.js';
import { installCustomResourceDefinitions, type InstallableCustomResourceDefinition } from './crd-installer.js';

const crd: InstallableCustomResourceDefinition = {
  metadata: { name: 'things.ex.com' },
  spec: {
    group: 'ex.com',
    names: { plural: 'things' },
    versions: [
      { name: 'v1', served: true },
      { name: 'v0', served: false },
    ],
  },
};

type Call = { method: string; path: string; options: RequestOptions };

/** A transport that records calls and answers with `answer`. */
function scripted(answer: (call: Call, calls: Call[]) => unknown) {
  const calls: Call[] = [];
  return {
    calls,
    transport: {
      json: async <T>(method: string, path: string, options: RequestOptions = {}): Promise<T> => {
        const call = { method, path, options };
        calls.push(call);
        return answer(call, calls) as T;
      },
    },
  };
}

const established = {
  status: {
    conditions: [
      { type: 'NamesAccepted', status: 'True' },
      { type: 'Established', status: 'True' },
    ],
  },
};

describe('installCustomResourceDefinitions', () => {
  it('server-side applies each CRD with the field manager and force, then waits for discovery of served versions', async () => {
    let discoveryCalls = 0;
    const { calls, transport } = scripted(({ method, path }) => {
      if (method === 'PATCH') return {};
      if (path.startsWith('/apis/apiextensions')) return established;
      // Discovery lists the resource from the second look on.
      return { resources: discoveryCalls++ === 0 ? [] : [{ name: 'things' }] };
    });
    await installCustomResourceDefinitions(transport, [crd], { fieldManager: 'my-operator', intervalMs: 1 });
    const [patch] = calls;
    assert.equal(patch!.method, 'PATCH');
    assert.equal(patch!.path, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.ex.com');
    assert.equal(patch!.options.contentType, 'application/apply-patch+yaml');
    assert.deepEqual(patch!.options.query, { fieldManager: 'my-operator', force: true });
    assert.deepEqual(patch!.options.body, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      ...crd,
    });
    const discovery = calls.filter((c) => c.path.startsWith('/apis/ex.com'));
    assert.deepEqual(new Set(discovery.map((c) => c.path)), new Set(['/apis/ex.com/v1']), 'only served versions');
    assert.equal(discovery.length, 2, 'polled until discovery listed it');
  });

  it('fails after the timeout, saying what it last saw', async () => {
    const { transport } = scripted(({ method }) =>
      method === 'PATCH'
        ? {}
        : { status: { conditions: [{ type: 'Established', status: 'False', message: 'not all names are accepted' }] } },
    );
    await assert.rejects(
      installCustomResourceDefinitions(transport, [crd], { timeoutMs: 30, intervalMs: 5 }),
      /the CustomResourceDefinition things\.ex\.com was not Established and served within 30 ms: Established=False \(not all names are accepted\)/,
    );
  });

  it('fails at once when the names are refused', async () => {
    const { transport } = scripted(({ method }) =>
      method === 'PATCH'
        ? {}
        : {
            status: {
              conditions: [
                {
                  type: 'NamesAccepted',
                  status: 'False',
                  reason: 'MultipleNamesConflict',
                  message: '"things" is already in use',
                },
              ],
            },
          },
    );
    await assert.rejects(
      installCustomResourceDefinitions(transport, [crd], { timeoutMs: 60_000 }),
      /things\.ex\.com was not accepted: MultipleNamesConflict: "things" is already in use/,
    );
  });

  it('says what to do when the identity may not install CRDs', async () => {
    const { transport } = scripted(({ method, path }) => {
      throw new KubeApiError(403, 'Forbidden', 'customresourcedefinitions is forbidden', method, path);
    });
    await assert.rejects(installCustomResourceDefinitions(transport, [crd]), (error: Error) => {
      assert.match(
        error.message,
        /cannot install the CustomResourceDefinition things\.ex\.com: the operator's identity may not patch/,
      );
      assert.match(error.message, /nestor manifests/);
      assert.ok(error.cause instanceof KubeApiError);
      return true;
    });
  });
});
