// Attack g: plain values. The container limit counts objects and arrays; a review can instead
// pack ~3.5 million numbers (two bytes each) or 550,000 keys under the 7 MiB body cap, which
// JSON.parse turns into 28 MB or more each, and far more while parsing. One review, then four
// at once, of each shape, to the validating webhook.
import { admissionReview, describeAnswer, post, VALIDATE_PATH } from './harness.mjs';

const TARGET_BYTES = 7_000_000;

/** A review whose object's spec.items holds `shape`: 'numbers' (a flat array) or 'keys' (one object). */
export function plainValuesBody(shape, targetBytes = TARGET_BYTES) {
  const placeholder = '"@ITEMS@"';
  const shell = JSON.stringify(admissionReview({ edit: (o) => (o.spec.items = '@ITEMS@') }));
  const room = targetBytes - shell.length;
  let items;
  let values;
  if (shape === 'numbers') {
    values = Math.floor(room / 2);
    items = `[${'1,'.repeat(values - 1)}1]`;
  } else {
    const keys = [];
    for (let i = 0, bytes = 2; bytes < room; i++) {
      const member = `"${i.toString(36)}":0`;
      keys.push(member);
      bytes += member.length + 1;
    }
    values = keys.length * 2;
    items = `{${keys.join(',')}}`;
  }
  return { body: shell.replace(placeholder, items), values };
}

function valuesCase(shape, count) {
  return {
    attack: 'plain-values',
    id: `${shape}-${count === 1 ? 'one' : count}`,
    title: `${count === 1 ? 'one review' : `${count} reviews at once`} of ${shape === 'numbers' ? 'a flat array of numbers' : 'an object of many keys'}`,
    run: async ({ port, ca, quick }) => {
      const { body, values } = plainValuesBody(shape);
      const answers = await Promise.all(
        Array.from({ length: count }, () =>
          post(port, ca, `${VALIDATE_PATH}?timeout=10s`, body, { timeoutMs: quick ? 20_000 : 60_000 }),
        ),
      );
      return {
        bodyBytes: body.length,
        values,
        answers: answers.map(describeAnswer),
        summary: `${count} × ${(body.length / 1e6).toFixed(1)} MB (${(values / 1e6).toFixed(2)} M values and keys): ${[
          ...new Set(answers.map((a) => describeAnswer(a).replace(/ in [\d.]+ m?s$/, ''))),
        ].join('; ')}`,
      };
    },
  };
}

export const cases = [valuesCase('numbers', 1), valuesCase('numbers', 4), valuesCase('keys', 1), valuesCase('keys', 2)];

export const description = {
  attack: 'plain-values',
  title: 'g. plain values',
  what:
    'One AdmissionReview of ~7 MB whose object holds a flat array of ~3.5 million numbers, then four at once; ' +
    'one whose object has ~550,000 keys, then two at once.',
  mustHold:
    'Memory per review bounded by what it holds, values and keys counted, and RSS back after the burst; a clear ' +
    'denial naming the limit; the legitimate client answered throughout.',
};
