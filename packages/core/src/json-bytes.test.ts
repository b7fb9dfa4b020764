import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { closingQuote, StreamedString } from './json-bytes.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('json-bytes', () => {
  it('finds the quote that closes a string past escaped quotes and runs of backslashes', () => {
    assert.equal(closingQuote(bytes('a\\"b\\\\"c"'), 0), 6); // a \" b \\ "
    assert.equal(closingQuote(bytes('a\\"b'), 0), -1);
    assert.equal(closingQuote(bytes('ab"'), 0, 2), -1);
  });

  it('carries a backslash that a chunk ends on into the next chunk', () => {
    const string = new StreamedString();
    assert.equal(string.close(bytes('ab\\'), 0), -1);
    assert.equal(string.close(bytes('"c"'), 0), 2); // the first quote is escaped
    const even = new StreamedString();
    assert.equal(even.close(bytes('ab\\\\'), 0), -1);
    assert.equal(even.close(bytes('"c"'), 0), 0);
  });
});
