import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  EventsV1Event,
  k8s,
  ObjectOf,
  CronJob,
  Pod,
  V1DeploymentCondition,
  V1Job,
  V1Lease,
  V1ObjectMeta,
  V1Pod,
} from './kinds.js';
import type { Wire } from './wire.js';

// Type tests: tsc compiles this file in the build, so each `@ts-expect-error` below fails the
// build if the line it marks compiles (as it did when the models declared times `Date`).

/** A Job as the API server sends it, decoded as the client decodes it: JSON.parse, nothing more. */
const job = JSON.parse(
  JSON.stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'backup', creationTimestamp: '2026-01-02T03:04:05Z' },
    status: { startTime: '2026-01-02T03:04:05Z', completionTime: '2026-01-02T03:05:00Z', succeeded: 1 },
  }),
) as V1Job;

describe('client-node models as Nestor returns them', () => {
  it('have their times as the RFC 3339 strings the API server sends (checked by the compiler)', () => {
    const completed: string | undefined = job.status?.completionTime;
    const created: string | undefined = job.metadata?.creationTimestamp;
    assert.equal(typeof completed, 'string');
    assert.equal(typeof created, 'string');
    assert.equal(Date.parse(job.status!.completionTime!) - Date.parse(job.status!.startTime!), 55_000);

    // @ts-expect-error a Job's completionTime is a string: `.getTime()` would throw at run time
    assert.throws(() => job.status!.completionTime!.getTime(), TypeError);
    // @ts-expect-error metadata times are strings
    const meta: V1ObjectMeta = { creationTimestamp: new Date() };
    // @ts-expect-error a Lease's MicroTime is a string too
    const lease: V1Lease = { spec: { renewTime: new Date() } };
    // @ts-expect-error and an events.k8s.io Event's eventTime
    const event: EventsV1Event = { eventTime: new Date() };
    // @ts-expect-error conditions' lastTransitionTime, in the parts as in the kinds
    const condition: V1DeploymentCondition = { type: 'Available', status: 'True', lastTransitionTime: new Date() };
    // @ts-expect-error a pod's startTime, through the descriptor's object type
    const pod: ObjectOf<typeof Pod> = { status: { startTime: new Date() } };
    // @ts-expect-error a CronJob's lastScheduleTime
    const cron: ObjectOf<typeof CronJob> = { status: { lastScheduleTime: new Date() } };
    assert.ok(meta && lease && event && condition && pod && cron);
  });

  it('name any other client-node model through Wire<>', () => {
    type HpaStatus = Wire<k8s.V2HorizontalPodAutoscalerStatus>;
    const hpa: HpaStatus = { desiredReplicas: 2, lastScaleTime: '2026-01-02T03:04:05Z' };
    // @ts-expect-error client-node's own declaration says Date; Wire<> says what arrives
    const raw: k8s.V2HorizontalPodAutoscalerStatus = hpa;
    // Arrays, maps and optional fields keep their shape.
    const pod: V1Pod = { status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: 'now' }] } };
    assert.ok(raw && pod.status?.conditions?.[0]?.lastTransitionTime?.length);
  });
});
