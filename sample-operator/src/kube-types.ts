// Object types of the built-in kinds this app uses, named through Nestor's typed kind
// descriptors: `ObjectOf<typeof Deployment>` is @kubernetes/client-node's V1Deployment.
import type { ConfigMap, Deployment, Event, Pod, ResourceDescriptor } from '@nestor/operator';

export type ObjectOf<R> = R extends ResourceDescriptor<infer T> ? T : never;

export type DeploymentObject = ObjectOf<typeof Deployment>;
export type ConfigMapObject = ObjectOf<typeof ConfigMap>;
export type EventObject = ObjectOf<typeof Event>;
export type PodObject = ObjectOf<typeof Pod>;
