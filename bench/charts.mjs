#!/usr/bin/env node
// Renders the SVG charts of results a bench run or a chaos run wrote, beside them, and
// prints the Markdown that shows them (run.mjs and chaos.mjs do this at the end of a run;
// this is for a run written before, or a chart changed since).
//   node bench/charts.mjs bench/results/<run>.json [...]
import { readFile } from 'node:fs/promises';
import { chaosCharts, runCharts, writeCharts } from './lib/report-charts.mjs';

const files = process.argv.slice(2);
if (files.length === 0 || files.includes('--help')) {
  console.log('node bench/charts.mjs <results.json> [...]   (from bench/run.mjs or bench/chaos.mjs)');
  process.exit(files.length === 0 ? 1 : 0);
}
for (const file of files) {
  const doc = JSON.parse(await readFile(file, 'utf8'));
  // chaos.mjs writes an array of entries (mode x implementation); run.mjs a document with runs.
  const charts = Array.isArray(doc) ? chaosCharts(doc) : runCharts(doc);
  if (charts.length === 0)
    console.log(`${file}: nothing to chart (a burst needs run.mjs's series, churn or sync two sizes)`);
  else console.log(`${file}:${await writeCharts(file, charts)}`);
}
