import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigMap, Deployment } from '../client/kinds.js';
import { customResourcesOf } from './controller-resources.js';
import { CustomResource } from './custom-resource.decorator.js';
import { Field } from './field.decorator.js';

@CustomResource({ group: 'resources.example.com', version: 'v2', kind: 'Pool', storage: true })
class PoolV2 {
  @Field({ required: false }) size?: number;
}

// Never named by a controller: its CRD version comes with PoolV2's.
@CustomResource({ group: 'resources.example.com', version: 'v1', kind: 'Pool' })
class PoolV1 {
  @Field({ required: false }) size?: number;
}

@CustomResource({ group: 'resources.example.com', version: 'v1', kind: 'Tenant', scope: 'Cluster' })
class Tenant {
  @Field({ required: false }) owner?: string;
}

@CustomResource({ group: 'resources.example.com', version: 'v1', kind: 'Unused' })
export class Unused {
  @Field({ required: false }) note?: string;
}

describe('customResourcesOf', () => {
  it('finds the custom kinds the controllers use, with every loaded version of each, and no built-in kinds', () => {
    const controllers = [
      { resource: PoolV2, owns: [Deployment], watches: [ConfigMap, Tenant] },
      { resource: Tenant, owns: [ConfigMap] },
    ];
    assert.deepEqual(customResourcesOf(controllers), [PoolV2, Tenant, PoolV1]);
  });

  it('finds none for controllers of built-in kinds or @Source streams alone', () => {
    assert.deepEqual(customResourcesOf([{ resource: ConfigMap, owns: [Deployment] }, {}]), []);
  });
});
