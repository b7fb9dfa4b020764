// The metric names a PromQL expression reads, for tests of the Grafana dashboards: what is
// left once label matchers, ranges, grouping clauses and strings are taken out, less the
// language's functions, aggregations and keywords.

const PROMQL_WORDS = new Set([
  // aggregations and their clauses
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
  'count_values',
  'group',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'and',
  'or',
  'unless',
  // functions
  'rate',
  'irate',
  'increase',
  'delta',
  'idelta',
  'deriv',
  'changes',
  'resets',
  'histogram_quantile',
  'abs',
  'clamp_min',
  'clamp_max',
  'clamp',
  'absent',
  'vector',
  'scalar',
  'time',
  'timestamp',
  'label_replace',
  'label_join',
  'max_over_time',
  'min_over_time',
  'avg_over_time',
  'sum_over_time',
  'last_over_time',
  'round',
  'ceil',
  'floor',
  'sort',
  'sort_desc',
  'label_values',
  'query_result',
  'metrics',
]);

export function metricNamesOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    // label_values(<selector>, <label>): the label is not a metric.
    .replace(/,\s*[a-zA-Z_]\w*\s*\)/g, ')');
  const names = new Set<string>();
  for (const [word] of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    if (!PROMQL_WORDS.has(word)) names.add(word);
  }
  return [...names];
}
