import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Namespace, RoleBinding } from '../client/kinds.js';
import { Controller } from '../nest/decorators/controller.decorator.js';
import { Reconcile } from '../nest/decorators/reconcile.decorator.js';
import { Watches } from '../nest/decorators/watches.decorator.js';
import { describeController } from '../nest/module-scanner.js';
import { manifestFiles } from './manifest-files.js';
import { operatorManifests } from './operator-manifests.js';

@Controller(Namespace, { clusters: 'members', owns: [RoleBinding] })
class Quotas {
  @Reconcile() reconcile(): void {}
}

@Controller(ConfigMap, { namespace: 'fleet-system' })
class Census {
  @Reconcile() reconcile(): void {}
  @Watches(ConfigMap, { clusters: 'members', namespace: 'apps' }) fromMembers(): undefined {
    return undefined;
  }
}

describe('manifests for the member clusters of a fleet', () => {
  it('grant in each member what runs or is watched there, and nothing of it in the operator’s cluster', () => {
    const controllers = [describeController(Quotas)!, describeController(Census)!];
    const manifests = operatorManifests({
      name: 'fleet-operator',
      namespace: 'fleet-system',
      image: 'example.com/fleet:1',
      controllers,
      members: controllers.flatMap((c) => (c.members ? [c.members] : [])),
    });
    const role = manifests.members?.find((m) => m.kind === 'ClusterRole') as unknown as {
      rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
    };
    const resources = role.rules.flatMap((r) => r.resources);
    assert.ok(
      resources.includes('namespaces') && resources.includes('rolebindings') && resources.includes('configmaps'),
    );
    assert.deepEqual(
      manifests.members?.map((m) => `${m.kind}/${m.metadata.name}`),
      [
        'Namespace/fleet-system',
        'ServiceAccount/fleet-operator-member',
        'Secret/fleet-operator-member-token',
        'ClusterRole/fleet-operator-member',
        'ClusterRoleBinding/fleet-operator-member',
      ],
    );
    // In the operator's cluster: the census's own ConfigMaps, no Namespaces or RoleBindings.
    const operatorResources = manifests.rbac.flatMap((m) =>
      ((m as unknown as { rules?: Array<{ resources: string[] }> }).rules ?? []).flatMap((r) => r.resources),
    );
    assert.ok(!operatorResources.includes('namespaces') && !operatorResources.includes('rolebindings'));
    const files = manifestFiles(manifests);
    assert.ok('members/member-rbac.yaml' in files && 'members/kustomization.yaml' in files);
    assert.match(files['README.md']!, /kubectl --context <member> apply -k members/);
  });
});
