import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  KubeApiError,
  type KubeStatus,
  PROTOBUF_ACCEPT,
  listPages,
  type Query,
  type ResourceDescriptor,
  resourcePath,
  Transport,
} from '@nestor/core';
import { TestEnvironment } from '@nestor/testing';

/**
 * The protobuf path against the JSON path of the same API server: for each built-in kind,
 * objects with rich fields (bytes, quantities, int-or-strings, times and micro-times, raw
 * extensions, pointers to zero values, inline structs, maps) must decode from protobuf to
 * exactly what the server's JSON says, in LISTs (at one resourceVersion) and in WATCHes.
 */
describe('protobuf LIST and WATCH decode to the JSON of the same API server', () => {
  let env: TestEnvironment;
  let transport: Transport;
  let ns: string;
  const label = `protobuf-e2e-${process.pid}`;
  const labels = { 'nestor.dev/e2e': label };
  const meta = (name: string, extra: object = {}) => ({ name, labels, annotations: { note: 'ünïcødé ✓' }, ...extra });

  /** `listed`: how many the LIST shows, when another case's objects are of the same resource. */
  type Case = { resource: ResourceDescriptor; objects: object[]; status?: (name: string) => object; listed?: number };
  const cases = (): Case[] => [
    {
      resource: kind('', 'v1', 'ConfigMap', 'configmaps'),
      objects: [
        {
          metadata: meta('cm-rich'),
          data: { a: '1', empty: '', 'dotted.key': 'x' },
          binaryData: { bin: Buffer.from([0, 1, 2, 255]).toString('base64'), none: '' },
        },
        { metadata: meta('cm-bare'), immutable: false },
      ],
    },
    {
      resource: kind('', 'v1', 'Secret', 'secrets'),
      objects: [
        {
          metadata: meta('secret'),
          type: 'Opaque',
          data: { key: Buffer.from('s3cr3t\n\u0000').toString('base64') },
          stringData: { plain: 'text' },
        },
        { metadata: meta('secret-tls'), type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } },
      ],
    },
    {
      resource: kind('', 'v1', 'Pod', 'pods'),
      objects: [
        {
          metadata: meta('pod', { finalizers: ['nestor.dev/keep'], generateName: 'gen-' }),
          spec: {
            terminationGracePeriodSeconds: 30,
            activeDeadlineSeconds: 2_147_483_647,
            priority: 0,
            securityContext: {
              runAsUser: 0,
              runAsNonRoot: false,
              fsGroup: 2000,
              sysctls: [{ name: 'net.ipv4.ip_forward', value: '1' }],
            },
            containers: [
              {
                name: 'app',
                image: 'registry.example/app:1',
                command: ['/bin/app'],
                args: ['--flag', ''],
                ports: [
                  { name: 'http', containerPort: 8080, protocol: 'TCP' },
                  { containerPort: 9090, hostPort: 0, protocol: 'UDP' },
                ],
                env: [
                  { name: 'PLAIN', value: 'v' },
                  { name: 'EMPTY', value: '' },
                  { name: 'FROM', valueFrom: { configMapKeyRef: { name: 'cm-rich', key: 'a', optional: true } } },
                  { name: 'RES', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
                ],
                resources: {
                  requests: { cpu: '250m', memory: '64Mi' },
                  limits: { cpu: '1', memory: '1.5Gi', 'example.com/gpu': '2' },
                },
                livenessProbe: {
                  httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' },
                  initialDelaySeconds: 3,
                  periodSeconds: 10,
                },
                readinessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 1 },
                startupProbe: { exec: { command: ['true'] }, timeoutSeconds: 0 },
                lifecycle: { preStop: { sleep: { seconds: 5 } } },
                volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true }],
                securityContext: { capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] }, readOnlyRootFilesystem: true },
              },
            ],
            volumes: [
              { name: 'data', emptyDir: { sizeLimit: '500Mi', medium: 'Memory' } },
              {
                name: 'cfg',
                configMap: { name: 'cm-rich', defaultMode: 0o644, items: [{ key: 'a', path: 'a.txt', mode: 0o600 }] },
              },
              { name: 'sec', secret: { secretName: 'secret', optional: false } },
              {
                name: 'proj',
                projected: {
                  sources: [
                    { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
                  ],
                },
              },
            ],
            tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 }],
            affinity: {
              nodeAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [
                  {
                    weight: 1,
                    preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] },
                  },
                ],
              },
            },
            nodeSelector: { disk: 'ssd' },
            hostAliases: [{ ip: '10.0.0.1', hostnames: ['a.local'] }],
            dnsConfig: { options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] },
          },
        },
      ],
      status: () => ({
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-02T03:04:05Z' }],
          hostIP: '10.0.0.2',
          podIP: '10.1.0.5',
          podIPs: [{ ip: '10.1.0.5' }],
          startTime: '2026-01-02T03:04:00Z',
          containerStatuses: [
            {
              name: 'app',
              ready: true,
              restartCount: 2,
              image: 'registry.example/app:1',
              imageID: '',
              started: true,
              state: { running: { startedAt: '2026-01-02T03:04:01Z' } },
              lastState: {
                terminated: { exitCode: -1, reason: 'Error', startedAt: null, finishedAt: '2026-01-02T03:03:59Z' },
              },
            },
          ],
        },
      }),
    },
    {
      resource: kind('apps', 'v1', 'Deployment', 'deployments'),
      objects: [
        {
          metadata: meta('deploy'),
          spec: {
            replicas: 0,
            selector: { matchLabels: { app: 'd' } },
            strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
            revisionHistoryLimit: 3,
            template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
          },
        },
      ],
    },
    {
      resource: kind('apps', 'v1', 'ControllerRevision', 'controllerrevisions'),
      objects: [
        {
          metadata: meta('revision'),
          revision: 7,
          data: { spec: { template: { nested: [1, 'two', null, { x: true }] } } },
        },
      ],
    },
    {
      resource: kind('', 'v1', 'Service', 'services'),
      objects: [
        {
          metadata: meta('svc'),
          spec: {
            selector: { app: 'd' },
            ports: [
              { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
              { name: 'metrics', port: 9090, targetPort: 9091 },
            ],
            sessionAffinity: 'ClientIP',
            sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
          },
        },
      ],
    },
    {
      resource: kind('events.k8s.io', 'v1', 'Event', 'events'),
      objects: [
        {
          metadata: meta('event'),
          eventTime: '2026-01-02T03:04:05.123456Z',
          reportingController: 'nestor.dev/e2e',
          reportingInstance: 'e2e-1',
          action: 'Test',
          reason: 'Testing',
          type: 'Normal',
          note: 'a note',
          regarding: { kind: 'Pod', name: 'pod', namespace: ns, apiVersion: 'v1' },
          series: { count: 2, lastObservedTime: '2026-01-02T03:04:06.000001Z' },
        },
      ],
    },
    {
      resource: kind('', 'v1', 'Event', 'events'),
      objects: [
        {
          metadata: meta('core-event'),
          involvedObject: { kind: 'Pod', name: 'pod', namespace: ns },
          reason: 'Testing',
          message: 'm',
          count: 3,
          firstTimestamp: '2026-01-02T03:04:05Z',
          lastTimestamp: '2026-01-02T03:04:06Z',
          type: 'Warning',
          source: { component: 'e2e' },
        },
      ],
      listed: 2, // and the events.k8s.io Event above
    },
    {
      resource: kind('coordination.k8s.io', 'v1', 'Lease', 'leases'),
      objects: [
        {
          metadata: meta('lease'),
          spec: {
            holderIdentity: 'me',
            leaseDurationSeconds: 15,
            acquireTime: '2026-01-02T03:04:05.000000Z',
            renewTime: '2026-01-02T03:04:05.999999Z',
            leaseTransitions: 0,
          },
        },
      ],
    },
    {
      resource: kind('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims'),
      objects: [
        {
          metadata: meta('pvc'),
          spec: {
            accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
            resources: { requests: { storage: '1Gi' }, limits: { storage: '1500M' } },
            volumeMode: 'Filesystem',
            storageClassName: '',
          },
        },
      ],
    },
    {
      resource: kind('rbac.authorization.k8s.io', 'v1', 'Role', 'roles'),
      objects: [
        {
          metadata: meta('role'),
          rules: [
            { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
            { apiGroups: ['apps'], resources: ['deployments'], resourceNames: ['d'], verbs: ['*'] },
          ],
        },
      ],
    },
    {
      resource: kind('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings'),
      objects: [
        {
          metadata: meta('binding'),
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'role' },
          subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'x' }],
        },
      ],
    },
    {
      resource: kind('batch', 'v1', 'Job', 'jobs'),
      objects: [
        {
          metadata: meta('job'),
          spec: {
            suspend: true,
            backoffLimit: 0,
            completions: 3,
            parallelism: 1,
            template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } },
          },
        },
      ],
    },
    {
      resource: kind('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers'),
      objects: [
        {
          metadata: meta('hpa'),
          spec: {
            scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'deploy' },
            minReplicas: 1,
            maxReplicas: 5,
            metrics: [
              { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
              {
                type: 'Resource',
                resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } },
              },
            ],
            behavior: {
              scaleDown: {
                stabilizationWindowSeconds: 0,
                policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }],
              },
            },
          },
        },
      ],
    },
    {
      resource: kind('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets'),
      objects: [
        {
          metadata: meta('pdb'),
          spec: { minAvailable: '50%', selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } },
        },
      ],
    },
    {
      resource: kind('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies'),
      objects: [
        {
          metadata: meta('netpol'),
          spec: {
            podSelector: {},
            policyTypes: ['Ingress'],
            ingress: [
              {
                ports: [{ port: 'http' }, { port: 53, endPort: 60, protocol: 'UDP' }],
                from: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }],
              },
            ],
          },
        },
      ],
    },
    {
      resource: kind('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices'),
      objects: [
        {
          metadata: meta('slice'),
          addressType: 'IPv4',
          endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true, serving: false }, nodeName: 'node' }],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
        },
      ],
    },
    {
      resource: kind('', 'v1', 'ResourceQuota', 'resourcequotas'),
      objects: [
        { metadata: meta('quota'), spec: { hard: { pods: '10', 'requests.cpu': '4', 'requests.memory': '8Gi' } } },
      ],
    },
    {
      resource: kind('', 'v1', 'ServiceAccount', 'serviceaccounts'),
      objects: [{ metadata: meta('sa'), automountServiceAccountToken: false, secrets: [{ name: 'secret' }] }],
    },
  ];

  // Cluster-scoped kinds: selected by the label, cleaned up after.
  const clusterCases = (): Case[] => [
    {
      resource: kind('', 'v1', 'Node', 'nodes', false),
      objects: [
        {
          metadata: meta(`${label}-node`),
          spec: {
            unschedulable: true,
            podCIDR: '10.2.0.0/24',
            taints: [{ key: 'k', effect: 'NoSchedule', timeAdded: '2026-01-02T03:04:05Z' }],
          },
        },
      ],
      status: () => ({
        status: {
          capacity: { cpu: '4', memory: '16374356Ki', pods: '110', 'ephemeral-storage': '100G' },
          allocatable: { cpu: '3800m', memory: '15Gi' },
          conditions: [
            {
              type: 'Ready',
              status: 'False',
              lastHeartbeatTime: '2026-01-02T03:04:05Z',
              lastTransitionTime: null,
              reason: 'R',
            },
          ],
          addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
          daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
          nodeInfo: {
            machineID: 'm',
            systemUUID: 's',
            bootID: 'b',
            kernelVersion: 'k',
            osImage: 'o',
            containerRuntimeVersion: 'c',
            kubeletVersion: 'v',
            kubeProxyVersion: '',
            operatingSystem: 'linux',
            architecture: 'amd64',
          },
        },
      }),
    },
    {
      resource: kind('scheduling.k8s.io', 'v1', 'PriorityClass', 'priorityclasses', false),
      objects: [
        {
          metadata: meta(`${label}-priority`),
          value: -5,
          globalDefault: false,
          preemptionPolicy: 'Never',
          description: 'd',
        },
      ],
    },
    {
      resource: kind('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false),
      objects: [
        {
          metadata: meta(`${label}-storage`),
          provisioner: 'example.com/p',
          parameters: { type: 'fast', empty: '' },
          allowVolumeExpansion: true,
          reclaimPolicy: 'Retain',
          mountOptions: ['ro'],
          allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['a'] }] }],
        },
      ],
    },
    {
      resource: kind('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', false),
      objects: [
        {
          metadata: meta(`${label}-clusterrole`),
          rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
          aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] },
        },
      ],
    },
  ];

  before(async () => {
    env = await TestEnvironment.start();
    transport = await Transport.fromKubeConfig(env.kubeConfig);
    ns = await env.createNamespace('protobuf');
  });
  after(async () => {
    for (const { resource, objects } of clusterCases()) {
      for (const object of objects) {
        const name = (object as { metadata: { name: string } }).metadata.name;
        await transport.request('DELETE', resourcePath(resource, undefined, name)).catch(() => {});
      }
    }
    transport?.close();
    await env?.stop();
  });

  /** Creates the objects (and their status) and returns the resourceVersion from before. */
  async function create({ resource, objects, status }: Case): Promise<string> {
    const collection = resourcePath(resource, ns);
    const before = await transport.json<{ metadata: { resourceVersion: string } }>('GET', collection, {
      query: { limit: 1 },
    });
    for (const object of objects) {
      const created = await transport.json<{ metadata: { name: string } }>('POST', collection, {
        body: { apiVersion: apiVersion(resource), kind: resource.kind, ...object },
      });
      if (status) {
        await transport.json('PATCH', `${resourcePath(resource, ns, created.metadata.name)}/status`, {
          body: status(created.metadata.name),
          contentType: 'application/merge-patch+json',
        });
      }
    }
    return before.metadata.resourceVersion;
  }

  async function compareList(resource: ResourceDescriptor, query: Query, count: number): Promise<string> {
    const path = resourcePath(resource, ns);
    const json = await transport.json<{ metadata: { resourceVersion: string }; items: unknown[] }>('GET', path, {
      query,
    });
    assert.equal(json.items.length, count, `${resource.kind}: the JSON LIST has the objects`);
    const asked = await transport.request('GET', path, { query: { ...query, limit: 1 }, accept: PROTOBUF_ACCEPT });
    assert.equal(
      asked.headers['content-type'],
      'application/vnd.kubernetes.protobuf',
      `${resource.kind} is served in protobuf`,
    );
    // The same resourceVersion exactly: the same objects, whatever a controller did since.
    const pages = listPages<unknown>(transport, path, {
      query: { ...query, resourceVersion: json.metadata.resourceVersion, resourceVersionMatch: 'Exact' },
      protobuf: true,
      pageSize: 2,
    });
    const items: unknown[] = [];
    for await (const page of pages) items.push(...page.items);
    assert.deepStrictEqual(items, json.items, `${resource.kind}: LIST in protobuf = LIST in JSON`);
    return json.metadata.resourceVersion;
  }

  /** Every event of a watch from `resourceVersion` until the server ends it (timeoutSeconds). */
  async function watchEvents(resource: ResourceDescriptor, query: Query, protobuf: boolean): Promise<unknown[]> {
    const events: unknown[] = [];
    const stream = transport.stream(
      resourcePath(resource, ns),
      { ...query, watch: true, timeoutSeconds: 1 },
      undefined,
      {
        protobuf,
      },
    );
    for await (const event of stream) events.push(event);
    return events;
  }

  async function compareWatch(resource: ResourceDescriptor, query: Query, from: string, upTo: string) {
    const onlyUpTo = (events: unknown[]) =>
      events.filter(
        (e) =>
          BigInt((e as { object: { metadata: { resourceVersion: string } } }).object.metadata.resourceVersion) <=
          BigInt(upTo),
      );
    const [json, protobuf] = await Promise.all([
      watchEvents(resource, { ...query, resourceVersion: from }, false),
      watchEvents(resource, { ...query, resourceVersion: from }, true),
    ]);
    assert.ok(onlyUpTo(json).length > 0, `${resource.kind}: the JSON WATCH replays the creations`);
    assert.deepStrictEqual(onlyUpTo(protobuf), onlyUpTo(json), `${resource.kind}: WATCH in protobuf = WATCH in JSON`);
  }

  it('for namespaced kinds of many groups', async () => {
    for (const c of cases()) {
      const from = await create(c);
      // Only the test's objects: a controller may add its own (the default ServiceAccount), and
      // on a control plane with nodes the EndpointSlice controller makes one for the Service,
      // with the Service's labels.
      const query = { labelSelector: `nestor.dev/e2e=${label},!endpointslice.kubernetes.io/managed-by` };
      const upTo = await compareList(c.resource, query, c.listed ?? c.objects.length);
      await compareWatch(c.resource, query, from, upTo);
    }
  });

  it('for cluster-scoped kinds (Node with its status, PriorityClass, StorageClass, ClusterRole)', async () => {
    for (const c of clusterCases()) {
      const collection = resourcePath(c.resource);
      const before = await transport.json<{ metadata: { resourceVersion: string } }>('GET', collection, {
        query: { limit: 1 },
      });
      for (const object of c.objects) {
        const created = await transport.json<{ metadata: { name: string } }>('POST', collection, {
          body: { apiVersion: apiVersion(c.resource), kind: c.resource.kind, ...object },
        });
        if (c.status) {
          await transport.json('PATCH', `${resourcePath(c.resource, undefined, created.metadata.name)}/status`, {
            body: c.status(created.metadata.name),
            contentType: 'application/merge-patch+json',
          });
        }
      }
      const query = { labelSelector: `nestor.dev/e2e=${label}` };
      const upTo = await compareList(c.resource, query, c.objects.length);
      await compareWatch(c.resource, query, before.metadata.resourceVersion, upTo);
    }
  });

  it('for the Namespace and the initial-events-end BOOKMARK of a streamed list', async () => {
    const namespaces = kind('', 'v1', 'Namespace', 'namespaces', false);
    await compareList(namespaces, { fieldSelector: `metadata.name=${ns}` }, 1);
    const configMaps = kind('', 'v1', 'ConfigMap', 'configmaps');
    const query = { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true };
    const untilBookmark = async (protobuf: boolean) => {
      const abort = new AbortController();
      const events: { type: string; object: { metadata: { resourceVersion: string; annotations?: object } } }[] = [];
      const stream = transport.stream<(typeof events)[number]>(
        resourcePath(configMaps, ns),
        { ...query, watch: true },
        abort.signal,
        { protobuf },
      );
      for await (const event of stream) {
        events.push(event);
        if (event.type === 'BOOKMARK') break;
      }
      return events;
    };
    const json = await untilBookmark(false);
    const protobuf = await untilBookmark(true);
    assert.equal(protobuf.at(-1)?.type, 'BOOKMARK');
    assert.deepEqual(protobuf.at(-1)?.object.metadata.annotations, { 'k8s.io/initial-events-end': 'true' });
    // Only the bookmark's resourceVersion may move between the two requests.
    json.at(-1)!.object.metadata.resourceVersion = protobuf.at(-1)!.object.metadata.resourceVersion;
    assert.deepStrictEqual(protobuf, json);
  });

  it('for a Status answering a LIST', async () => {
    const configMaps = kind('', 'v1', 'ConfigMap', 'configmaps');
    const badList = async (protobuf: boolean) => {
      const pages = listPages(transport, resourcePath(configMaps, ns), { query: { labelSelector: '!!!' }, protobuf });
      return pages.next().then(
        () => assert.fail('an invalid label selector is refused'),
        (error: unknown) => error as KubeApiError,
      );
    };
    const [jsonError, protobufError] = [await badList(false), await badList(true)];
    assert.ok(protobufError instanceof KubeApiError);
    assert.equal(protobufError.status, 400);
    assert.equal(protobufError.message, jsonError.message);
    assert.deepStrictEqual(protobufError.statusObject, jsonError.statusObject);
  });

  describe('on a control plane of its own', () => {
    let own: TestEnvironment;
    let ownTransport: Transport;
    const widgets = kind('protobuf.nestor.dev', 'v1', 'Widget', 'widgets');
    before(async () => {
      own = await TestEnvironment.start({ useExistingCluster: false, crds: [WIDGET_CRD] });
      ownTransport = await Transport.fromKubeConfig(own.kubeConfig);
    });
    after(async () => {
      ownTransport?.close();
      await own?.stop();
    });

    it('decodes the 410 ERROR event of a watch from a compacted resourceVersion', async (t) => {
      const configMaps = kind('', 'v1', 'ConfigMap', 'configmaps');
      const ownNs = await own.createNamespace('gone');
      const path = resourcePath(configMaps, ownNs);
      const created = await ownTransport.json<{ metadata: { resourceVersion: string } }>('POST', path, {
        body: { metadata: { name: 'history' }, data: { step: '0' } },
      });
      await ownTransport.json('PATCH', resourcePath(configMaps, ownNs, 'history'), {
        body: { data: { step: '1' } },
        contentType: 'application/merge-patch+json',
      });
      // Compaction restarts the API server: this control plane is the test's own.
      const started = Date.now();
      await own.compactEtcd();
      t.diagnostic(`compactEtcd took ${Date.now() - started} ms`);
      const gone = async (protobuf: boolean) => {
        const events: { type: string; object: KubeStatus }[] = [];
        const query = { watch: true, resourceVersion: created.metadata.resourceVersion, timeoutSeconds: 5 };
        for await (const event of ownTransport.stream<(typeof events)[number]>(path, query, undefined, { protobuf })) {
          events.push(event);
        }
        return events;
      };
      const [json, protobuf] = [await gone(false), await gone(true)];
      assert.equal(protobuf[0]?.type, 'ERROR');
      assert.equal(protobuf[0]?.object.code, 410);
      assert.deepStrictEqual(protobuf, json);
      // What the list-watch loop makes of it: Gone, so it lists again.
      assert.ok(KubeApiError.fromResponse({ method: 'GET', path, watch: true }, 410, protobuf[0]!.object).isGone);
    });

    it('reads the JSON a server answers when it has no protobuf for the kind (a custom resource)', async () => {
      const ownNs = await own.createNamespace('json');
      const path = resourcePath(widgets, ownNs);
      await ownTransport.json('POST', path, {
        body: { apiVersion: 'protobuf.nestor.dev/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3 } },
      });
      const items: unknown[] = [];
      let resourceVersion = '';
      for await (const page of listPages<unknown>(ownTransport, path, { protobuf: true })) {
        items.push(...page.items);
        resourceVersion = page.resourceVersion ?? '';
      }
      const json = await ownTransport.json<{ items: unknown[] }>('GET', path);
      assert.deepStrictEqual(items, json.items);
      await ownTransport.json('PATCH', resourcePath(widgets, ownNs, 'w'), {
        body: { spec: { size: 4 } },
        contentType: 'application/merge-patch+json',
      });
      const events: { type: string; object: { spec: object } }[] = [];
      const query = { watch: true, resourceVersion, timeoutSeconds: 1 };
      for await (const event of ownTransport.stream<(typeof events)[number]>(path, query, undefined, {
        protobuf: true,
      })) {
        events.push(event);
      }
      assert.deepEqual(
        events.map((e) => [e.type, e.object.spec]),
        [['MODIFIED', { size: 4 }]],
      );
    });
  });
});

const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.protobuf.nestor.dev' },
  spec: {
    group: 'protobuf.nestor.dev',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

function kind(group: string, version: string, kind: string, plural: string, namespaced = true): ResourceDescriptor {
  return { group, version, kind, plural, namespaced };
}

function apiVersion(resource: ResourceDescriptor): string {
  return resource.group ? `${resource.group}/${resource.version}` : resource.version;
}
