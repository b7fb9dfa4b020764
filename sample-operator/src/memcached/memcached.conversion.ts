// Conversion between the Memcached versions, served to the API server at /convert: v1alpha1
// (Memcached, the hub: stored, and what the controller reconciles) and v1beta1. Only the
// fields that differ are written here; apiVersion, kind and metadata are the framework's, and
// so is keeping the hub's containerPort, which v1beta1 cannot hold, across a round trip.
import { Conversion, ConvertFromHub, ConvertToHub } from '@nestor/operator';
import { MemcachedV1beta1 } from './memcached-v1beta1.resource.js';
import { Memcached } from './memcached.resource.js';

@Conversion(Memcached)
export class MemcachedConversion {
  @ConvertToHub(MemcachedV1beta1)
  toHub(memcached: MemcachedV1beta1): Pick<Memcached, 'spec' | 'status'> {
    return { spec: { size: memcached.spec.replicas }, status: memcached.status };
  }

  @ConvertFromHub(MemcachedV1beta1)
  fromHub(memcached: Memcached): Pick<MemcachedV1beta1, 'spec' | 'status'> {
    return { spec: { replicas: memcached.spec.size }, status: memcached.status };
  }
}
