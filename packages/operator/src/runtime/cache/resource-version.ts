/**
 * The order of two resourceVersions of one resource, as apimachinery's
 * CompareResourceVersion (KEP-5504, stable in Kubernetes 1.35): both are positive decimal
 * integers without leading zeros, compared as such (by length, then digit by digit, with
 * no limit on length). Negative: `a` is older; 0: the same; positive: `a` is newer.
 * Undefined when either is not such an integer (an aggregated API's own format): no order
 * can be told, and a caller must not wait on one.
 */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (!isComparable(a) || !isComparable(b)) return undefined;
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

function isComparable(resourceVersion: string): boolean {
  const length = resourceVersion.length;
  if (length === 0 || resourceVersion.charCodeAt(0) === 48 /* a leading 0, or 0 itself */) return false;
  for (let i = 0; i < length; i++) {
    const code = resourceVersion.charCodeAt(i);
    if (code < 48 || code > 57) return false;
  }
  return true;
}
