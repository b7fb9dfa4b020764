import { KubeApiError, resourceName, type ResourceDescriptor } from '@nestor/core';

/** A KubeApiError carrying the Status the API server would answer with, its path marked as the fake's. */
export function apiError(
  status: number,
  reason: string,
  detail: string,
  method: string,
  resource: ResourceDescriptor,
  name?: string,
): KubeApiError {
  const statusObject = { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: detail, reason, code: status };
  const path = `(fake) ${resourceName(resource)}${name ? `/${name}` : ''}`;
  return new KubeApiError(status, reason, detail, method, path, { statusObject });
}
