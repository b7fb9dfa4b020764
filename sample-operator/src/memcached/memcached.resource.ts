// The Memcached kind, as in the Operator SDK's Go tutorial (memcached_types.go): the class
// is the type the reconciler receives and, through @Field, the source of its CRD schema.
import { CustomResource, Field, type ObjectMeta } from '@nestor/operator';

export class MemcachedSpec {
  // The Go tutorial allows 1..3; we allow 1..10 (the design's sketch) so a demo can scale up.
  @Field({ type: 'integer', minimum: 1, maximum: 10, description: 'Number of memcached pods.' })
  size!: number;

  @Field({ type: 'integer', minimum: 1, maximum: 65535, default: 11211, description: 'Port memcached listens on.' })
  containerPort?: number;
}

/** metav1.Condition: the shape `kubectl wait --for=condition=Available` and every status tool read. */
export class Condition {
  @Field({ description: 'Available, Progressing or Degraded.', maxLength: 316 })
  type!: string;

  @Field({ enum: ['True', 'False', 'Unknown'] })
  status!: 'True' | 'False' | 'Unknown';

  @Field({ pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$', minLength: 1, maxLength: 1024 })
  reason!: string;

  @Field({ maxLength: 32768 })
  message!: string;

  @Field({ format: 'date-time' })
  lastTransitionTime!: string;

  @Field({ type: 'integer', minimum: 0, required: false })
  observedGeneration?: number;
}

export class MemcachedStatus {
  @Field(() => [Condition], { listType: 'map', listMapKeys: ['type'], required: false })
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
