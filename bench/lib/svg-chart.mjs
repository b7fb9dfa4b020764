// Charts for the bench and fault-suite reports, as plain SVG strings: a line chart (a value
// over time or over a rate) and a grouped horizontal bar chart (a figure per fault, one bar
// per implementation). Plain SVG rather than a charting library: the reports need two
// shapes, static files that render on GitHub and in any browser, and no DOM to draw them in
// (the usual libraries of the ecosystem, d3 or Vega, need one or a headless canvas).

/** One colour per implementation, the same in every chart; others take the palette's next. */
const KNOWN = {
  nestor: '#2563eb',
  'nestor-nest': '#7c3aed',
  'controller-runtime': '#ea580c',
  'kube-rs': '#b91c1c',
  apiserver: '#6b7280',
};
const PALETTE = ['#059669', '#db2777', '#0891b2', '#ca8a04', '#4b5563'];

export function colourOf(name, index = 0) {
  return KNOWN[name] ?? PALETTE[index % PALETTE.length];
}

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"';

function escape(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

/** Round tick steps (1, 2, 5 times a power of ten) covering [0, max] in about `count` steps. */
export function ticks(max, count = 5) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const out = [];
  for (let v = 0; v < max + step / 2; v += step) out.push(Number(v.toPrecision(12)));
  if (out[out.length - 1] < max) out.push(Number((out[out.length - 1] + step).toPrecision(12)));
  return out;
}

function format(value) {
  if (Math.abs(value) >= 1000) return value.toLocaleString('en-US', { maximumFractionDigits: 0 });
  return String(Number(value.toPrecision(3)));
}

function legend(names, x, y) {
  return names
    .map(
      (name, i) =>
        `<rect x="${x}" y="${y + i * 18 - 9}" width="12" height="12" fill="${colourOf(name, i)}"/>` +
        `<text x="${x + 18}" y="${y + i * 18 + 1}" font-size="12" ${FONT}>${escape(name)}</text>`,
    )
    .join('');
}

/**
 * A line per series over a shared x axis.
 * @param {{ title: string, xLabel: string, yLabel: string,
 *   series: Array<{ name: string, points: Array<[number, number]> }>, width?: number, height?: number }} chart
 */
export function lineChart({ title, xLabel, yLabel, series, width = 720, height = 360 }) {
  const shown = series.filter((s) => s.points.some(([x, y]) => Number.isFinite(x) && Number.isFinite(y)));
  const all = shown.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const legendWidth = 170;
  const left = 64;
  const top = 40;
  const right = width - legendWidth;
  const bottom = height - 48;
  const xs = ticks(Math.max(...all.map(([x]) => x), 0));
  const ys = ticks(Math.max(...all.map(([, y]) => y), 0));
  const xMax = xs[xs.length - 1];
  const yMax = ys[ys.length - 1];
  const px = (x) => left + (x / xMax) * (right - left);
  const py = (y) => bottom - (y / yMax) * (bottom - top);
  const grid = [
    ...ys.map(
      (y) =>
        `<line x1="${left}" x2="${right}" y1="${py(y)}" y2="${py(y)}" stroke="#e5e7eb"/>` +
        `<text x="${left - 6}" y="${py(y) + 4}" font-size="11" text-anchor="end" ${FONT}>${format(y)}</text>`,
    ),
    ...xs.map(
      (x) =>
        `<line x1="${px(x)}" x2="${px(x)}" y1="${bottom}" y2="${bottom + 4}" stroke="#374151"/>` +
        `<text x="${px(x)}" y="${bottom + 17}" font-size="11" text-anchor="middle" ${FONT}>${format(x)}</text>`,
    ),
  ];
  // Few points (a value per rate or per size): marked in every series, so a reader sees what was measured.
  const marked = shown.every((s) => s.points.length <= 30);
  const lines = shown.map((s, i) => {
    const points = s.points
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
      .map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`)
      .join(' ');
    const colour = colourOf(s.name, i);
    const marks = !marked
      ? ''
      : points
          .split(' ')
          .map((p) => {
            const [x, y] = p.split(',');
            return `<circle cx="${x}" cy="${y}" r="3" fill="${colour}"/>`;
          })
          .join('');
    return `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points}"/>${marks}`;
  });
  return svg(width, height, [
    `<text x="${left}" y="22" font-size="15" font-weight="600" ${FONT}>${escape(title)}</text>`,
    ...grid,
    `<line x1="${left}" x2="${right}" y1="${bottom}" y2="${bottom}" stroke="#374151"/>`,
    `<line x1="${left}" x2="${left}" y1="${top}" y2="${bottom}" stroke="#374151"/>`,
    `<text x="${(left + right) / 2}" y="${height - 10}" font-size="12" text-anchor="middle" ${FONT}>${escape(xLabel)}</text>`,
    `<text transform="translate(16 ${(top + bottom) / 2}) rotate(-90)" font-size="12" text-anchor="middle" ${FONT}>${escape(yLabel)}</text>`,
    ...lines,
    legend(
      shown.map((s) => s.name),
      right + 20,
      top + 8,
    ),
  ]);
}

/**
 * Horizontal bars: a group per category (a fault), a bar per series (an implementation).
 * A missing value (null) leaves its bar out and says so.
 * @param {{ title: string, unit: string, categories: string[],
 *   series: Array<{ name: string, values: Array<number | null> }>, width?: number }} chart
 */
export function barChart({ title, unit, categories, series, width = 760 }) {
  const labelWidth = 260;
  const left = labelWidth + 8;
  const right = width - 70;
  const top = 44 + series.length * 18;
  const bar = 14;
  const group = series.length * bar + 12;
  const bottom = top + categories.length * group;
  const height = bottom + 44;
  const values = series.flatMap((s) => s.values).filter((v) => Number.isFinite(v));
  const xs = ticks(Math.max(...values, 0));
  const xMax = xs[xs.length - 1];
  const px = (v) => left + (v / xMax) * (right - left);
  const parts = [
    `<text x="8" y="22" font-size="15" font-weight="600" ${FONT}>${escape(title)}</text>`,
    legend(
      series.map((s) => s.name),
      left,
      40,
    ),
    ...xs.map(
      (x) =>
        `<line x1="${px(x)}" x2="${px(x)}" y1="${top - 4}" y2="${bottom}" stroke="#e5e7eb"/>` +
        `<text x="${px(x)}" y="${bottom + 16}" font-size="11" text-anchor="middle" ${FONT}>${format(x)}</text>`,
    ),
    `<text x="${(left + right) / 2}" y="${height - 8}" font-size="12" text-anchor="middle" ${FONT}>${escape(unit)}</text>`,
  ];
  categories.forEach((category, c) => {
    const y0 = top + c * group;
    const label = category.length > 38 ? `${category.slice(0, 37)}…` : category;
    parts.push(
      `<text x="${labelWidth}" y="${y0 + group / 2}" font-size="12" text-anchor="end" ${FONT}><title>${escape(category)}</title>${escape(label)}</text>`,
    );
    series.forEach((s, i) => {
      const v = s.values[c];
      const y = y0 + i * bar + 4;
      if (!Number.isFinite(v)) {
        parts.push(
          `<text x="${left + 4}" y="${y + bar - 3}" font-size="11" fill="#6b7280" ${FONT}>not measured</text>`,
        );
        return;
      }
      parts.push(
        `<rect class="bar" x="${left}" y="${y}" width="${Math.max(1, px(v) - left).toFixed(1)}" height="${bar - 2}" fill="${colourOf(s.name, i)}"/>` +
          `<text x="${px(v) + 4}" y="${y + bar - 3}" font-size="11" ${FONT}>${format(v)}</text>`,
      );
    });
  });
  parts.push(`<line x1="${left}" x2="${left}" y1="${top - 4}" y2="${bottom}" stroke="#374151"/>`);
  return svg(width, height, parts);
}

function svg(width, height, parts) {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<rect width="100%" height="100%" fill="#ffffff"/>${parts.join('')}</svg>\n`
  );
}
