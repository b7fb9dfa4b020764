// `nestor manifests --check`: the generated CRDs compared with the previous release's before
// anything is written, so that a release that breaks stored objects writes nothing.
import { readComparedCrd, type OperatorManifests } from '@nestor/operator/manifests';
import type { CommandIo } from '../command-io.js';
import { checkAgainstPrevious, type CompatibilityRequest } from './compatibility-check.js';

const GENERATED = 'the generated CRDs';

/** Reports the check on stderr; false when a breaking change is not allowed. */
export function generatedCrdsPass(
  crds: OperatorManifests['crds'],
  request: CompatibilityRequest,
  io: CommandIo,
): boolean {
  const next = () => crds.map((crd) => readComparedCrd(crd, GENERATED));
  const { report, text } = checkAgainstPrevious(next, GENERATED, request, io.cwd);
  io.stderr(text);
  if (report.breaking.length === 0) return true;
  io.stderr('nestor manifests: nothing written: change the source, or allow each change above\n');
  return false;
}
