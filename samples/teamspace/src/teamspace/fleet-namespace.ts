/**
 * Where the member clusters' kubeconfig Secrets are, in the management cluster: the namespace
 * the operator is deployed to (`nestor manifests --namespace teamspace-system`). A constant
 * rather than `ownNamespace()`: the provider's namespace is read when the module is imported,
 * and `nestor manifests` imports it outside any pod, where `ownNamespace()` answers `default`.
 */
export const FLEET_NAMESPACE = 'teamspace-system';
