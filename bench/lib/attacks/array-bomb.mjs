// Attack b: the array bomb. One AdmissionReview of ~7.2 MB (under the 7 MiB body cap) whose
// request.object.spec holds ~3.5 million empty arrays, nested in chains 32 deep
// (`[[[…]]],[[[…]]],…`: two bytes of JSON per array, each a heap object once parsed), sent to
// the validating webhook; then four at once. Nestor parses the whole review before its handler
// runs; controller-runtime decodes request.object into the typed Widget, skipping what it
// does not know.
import { admissionReview, describeAnswer, post, VALIDATE_PATH } from './harness.mjs';

const TARGET_BYTES = 7_200_000;
const CHAIN_DEPTH = 32;

/** The review's body and how many arrays it holds. */
export function arrayBombBody(targetBytes = TARGET_BYTES) {
  const placeholder = '"@ITEMS@"';
  const shell = JSON.stringify(admissionReview({ edit: (o) => (o.spec.items = '@ITEMS@') }));
  const chain = '['.repeat(CHAIN_DEPTH) + ']'.repeat(CHAIN_DEPTH);
  const chains = Math.floor((targetBytes - shell.length) / (chain.length + 1));
  const items = `[${Array(chains).fill(chain).join(',')}]`;
  return { body: shell.replace(placeholder, items), arrays: chains * CHAIN_DEPTH + 1 };
}

function bombCase(id, title, count) {
  return {
    attack: 'array-bomb',
    id,
    title,
    run: async ({ port, ca, quick }) => {
      const { body, arrays } = arrayBombBody();
      const answers = await Promise.all(
        Array.from({ length: count }, () =>
          post(port, ca, `${VALIDATE_PATH}?timeout=10s`, body, { timeoutMs: quick ? 20_000 : 60_000 }),
        ),
      );
      return {
        bodyBytes: body.length,
        arrays,
        answers: answers.map(describeAnswer),
        summary: `${count} × ${(body.length / 1e6).toFixed(1)} MB (${(arrays / 1e6).toFixed(1)} M arrays): ${[
          ...new Set(answers.map((a) => describeAnswer(a).replace(/ in [\d.]+ m?s$/, ''))),
        ].join('; ')}; slowest ${Math.max(...answers.map((a) => a.ms / 1000)).toFixed(1)} s`,
      };
    },
  };
}

export const cases = [bombCase('one', 'one 7.2 MB review', 1), bombCase('four', 'four at once', 4)];

export const description = {
  attack: 'array-bomb',
  title: 'b. array bomb',
  what:
    'One AdmissionReview of ~7.2 MB (under the 7 MiB body cap) whose request.object.spec holds ~3.5 million empty ' +
    'arrays (chains 32 deep, two bytes of JSON each), sent to the validating webhook; then four such reviews at once.',
  mustHold:
    'Memory per request bounded by a small multiple of its size, and the total bounded: a limit on reviews in ' +
    'flight (beyond it an answer the API server retries or fails fast on, not a queue without end); depth and ' +
    'element limits with a clear 400/denial; the 512 Mi limit of the Deployment `nestor manifests` writes never reached.',
};
