// The Memcached kind, as in the Operator SDK's Go tutorial (memcached_types.go): the class
// is the type the reconciler receives and, through @Field, the source of its CRD schema.
import { type Condition, ConditionsField, CustomResource, Field, type ObjectMeta } from '@nestor/operator';

export class MemcachedSpec {
  // The Go tutorial allows 1..3; we allow 1..10 (the design's sketch) so a demo can scale up.
  @Field({ type: 'integer', minimum: 1, maximum: 10, description: 'Number of memcached pods.' })
  size!: number;

  @Field({ type: 'integer', minimum: 1, maximum: 65535, default: 11211, description: 'Port memcached listens on.' })
  containerPort?: number;
}

export class MemcachedStatus {
  /** metav1.Condition's schema, a list keyed by type: what `kubectl wait --for=condition=Available` reads. */
  @ConditionsField()
  conditions?: Condition[];

  @Field({ type: 'integer', required: false, description: 'The generation of the spec this status describes.' })
  observedGeneration?: number;

  @Field({ type: 'integer', required: false, description: 'Ready memcached pods.' })
  readyReplicas?: number;
}

@CustomResource({
  group: 'cache.example.com',
  version: 'v1alpha1',
  kind: 'Memcached',
  scope: 'Namespaced',
  subresources: { status: {} },
  printerColumns: [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
    { name: 'Available', type: 'string', jsonPath: '.status.conditions[?(@.type=="Available")].status' },
  ],
})
export class Memcached {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;

  @Field(() => MemcachedSpec)
  spec!: MemcachedSpec;

  @Field(() => MemcachedStatus, { required: false })
  status?: MemcachedStatus;
}
