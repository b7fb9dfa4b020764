import { Field, type FieldOptions } from '../crd/field.decorator.js';

// metav1.Condition as a @Field class: the schema controller-gen writes for it (required
// fields, the enum, the patterns and lengths of k8s.io/apimachinery/pkg/apis/meta/v1), so
// `kubectl wait --for=condition=Ready` and every status tool read a Nestor status as a Go
// operator's.

/** A condition's status, as metav1.Condition spells it. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition: one aspect of the current state of an object. */
export class Condition {
  @Field({
    type: 'string',
    format: 'date-time',
    description:
      'lastTransitionTime is the last time the condition transitioned from one status to another. ' +
      'This should be when the underlying condition changed.  If that is not known, then using the time when the API field changed is acceptable.',
  })
  lastTransitionTime!: string;

  @Field({
    description:
      'message is a human readable message indicating details about the transition. This may be an empty string.',
    maxLength: 32768,
  })
  message!: string;

  @Field({
    type: 'integer',
    format: 'int64',
    minimum: 0,
    required: false,
    description:
      'observedGeneration represents the .metadata.generation that the condition was set based upon. ' +
      'For instance, if .metadata.generation is currently 12, but the .status.conditions[x].observedGeneration is 9, ' +
      'the condition is out of date with respect to the current state of the instance.',
  })
  observedGeneration?: number;

  @Field({
    description:
      "reason contains a programmatic identifier indicating the reason for the condition's last transition. " +
      'Producers of specific condition types may define expected values and meanings for this field, ' +
      'and whether the values are considered a guaranteed API. The value should be a CamelCase string. This field may not be empty.',
    minLength: 1,
    maxLength: 1024,
    pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
  })
  reason!: string;

  @Field({ description: 'status of the condition, one of True, False, Unknown.', enum: ['True', 'False', 'Unknown'] })
  status!: ConditionStatus;

  @Field({
    description: 'type of condition in CamelCase or in foo.example.com/CamelCase.',
    maxLength: 316,
    pattern:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
  })
  type!: string;
}

/**
 * `status.conditions` in one line, as kubebuilder's `+listType=map +listMapKey=type`:
 *
 * ```ts
 * class MemcachedStatus {
 *   @ConditionsField() conditions?: Condition[];
 * }
 * ```
 *
 * Optional by default; `options` adds to or overrides the field's (a description, maxItems).
 */
export function ConditionsField(options: FieldOptions = {}): PropertyDecorator {
  return Field(() => [Condition], {
    listType: 'map',
    listMapKeys: ['type'],
    required: false,
    description: 'Conditions of the object: the latest observations of its state, one per type.',
    ...options,
  });
}
