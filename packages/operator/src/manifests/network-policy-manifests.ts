// The NetworkPolicies in front of the operator's pods, after kubebuilder's
// config/network-policy (allow-metrics-traffic.yaml, allow-webhook-traffic.yaml).
import { operatorLabels, type Manifest } from './manifest.js';

/** The namespace label kubebuilder's policy lets scrape /metrics: `kubectl label namespace <ns> metrics=enabled`. */
export const METRICS_NAMESPACE_LABEL = { metrics: 'enabled' } as const;

/** The label the API server puts on every namespace, with the namespace's name (Kubernetes 1.22+). */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Which port a policy opens: `metrics` or `webhook`, as on the metrics Service. */
export const COMPONENT = 'app.kubernetes.io/component';

export interface NetworkPolicyOptions {
  name: string;
  namespace: string;
  /** The operator's /metrics port; none: no metrics policy. */
  metricsPort?: number;
  /** The webhook server's port (9443); none: no webhook policy. */
  webhookPort?: number;
  /** The namespaces of the ServiceAccounts bound to scrape /metrics (`--metrics-reader`): let in too. */
  metricsReaderNamespaces?: readonly string[];
}

export function networkPolicyNames(name: string) {
  return { metrics: `${name}-allow-metrics-traffic`, webhook: `${name}-allow-webhook-traffic` };
}

/**
 * Once a NetworkPolicy selects the operator's pods, they accept only the ingress some
 * policy allows (traffic from their own node, the kubelet's probes, is always allowed):
 *
 * - /metrics only from pods in namespaces labelled `metrics: enabled`, as kubebuilder's,
 *   and from the namespaces of the scrapers named with `--metrics-reader`, which the
 *   manifests know already. Not from the operator's own namespace: nothing there scrapes.
 * - the webhook port from anywhere. The API server calls the webhooks, and where it comes
 *   from is not a pod: a control-plane node's host network, or, in managed clusters, a
 *   tunnel from outside the cluster network, at addresses the cluster does not publish.
 *   No pod or namespace selector matches it, and an ipBlock would have to be kept in step
 *   with the control plane. So the port is open to all, the one port that is, and the
 *   webhook server's own limits stand in front of it.
 */
export function networkPolicies(options: NetworkPolicyOptions): Manifest[] {
  const { name, namespace } = options;
  const names = networkPolicyNames(name);
  const labels = operatorLabels(name);
  const podSelector = { matchLabels: { 'app.kubernetes.io/name': name } };
  const policies: Manifest[] = [];
  if (options.metricsPort) {
    const readers = [...new Set(options.metricsReaderNamespaces ?? [])].sort();
    policies.push({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: names.metrics, namespace, labels: { ...labels, [COMPONENT]: 'metrics' } },
      spec: {
        podSelector,
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [
              { namespaceSelector: { matchLabels: { ...METRICS_NAMESPACE_LABEL } } },
              ...readers.map((reader) => ({ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: reader } } })),
            ],
            ports: [{ port: options.metricsPort, protocol: 'TCP' }],
          },
        ],
      },
    });
  }
  if (options.webhookPort) {
    policies.push({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: names.webhook, namespace, labels: { ...labels, [COMPONENT]: 'webhook' } },
      spec: {
        podSelector,
        policyTypes: ['Ingress'],
        // No `from`: any source, to this port only.
        ingress: [{ ports: [{ port: options.webhookPort, protocol: 'TCP' }] }],
      },
    });
  }
  return policies;
}
