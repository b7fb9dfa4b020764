// Attack a: the conversion-data bomb. A v2 (spoke) Widget whose `nestor.dev/conversion-data`
// annotation, which anyone who can write the object can set, holds a merge patch with N
// fields under spec, sent to /convert for v1 (the hub). The patch also sets spec.size, which
// the spoke as written disagrees with, so the converter cannot restore it whole and tries
// the fields one at a time. controller-runtime has no such annotation: it converts the same
// bytes, the baseline cost of a review this size.
import {
  CONVERSION_GROUP,
  CONVERT_PATH,
  conversionReview,
  conversionWidget,
  describeAnswer,
  post,
} from './harness.mjs';

const ANNOTATION = 'nestor.dev/conversion-data';

/** The annotation's text: spec.size plus `fields` fields f0…, or as many as fit in `bytes`. */
export function conversionData({ fields, bytes }) {
  const spec = { size: 99 };
  if (fields) for (let i = 0; i < fields; i++) spec[`f${i}`] = i;
  else for (let i = 0; JSON.stringify({ spec }).length < bytes; i++) spec[`f${i}`] = i;
  return JSON.stringify({ spec });
}

function bombCase(id, title, data, { full, quick }) {
  return {
    attack: 'conversion-data',
    id,
    title,
    run: async ({ port, ca, quick: isQuick }) => {
      const timeoutMs = (isQuick ? quick : full) * 1000;
      const object = conversionWidget('v2', { replicas: 3, round: 1 }, { [ANNOTATION]: data });
      const body = JSON.stringify(conversionReview([object], `${CONVERSION_GROUP}/v1`));
      const answer = await post(port, ca, `${CONVERT_PATH}?timeout=30s`, body, { timeoutMs });
      return {
        annotationBytes: data.length,
        bodyBytes: body.length,
        answerMs: answer.ms,
        answered: !answer.error,
        summary: `${(data.length / 1000).toFixed(0)} KB annotation: ${describeAnswer(answer)}`,
      };
    },
  };
}

export const cases = [
  bombCase('n1000', 'N = 1,000 fields', conversionData({ fields: 1000 }), { full: 60, quick: 20 }),
  bombCase('n2000', 'N = 2,000 fields', conversionData({ fields: 2000 }), { full: 60, quick: 20 }),
  bombCase('n4000', 'N = 4,000 fields', conversionData({ fields: 4000 }), { full: 60, quick: 20 }),
  bombCase('78kb', 'a 78 KB annotation', conversionData({ bytes: 78_000 }), { full: 60, quick: 20 }),
];

export const description = {
  attack: 'conversion-data',
  title: 'a. conversion-data bomb',
  what:
    'A v2 (spoke) Widget sent to /convert for v1 (the hub), its `nestor.dev/conversion-data` annotation (any user ' +
    'who can write the object sets it) a merge patch of N fields under spec plus a spec.size the spoke disagrees ' +
    'with: N = 1,000 / 2,000 / 4,000, and a 78 KB annotation. controller-runtime has no such annotation: the same ' +
    'review is its baseline cost.',
  mustHold:
    "Linear in the annotation's size, bounded (refuse or ignore what is too large, saying so in the log and an " +
    'Event); no request blocks the event loop for more than a few milliseconds at a time: the /convert and ' +
    '/validate deadlines must be able to fire.',
};
