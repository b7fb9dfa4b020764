// The CacheCluster kind: the class is the type the reconciler receives and, through @Field,
// the CRD's schema. Fields with a default are Defaulted<T>: the API server fills them in
// every object it returns, so the controller reads them without `??`.
import {
  type Condition,
  ConditionsField,
  CustomResource,
  type Defaulted,
  Field,
  type ObjectMeta,
  type Quantity,
} from '@nestor/operator';

export const EVICTION_POLICIES = ['allkeys-lru', 'allkeys-lfu', 'volatile-lru', 'noeviction'] as const;
export type EvictionPolicy = (typeof EVICTION_POLICIES)[number];

export class CacheClusterSpec {
  @Field({ type: 'integer', minimum: 1, maximum: 9, default: 3, description: 'Number of cache pods.' })
  replicas!: Defaulted<number>;

  @Field({ default: 'redis:7.4-alpine', maxLength: 200, description: 'Image of the cache pods.' })
  image!: Defaulted<string>;

  @Field({ quantity: true, default: '1Gi', description: "Size of each pod's volume; fixed once created." })
  storage!: Defaulted<Quantity>;

  @Field({ quantity: true, default: '256Mi', description: 'Memory the cache may use (redis maxmemory).' })
  maxMemory!: Defaulted<Quantity>;

  @Field({ enum: EVICTION_POLICIES, default: 'allkeys-lru', description: 'What goes when maxMemory is reached.' })
  evictionPolicy!: Defaulted<EvictionPolicy>;

  @Field({ default: false, description: 'Leave the StatefulSet, Service and ConfigMap as they are.' })
  paused!: Defaulted<boolean>;
}

export class CacheClusterStatus {
  /** Ready and Paused, keyed by type: what `kubectl wait --for=condition=Ready` reads. */
  @ConditionsField()
  conditions?: Condition[];

  @Field({ type: 'integer', required: false, description: 'The generation of the spec this status describes.' })
  observedGeneration?: number;

  @Field({ type: 'integer', required: false, description: 'Cache pods ready.' })
  readyReplicas?: number;

  @Field({ type: 'string', required: false, description: 'Hash of the configuration the pods run with.' })
  configHash?: string;

  @Field({ type: 'string', required: false, description: 'Where clients connect.' })
  endpoint?: string;
}

@CustomResource({
  group: 'cache.example.com',
  version: 'v1alpha1',
  kind: 'CacheCluster',
  shortNames: ['cc'],
  subresources: { status: {} },
  printerColumns: [
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Storage', type: 'string', jsonPath: '.spec.storage' },
    { name: 'Paused', type: 'boolean', jsonPath: '.spec.paused', priority: 1 },
  ],
})
export class CacheCluster {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;

  @Field(() => CacheClusterSpec)
  spec!: CacheClusterSpec;

  @Field(() => CacheClusterStatus, { required: false })
  status?: CacheClusterStatus;
}
