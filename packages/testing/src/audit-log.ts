import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One entry of the API server's audit log (the fields fault tests read). */
export interface AuditEvent {
  verb: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string; subresource?: string };
  responseStatus?: { code?: number };
  /** When the request was received, and when the response completed (RFC 3339, microseconds). */
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

// Writes only, at Metadata level, once each (ResponseComplete): who wrote what, when, with
// which answer. Reads are left out to keep the log small under thousands of objects.
const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
  - level: None
    verbs: [get, list, watch]
  - level: Metadata
`;

/** Writes the policy into `dir`; returns the kube-apiserver flags and the log's path. */
export async function auditLogFlags(dir: string): Promise<{ flags: string[]; path: string }> {
  const policy = join(dir, 'audit-policy.yaml');
  const path = join(dir, 'audit.log');
  await writeFile(policy, POLICY);
  return {
    path,
    flags: [
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${path}`,
      '--audit-log-maxsize=0',
      '--audit-log-mode=blocking',
    ],
  };
}

/** The events in the log so far (a line being written is skipped). */
export async function readAuditLog(path: string): Promise<AuditEvent[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const events: AuditEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      events.push(JSON.parse(line) as AuditEvent);
    } catch {
      // the line the API server is writing now
    }
  }
  return events;
}
