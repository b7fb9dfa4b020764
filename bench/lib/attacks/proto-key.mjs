// Attack f: a `__proto__` key as data. JSON allows it, a custom resource may hold it; an
// object copied by assignment takes it as its prototype instead, so a field reads a value the
// object never had and the key vanishes from the output. Each check sends one review whose
// right answer differs from the fooled one.
import {
  admissionReview,
  CONVERSION_GROUP,
  CONVERT_PATH,
  conversionReview,
  conversionWidget,
  describeAnswer,
  MUTATE_PATH,
  post,
  VALIDATE_PATH,
} from './harness.mjs';

const PROTO = '"@PROTO@"';
/** JSON with a "__proto__" key wherever the object had "@PROTO@". */
const withProto = (value) => JSON.stringify(value).replaceAll(PROTO, '"__proto__"');

async function answerOf(port, ca, path, body) {
  const answer = await post(port, ca, `${path}?timeout=10s`, body, { timeoutMs: 20_000 });
  let response;
  try {
    response = JSON.parse(answer.body).response;
  } catch {
    // not a review: described by describeAnswer
  }
  return { answer, response };
}

const checks = [
  {
    name: 'validate',
    // No size of its own; size 1000 on its would-be prototype: a fooled quota check denies.
    expect: 'allowed (spec.size unset)',
    async run(port, ca) {
      const review = admissionReview({ edit: (o) => (o.spec = { '@PROTO@': { size: 1000 }, round: 1 }) });
      const { answer, response } = await answerOf(port, ca, VALIDATE_PATH, withProto(review));
      return { ok: response?.allowed === true, detail: describeAnswer(answer) };
    },
  },
  {
    name: 'default',
    // A fooled defaulter sees size 5 and sets nothing, or its patch removes the key.
    expect: 'patch sets /spec/size to 1, leaves /spec/__proto__',
    async run(port, ca) {
      const review = admissionReview({ edit: (o) => (o.spec = { '@PROTO@': { size: 5 }, round: 1 }) });
      const { answer, response } = await answerOf(port, ca, MUTATE_PATH, withProto(review));
      const patch = response?.patch ? JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) : [];
      const setsSize = patch.some(
        (op) => ['add', 'replace'].includes(op.op) && op.path === '/spec/size' && op.value === 1,
      );
      const touchesProto = patch.some((op) => op.path.startsWith('/spec/__proto__'));
      return {
        ok: response?.allowed === true && setsSize && !touchesProto,
        detail: `${describeAnswer(answer)}; patch: ${patch.map((op) => `${op.op} ${op.path}`).join(', ') || 'none'}`,
      };
    },
  },
  {
    name: 'convert to hub',
    // v2 spec.replicas is absent; a fooled copy reads it from __proto__ and the hub gets size 42.
    expect: 'spec.size not 42',
    async run(port, ca) {
      const object = conversionWidget('v2', { '@PROTO@': { replicas: 42 }, round: 1 });
      const { answer, response } = await answerOf(
        port,
        ca,
        CONVERT_PATH,
        withProto(conversionReview([object], `${CONVERSION_GROUP}/v1`)),
      );
      const converted = response?.convertedObjects?.[0];
      return {
        ok: response?.result?.status === 'Success' && converted?.spec?.size !== 42,
        detail: `${describeAnswer(answer)}; spec.size ${JSON.stringify(converted?.spec?.size)}`,
      };
    },
  },
  {
    name: 'convert to spoke',
    // The hub's spec.__proto__ is data v2 cannot hold: Nestor keeps it in the conversion-data
    // annotation; controller-runtime's typed structs drop unknown fields (nothing to check).
    expect: 'spec.__proto__ kept in nestor.dev/conversion-data (Nestor)',
    async run(port, ca, impl) {
      const object = conversionWidget('v1', { size: 3, '@PROTO@': { note: 'kept' } });
      const { answer, response } = await answerOf(
        port,
        ca,
        CONVERT_PATH,
        withProto(conversionReview([object], `${CONVERSION_GROUP}/v2`)),
      );
      const data = response?.convertedObjects?.[0]?.metadata?.annotations?.['nestor.dev/conversion-data'];
      const kept = typeof data === 'string' && data.includes('"__proto__"');
      return {
        ok: impl === 'nestor' ? response?.result?.status === 'Success' && kept : null,
        detail: `${describeAnswer(answer)}; conversion-data ${data ?? 'absent'}`,
      };
    },
  },
];

export const cases = [
  {
    attack: 'proto-key',
    id: 'checks',
    title: '`__proto__` in validate, default, convert',
    run: async ({ port, ca, impl }) => {
      const results = [];
      for (const check of checks) {
        const { ok, detail } = await check.run(port, ca, impl);
        results.push({ check: check.name, expect: check.expect, ok, detail });
      }
      const judged = results.filter((r) => r.ok !== null);
      return {
        checks: results,
        summary:
          `${judged.filter((r) => r.ok).length}/${judged.length} right` +
          results
            .filter((r) => r.ok === false)
            .map((r) => `; ${r.check} wrong (expected ${r.expect}): ${r.detail}`)
            .join(''),
      };
    },
  },
];

export const description = {
  attack: 'proto-key',
  title: 'f. `__proto__` as data',
  what:
    'A `__proto__` key in request.object through the validating and the defaulting webhook, and in a Widget ' +
    'converted to the hub and to a spoke; each review built so that a copy that takes the key as its prototype ' +
    'gives a different answer (a quota denial, no default, spec.size 42, the key gone from the conversion data).',
  mustHold:
    'Kept as data everywhere: objects from the wire built without prototypes, or keys handled explicitly; a test ' +
    'per decoder and per webhook path.',
};
