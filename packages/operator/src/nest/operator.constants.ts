export const OPERATOR_CONTROLLER_METADATA = 'nestor:controller';
export const OPERATOR_RECONCILE_METADATA = 'nestor:reconcile';
export const OPERATOR_WATCHES_METADATA = 'nestor:watches';
export const OPERATOR_FINALIZER_METADATA = 'nestor:finalizer';
export const OPERATOR_SOURCE_METADATA = 'nestor:source';
export const OPERATOR_TIMER_METADATA = 'nestor:timer';

/**
 * Injection token of the kubeconfig the operator uses (a `KubeConfigSource`: Nestor's
 * `ClusterConfig`, or the client-node `KubeConfig` passed to forRoot). For client-node's
 * generated API clients, `await clusterConfig.toClientNode()`.
 */
export const KUBE_CONFIG = Symbol('nestor:kube-config');

/** Injection token of the `Operator` (`createOperator`'s) the module's providers are made of. */
export const OPERATOR = Symbol('nestor:operator');

export const OPERATOR_WEBHOOK_METADATA = 'nestor:webhook';
export const OPERATOR_WEBHOOK_HANDLER_METADATA = 'nestor:webhook-handler';
export const OPERATOR_CONVERSION_METADATA = 'nestor:conversion';
export const OPERATOR_CONVERSION_METHOD_METADATA = 'nestor:conversion-method';
