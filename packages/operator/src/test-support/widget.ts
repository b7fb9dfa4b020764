// A custom resource for the framework's own end-to-end tests.
import type { V1ObjectMeta } from '../client/kinds.js';
import type { CustomResourceDefinition } from '@nestor/testing';
import { CustomResource } from '../crd/custom-resource.decorator.js';

@CustomResource({ group: 'test.nestor.dev', version: 'v1', kind: 'Widget', subresources: { status: {} } })
export class Widget {
  apiVersion?: string;
  kind?: string;
  metadata!: V1ObjectMeta;
  spec!: { size: number; mode?: string };
  status?: { observedGeneration?: number; phase?: string };
}

export const WIDGET_CRD: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.test.nestor.dev' },
  spec: {
    group: 'test.nestor.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

export function widget(namespace: string, name: string, spec: Widget['spec'] = { size: 1 }): Widget {
  return { apiVersion: 'test.nestor.dev/v1', kind: 'Widget', metadata: { namespace, name }, spec };
}
