import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareResourceVersions } from './resource-version.js';

describe('compareResourceVersions', () => {
  it('orders positive integers of any length, as apimachinery does', () => {
    assert.equal(compareResourceVersions('9', '10')! < 0, true, 'by length first, not as text');
    assert.equal(compareResourceVersions('10', '9')! > 0, true);
    assert.equal(compareResourceVersions('123', '123'), 0);
    assert.equal(compareResourceVersions('124', '123')! > 0, true);
    const big = '18446744073709551616'; // past 64 bits
    assert.equal(compareResourceVersions(`${big}1`, `${big}0`)! > 0, true);
  });

  it('cannot order what is not such an integer: empty, 0, a leading zero, other characters', () => {
    for (const odd of ['', '0', '012', '12a', '-3', ' 5', '1.5']) {
      assert.equal(compareResourceVersions(odd, '5'), undefined, JSON.stringify(odd));
      assert.equal(compareResourceVersions('5', odd), undefined, JSON.stringify(odd));
    }
  });
});
