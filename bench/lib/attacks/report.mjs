// The attack suite's Markdown: per attack what it is and what must hold (issue 25's columns),
// then one row per case and implementation, side by side.
import { fmt, markdownTable } from '../report.mjs';

const LABELS = { nestor: 'Nestor', 'controller-runtime': 'controller-runtime' };
const ms = (value) => (value === null || value === undefined || !Number.isFinite(value) ? '–' : fmt(value, 0));

function row(run) {
  const legit = run.legit ?? {};
  const stall =
    run.loopMaxMs !== null
      ? `${ms(run.loopMaxMs)} ms`
      : run.loopStallAtLeastMs
        ? `≥ ${ms(run.loopStallAtLeastMs)} ms (still stuck)`
        : 'n/a';
  return [
    run.title,
    LABELS[run.impl] ?? run.impl,
    `${fmt(run.idleRssMB, 0)} → ${fmt(Math.max(run.peakRssMB, run.hwmMB || 0), 0)}`,
    stall,
    `${legit.answered ?? 0}/${legit.sent ?? 0}`,
    `${ms(legit.p50Ms)} / ${ms(legit.p99Ms)}`,
    ms(legit.maxMs),
    (run.summary ?? '').replaceAll('|', '\\|'),
  ];
}

const growth = (run) => Math.max(run.peakRssMB, run.hwmMB || 0) - run.idleRssMB;
const answeredShare = (run) => (run.legit?.sent ? run.legit.answered / run.legit.sent : 0);

/**
 * Whether Nestor is at or below controller-runtime on a case: RSS growth at most 20 MB more,
 * the longest legitimate wait at most 100 ms more, as large a share of legitimate reviews
 * answered, and every correctness check right. Undefined without both runs.
 */
export function atOrBelow(nestor, peer) {
  if (!nestor || !peer) return undefined;
  return (
    growth(nestor) <= growth(peer) + 20 &&
    (nestor.legit?.maxMs ?? Infinity) <= (peer.legit?.maxMs ?? 0) + 100 &&
    answeredShare(nestor) >= answeredShare(peer) &&
    !(nestor.checks ?? []).some((c) => c.ok === false)
  );
}

function summaryTable(doc) {
  const keys = [...new Set(doc.runs.map((r) => `${r.attack}:${r.case}`))];
  const rows = keys.map((key) => {
    const runs = doc.runs.filter((r) => `${r.attack}:${r.case}` === key);
    const nestor = runs.find((r) => r.impl === 'nestor');
    const peer = runs.find((r) => r.impl === 'controller-runtime');
    const pair = (f) => `${nestor ? f(nestor) : '–'} / ${peer ? f(peer) : '–'}`;
    const verdict = atOrBelow(nestor, peer);
    return [
      `${runs[0].attack}: ${runs[0].title}`,
      pair((r) => `+${fmt(growth(r), 0)}`),
      pair((r) => ms(r.legit?.maxMs)),
      pair((r) => `${r.legit?.answered ?? 0}/${r.legit?.sent ?? 0}`),
      verdict === undefined ? '–' : verdict ? 'yes' : '**no**',
    ];
  });
  return markdownTable(
    [
      'case',
      'RSS growth MB (Nestor / c-r)',
      'longest legit wait ms',
      'legit answered',
      'Nestor at or below controller-runtime',
    ],
    rows,
  );
}

export function renderAttackReport(doc, descriptions) {
  const lines = [
    `# Hostile input: Nestor and controller-runtime side by side (${doc.label ?? doc.startedAt})`,
    '',
    `Run ${doc.startedAt} on ${doc.machine.cpus} × ${doc.machine.cpuModel}, Node ${doc.machine.node}, ` +
      `controller-runtime ${doc.machine.controllerRuntime}, commit ${doc.machine.commit} (packages/ at ${doc.machine.packagesCommit ?? '?'})` +
      `${doc.config.quick ? ', --quick' : ''}, load average ${doc.machine.loadAverage?.[0]?.toFixed(1) ?? '?'} at the start. ` +
      '`npm run attack` (bench/attack.mjs, bench/lib/attacks/).',
    '',
    'Each case runs against a fresh server: Nestor is the WebhookServer of a Nest app (bench/webhooks/nestor-nest.mjs: a',
    '@Webhook with @ValidateCreate/@ValidateUpdate/@Default and a @Conversion hub/spoke converter, production',
    'defaults), controller-runtime its webhook.Server with a typed validator, defaulter and conversion',
    '(bench/controller-runtime/webhook.go). Meanwhile a legitimate client (its own thread) sends a normal UPDATE',
    'review of a ~1 KiB Widget every 100 ms to the validating path, over HTTP/1.1, from 127.0.0.2 (the attacker',
    "connects from 127.0.0.1: a server that bounds each client's share tells them apart, as it tells the API server",
    'from a pod). The attacker, the client and',
    "the server share the machine's cores (with whatever else runs on it: latencies are noisy, stalls are not).",
    '',
    '- **RSS MB**: before the attack → peak (/proc VmRSS every 100 ms and VmHWM).',
    '- **loop stall**: the longest event-loop stall in the server (monitorEventLoopDelay; Nestor only; "still stuck":',
    '  the server had not answered when asked, so the stall was at least the longest legitimate wait).',
    '- **legit**: reviews answered 200 allowed / sent during the attack (plus up to 10 s to drain), p50 / p99 of the',
    '  answered ones, and the longest single wait (an unanswered review counts until the end).',
    "- **at or below**: Nestor's RSS growth at most 20 MB above controller-runtime's, its longest legitimate wait at",
    '  most 100 ms above, as large a share of legitimate reviews answered, and every correctness check right',
    '  (issue 25: "Nestor must be at or below controller-runtime on every row"). The outcome column says whether the',
    '  attack itself was refused, dropped or answered; the "must hold" line under each attack is the bar for it.',
    '',
    '## Summary',
    '',
    summaryTable(doc),
    '',
  ];
  for (const description of descriptions) {
    const runs = doc.runs.filter((r) => r.attack === description.attack);
    lines.push(`## ${description.title}`, '', description.what, '', `**Must hold:** ${description.mustHold}`, '');
    if (!runs.length) {
      lines.push('Not run.', '');
      continue;
    }
    lines.push(
      markdownTable(
        [
          'case',
          'server',
          'RSS MB',
          'loop stall',
          'legit answered',
          'legit p50 / p99 ms',
          'longest wait ms',
          'outcome',
        ],
        runs.map(row),
      ),
      '',
    );
    for (const run of runs.filter((r) => r.checks)) {
      lines.push(
        `${LABELS[run.impl]}: ` +
          run.checks
            .map((c) => `${c.check} ${c.ok === null ? 'n/a' : c.ok ? 'right' : 'WRONG'} (${c.detail})`)
            .join('; '),
        '',
      );
    }
  }
  if (doc.skipped.length) lines.push('## Skipped', '', ...doc.skipped.map((s) => `- ${s}`), '');
  return lines.join('\n');
}
