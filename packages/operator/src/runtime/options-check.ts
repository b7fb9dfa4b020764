// Checks of numbers users pass (options, results): a bad value is a clear error that names
// where it came from, at the first moment it is seen, never a stall or a crash later.

/** `value` when it is a whole number >= 1; else a RangeError naming `what`. */
export function positiveInteger(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`${what} must be a whole number of at least 1, got ${show(value)}`);
  }
  return value;
}

/** `value` when it is a finite number of milliseconds > 0; else a RangeError naming `what`. */
export function positiveDuration(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new RangeError(`${what} must be a number of milliseconds greater than 0, got ${show(value)}`);
  }
  return value;
}

/** `value` when it is a number from `min` to `max`; else a RangeError naming `what`. */
export function numberInRange(value: unknown, min: number, max: number, what: string): number {
  if (typeof value !== 'number' || !(value >= min && value <= max)) {
    throw new RangeError(`${what} must be a number from ${min} to ${max}, got ${show(value)}`);
  }
  return value;
}

/** The value as a user wrote it: strings quoted, so `'5000'` is told from `5000`. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
