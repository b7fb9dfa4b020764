// A second version of the Memcached kind, served beside v1alpha1 (which stays the stored one
// and the hub the controller works on): `replicas` where v1alpha1 says `size`, and no port
// (memcached listens where v1alpha1 says; a port set there survives writes through v1beta1
// in the nestor.dev/conversion-data annotation). MemcachedConversion converts between them.
import { CustomResource, Field, type ObjectMeta } from '@nestor/operator';
import { MemcachedStatus } from './memcached.resource.js';

export class MemcachedSpecV1beta1 {
  @Field({ type: 'integer', minimum: 1, maximum: 10, description: 'Number of memcached pods.' })
  replicas!: number;
}

@CustomResource({
  group: 'cache.example.com',
  version: 'v1beta1',
  kind: 'Memcached',
  scope: 'Namespaced',
  storage: false,
  subresources: { status: {} },
  printerColumns: [
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
    { name: 'Available', type: 'string', jsonPath: '.status.conditions[?(@.type=="Available")].status' },
  ],
})
export class MemcachedV1beta1 {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;

  @Field(() => MemcachedSpecV1beta1)
  spec!: MemcachedSpecV1beta1;

  @Field(() => MemcachedStatus, { required: false })
  status?: MemcachedStatus;
}
