import { KubeApiError, resourcePath, type KubeObject, type ResourceDescriptor, type Transport } from '@nestor/core';

/** What a guarded label write did: written; refused because the object changed; or the object is gone. */
export type LabelWrite = 'written' | 'conflict' | 'gone';

/**
 * One label change on one object, guarded by the resourceVersion it was decided on (a
 * merge patch carrying metadata.resourceVersion): when the object changed meanwhile the
 * API server answers 409 and nothing is written, and the change is decided again from
 * the newer object. Other failures throw.
 */
export async function patchLabels(
  transport: Pick<Transport, 'json'>,
  resource: ResourceDescriptor,
  object: KubeObject,
  labels: Record<string, string | null>,
  annotations?: Record<string, string | null>,
): Promise<LabelWrite> {
  const { name, namespace, resourceVersion } = object.metadata ?? {};
  if (!name || !resourceVersion) throw new Error(`cannot relabel a ${resource.kind} without name and resourceVersion`);
  try {
    await transport.json('PATCH', resourcePath(resource, namespace, name), {
      body: { metadata: { resourceVersion, labels, ...(annotations ? { annotations } : {}) } },
      contentType: 'application/merge-patch+json',
    });
    return 'written';
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 409) return 'conflict';
    if (error instanceof KubeApiError && error.status === 404) return 'gone';
    throw error;
  }
}
