// Kubernetes resource quantities (`1Gi`, `500m`, `2`), as apimachinery's resource.Quantity
// reads them: the schema a `@Field({ quantity: true })` gets, and exact comparison. A custom
// resource stores a quantity as it was written (only built-in kinds canonicalize them), so
// `1Gi`, `1024Mi` and 1073741824 are the same size spelled three ways.

/** A quantity as a custom resource holds it: a string such as `1Gi`, or an integer. */
export type Quantity = string | number;

/**
 * The pattern controller-gen writes for resource.Quantity: a decimal number, then a binary
 * suffix (Ki..Ei), a decimal one (n, u, m, k, M, G, T, P, E) or a decimal exponent (e3).
 */
export const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';

/**
 * Longer strings are refused: no real quantity comes close, and the exact arithmetic below
 * stays bounded whatever a custom resource holds.
 */
export const MAX_QUANTITY_LENGTH = 64;
/** Decimal exponents (`1e100`) beyond this are refused for the same reason. */
export const MAX_QUANTITY_EXPONENT = 100;

/** A value that is not a quantity, with what was wrong. */
export class QuantityError extends Error {
  constructor(value: unknown, problem: string) {
    super(`${describe(value)} is not a Kubernetes quantity: ${problem}`);
    this.name = 'QuantityError';
  }
}

// The grammar of QUANTITY_PATTERN in groups: sign, integer digits, fraction digits, suffix.
const GRAMMAR = /^([+-]?)([0-9]*)(?:\.([0-9]*))?([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** sign * digits * 10^pow10 * 2^pow2, exactly. */
interface Exact {
  negative: boolean;
  digits: bigint;
  pow10: number;
  pow2: number;
}

function exact(value: Quantity): Exact {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new QuantityError(value, 'a number must be finite');
    return exact(String(value));
  }
  if (typeof value !== 'string') throw new QuantityError(value, 'expected a string such as "1Gi", or a number');
  if (value.length > MAX_QUANTITY_LENGTH)
    throw new QuantityError(value, `longer than ${MAX_QUANTITY_LENGTH} characters`);
  const match = GRAMMAR.exec(value);
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match ?? [];
  if (!match || whole.length + fraction.length === 0) {
    throw new QuantityError(value, 'expected digits with an optional suffix, e.g. 1Gi, 512Mi, 500m, 2, 1e3');
  }
  let pow10 = -fraction.length;
  let pow2 = 0;
  if (suffix in BINARY) pow2 = BINARY[suffix]!;
  else if (suffix in DECIMAL) pow10 += DECIMAL[suffix]!;
  else if (suffix) {
    const exponent = Number(suffix.slice(1));
    if (Math.abs(exponent) > MAX_QUANTITY_EXPONENT)
      throw new QuantityError(value, `the exponent is beyond ±${MAX_QUANTITY_EXPONENT}`);
    pow10 += exponent;
  }
  const digits = BigInt(whole + fraction);
  return { negative: sign === '-' && digits !== 0n, digits, pow10, pow2 };
}

/** Whether the value is a quantity these helpers read (and the API server's pattern accepts). */
export function isQuantity(value: unknown): value is Quantity {
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  try {
    exact(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * The quantity in its base unit (bytes, cores): `1Gi` is 1073741824, `500m` is 0.5. A
 * JavaScript number, so exact up to 2^53 (8 PiB); compare with compareQuantities.
 * Throws QuantityError for anything else.
 */
export function quantityToNumber(value: Quantity): number {
  const { negative, digits, pow10, pow2 } = exact(value);
  const scaled = pow10 >= 0 ? Number(digits) * 10 ** pow10 : Number(digits) / 10 ** -pow10;
  const result = scaled * 2 ** pow2;
  return negative ? -result : result;
}

/**
 * -1, 0 or 1 as `a` is smaller than, equal to or larger than `b`, exactly: `1Gi`, `1024Mi`
 * and 1073741824 are equal, `1G` is smaller than `1Gi`. Throws QuantityError for anything
 * that is not a quantity.
 */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const x = exact(a);
  const y = exact(b);
  if (x.negative !== y.negative) return x.negative ? -1 : 1;
  const pow10 = Math.min(x.pow10, y.pow10);
  const pow2 = Math.min(x.pow2, y.pow2);
  const scale = (q: Exact) => q.digits * 10n ** BigInt(q.pow10 - pow10) * 2n ** BigInt(q.pow2 - pow2);
  const [left, right] = [scale(x), scale(y)];
  if (left === right) return 0;
  // Both have the same sign: a smaller magnitude is the smaller value unless both are negative.
  return left < right !== x.negative ? -1 : 1;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return typeof value === 'number' ? String(value) : typeof value;
}
