import type { ResourceDescriptor } from '@nestor/core';

/** Where a KubeClient read was served from. */
export type ReadSource = 'cache' | 'server';

/**
 * Where the client reports each read and what served it (OperatorMetrics binds it to
 * `nestor_client_reads_total`): whether a kind is read from memory or costs a request is
 * then visible per kind, not only written in the docs.
 */
export interface ClientReads {
  read(resource: ResourceDescriptor, verb: 'get' | 'list', source: ReadSource): void;
}
