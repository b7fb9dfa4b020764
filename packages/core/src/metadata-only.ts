// Accept values that ask the API server for objects' metadata only (PartialObjectMetadata,
// meta.k8s.io/v1), as client-go's metadata informers do: no spec or status on the wire or
// in the cache. JSON only; a server that cannot answer so sends the full objects instead.

/** A LIST answered as a PartialObjectMetadataList. */
export const METADATA_LIST_ACCEPT =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json';

/** A WATCH whose events carry PartialObjectMetadata objects. */
export const METADATA_WATCH_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json';
