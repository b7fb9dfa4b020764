// A unit test of a generated controller as its user writes it from docs/testing.md ("Unit
// tests without an API server"): FakeKubeClient, reconcileContext, no control plane. The
// Nest 11 e2e test runs it under the starter's `npm test`, as init left it.

/** `src/<file>/<file>.controller.spec.ts` of a CommonJS app (imports without `.js`). */
export function fakeClientSpecSource(kind: string, file: string, group: string, version: string): string {
  return `import { Test } from '@nestjs/testing';
import { resourceOf } from '@nestor/operator';
import { fakeKubeClient, reconcileContext } from '@nestor/operator/fake';
import { ${kind}Controller } from './${file}.controller';
import { ${kind} } from './${file}.resource';

describe('${kind}Controller', () => {
  it('marks a ${kind} Ready and records an Event', async () => {
    const object: ${kind} = {
      apiVersion: '${group}/${version}',
      kind: '${kind}',
      metadata: { name: 'a', namespace: 'demo', generation: 1 },
      spec: { replicas: 1 },
    };
    const fake = fakeKubeClient({ kinds: [${kind}], objects: [object] });
    const module = await Test.createTestingModule({
      providers: [${kind}Controller],
    }).compile();
    const controller = module.get(${kind}Controller);

    const current = await fake.get(resourceOf(${kind}), { namespace: 'demo', name: 'a' });
    await controller.reconcile(current!, reconcileContext(current!, { client: fake }));

    const after = await fake.get(resourceOf(${kind}), { namespace: 'demo', name: 'a' });
    expect(after?.status?.conditions?.map((c) => c.type)).toEqual(['Ready']);
    expect(fake.recordedEvents.map((e) => e.reason)).toEqual(['Reconciled']);
  });
});
`;
}
