// Attack e: an object nested 2,000 deep (spec.deep.a.a.a…) in a CREATE sent to the defaulting
// (mutating) webhook. Nestor computes the JSON Patch by walking the object; controller-runtime
// decodes into the typed Widget and marshals it back.
import { admissionReview, describeAnswer, MUTATE_PATH, post } from './harness.mjs';

export function deepValue(depth) {
  let value = {};
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

function deepCase(depth) {
  return {
    attack: 'deep-object',
    id: `depth-${depth}`,
    title: `nested ${depth.toLocaleString('en-US')} deep, defaulting webhook`,
    run: async ({ port, ca, quick }) => {
      const review = admissionReview({
        edit: (o) => {
          delete o.spec.size;
          o.spec.deep = deepValue(depth);
        },
      });
      const body = JSON.stringify(review);
      const answer = await post(port, ca, `${MUTATE_PATH}?timeout=10s`, body, { timeoutMs: quick ? 20_000 : 60_000 });
      let patch;
      try {
        const { response } = JSON.parse(answer.body);
        if (response?.patch) patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
      } catch {
        // described below
      }
      // Right: defaulted (the patch sets spec.size, as controller-runtime does), or refused with
      // a 4xx that names the depth; a 500 or a dropped request is wrong.
      let message;
      let code = answer.status;
      try {
        const { response } = JSON.parse(answer.body);
        message = response?.status?.message ?? '';
        if (response?.allowed === false) code = response.status?.code ?? 500;
      } catch {
        message = answer.body ?? '';
      }
      const defaulted = patch?.some((op) => op.path === '/spec/size' && op.value === 1) ?? false;
      const refused = code >= 400 && code < 500 && /depth|deep|nest/i.test(message);
      return {
        checks: [
          {
            check: 'defaulted or refused',
            expect: 'patch sets /spec/size, or a 4xx naming the depth',
            ok: defaulted || refused,
            detail: describeAnswer(answer),
          },
        ],
        depth,
        bodyBytes: body.length,
        status: answer.status ?? null,
        patch: patch?.map((op) => `${op.op} ${op.path}`),
        summary: `${describeAnswer(answer)}${patch ? `; patch: ${patch.map((op) => `${op.op} ${op.path}`).join(', ') || 'empty'}` : ''}`,
      };
    },
  };
}

export const cases = [deepCase(2_000)];

export const description = {
  attack: 'deep-object',
  title: 'e. deep object through a defaulting webhook',
  what: 'A CREATE whose object holds spec.deep nested 2,000 deep, sent to the defaulting (mutating) webhook.',
  mustHold:
    'A depth limit with a clear error naming the object (not a 500), the same in every decoder and handler; the ' +
    'server unharmed.',
};
