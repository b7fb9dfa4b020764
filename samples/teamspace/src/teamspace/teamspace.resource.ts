// The TeamSpace kind, in the management cluster: which member clusters a team gets a
// namespace in, with what quota and who may work there. Cluster-scoped, as what it makes
// (namespaces) is. The class is the type the reconciler receives and, through @Field, the
// CRD's schema: the API server refuses a bad TeamSpace before the operator sees it.
import {
  type Condition,
  ConditionsField,
  CustomResource,
  type Defaulted,
  Field,
  type ObjectMeta,
  type Quantity,
} from '@nestor/operator';

/** A DNS-1123 label: what a namespace's name must be. */
const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** A DNS-1123 subdomain: what a Secret's name, and so a member cluster's, must be. */
const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

export class TeamQuota {
  @Field({ quantity: true, default: '4', description: 'CPU the namespace’s pods may request in all (requests.cpu).' })
  cpu!: Defaulted<Quantity>;

  @Field({
    quantity: true,
    default: '8Gi',
    description: 'Memory the namespace’s pods may request in all (requests.memory).',
  })
  memory!: Defaulted<Quantity>;

  @Field({ type: 'integer', minimum: 0, maximum: 10_000, default: 20, description: 'Pods the namespace may hold.' })
  pods!: Defaulted<number>;
}

export class TeamAccess {
  @Field({
    default: 'edit',
    minLength: 1,
    maxLength: 253,
    description: 'The ClusterRole the RoleBinding grants in the namespace (edit, view, admin, or one of your own).',
  })
  clusterRole!: Defaulted<string>;

  @Field({ type: () => ['string'], required: false, maxItems: 64, uniqueItems: true, description: 'Groups bound.' })
  groups?: string[];

  @Field({ type: () => ['string'], required: false, maxItems: 64, uniqueItems: true, description: 'Users bound.' })
  users?: string[];
}

export class TeamSpaceSpec {
  @Field({
    type: () => ['string'],
    maxItems: 256,
    uniqueItems: true,
    items: { maxLength: 253, pattern: DNS_SUBDOMAIN },
    description:
      'The member clusters, by name: the names of their kubeconfig Secrets. A cluster taken out loses the namespace.',
  })
  clusters!: string[];

  @Field({ maxLength: 63, pattern: DNS_LABEL, description: 'The namespace made in each member cluster.' })
  namespace!: string;

  @Field(() => TeamQuota, { default: {}, description: 'The ResourceQuota of the namespace.' })
  quota!: Defaulted<TeamQuota>;

  @Field(() => TeamAccess, {
    description: 'The RoleBinding of the namespace: a ClusterRole granted to groups and users.',
    rules: [
      {
        rule: '(has(self.groups) && size(self.groups) > 0) || (has(self.users) && size(self.users) > 0)',
        message: 'name at least one group or user to bind',
      },
    ],
  })
  access!: TeamAccess;
}

/** How the TeamSpace stands in one member cluster it selects. */
export class ClusterPlacement {
  @Field({ description: 'The member cluster.' })
  name!: string;

  @Field({ description: 'The namespace, its ResourceQuota and its RoleBinding are in place there.' })
  ready!: boolean;

  @Field({ description: 'What is there, or why not.' })
  message!: string;
}

export class TeamSpaceStatus {
  /** Ready: every selected cluster has the namespace, its quota and its RoleBinding. */
  @ConditionsField()
  conditions?: Condition[];

  @Field({ type: 'integer', required: false, description: 'The generation of the spec this status describes.' })
  observedGeneration?: number;

  @Field(() => [ClusterPlacement], {
    required: false,
    listType: 'map',
    listMapKeys: ['name'],
    description: 'Each selected cluster, in the order of spec.clusters.',
  })
  clusters?: ClusterPlacement[];
}

@CustomResource({
  group: 'teams.example.com',
  version: 'v1alpha1',
  kind: 'TeamSpace',
  scope: 'Cluster',
  shortNames: ['ts'],
  subresources: { status: {} },
  printerColumns: [
    { name: 'Namespace', type: 'string', jsonPath: '.spec.namespace' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    { name: 'Clusters', type: 'string', jsonPath: '.spec.clusters', priority: 1 },
  ],
})
export class TeamSpace {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;

  @Field(() => TeamSpaceSpec)
  spec!: TeamSpaceSpec;

  @Field(() => TeamSpaceStatus, { required: false })
  status?: TeamSpaceStatus;
}
