#!/usr/bin/env node
// The API reports of @nestor/operator, one per entry of its package.json "exports", made by
// API Extractor from the built .d.ts and committed as packages/operator/api/<entry>.api.md,
// so that a change to the public surface shows in review.
//
//   node scripts/api-report.mjs            check: fails when a report differs from the build
//   node scripts/api-report.mjs --update   rewrite the reports (commit them)
//
// Run it after `npm run build`. @nestor/core is read as part of the package (the runtime entry
// re-exports its names), the other packages as external. TSDoc syntax is typedoc's to check
// (npm run docs:api), so API Extractor's tsdoc-* messages are off, as are release tags
// (the surface is what the entries export, and @internal is what they do not).
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const update = process.argv.includes('--update');
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const packageFolder = join(root, 'packages', 'operator');
const packageJsonFullPath = join(packageFolder, 'package.json');
const manifest = JSON.parse(readFileSync(packageJsonFullPath, 'utf8'));
const reportFolder = join(packageFolder, 'api');
const tempFolder = join(packageFolder, 'dist', '.api-report');
mkdirSync(tempFolder, { recursive: true });

const off = { logLevel: 'none', addToApiReportFile: false };
let failed = false;
for (const [key, target] of Object.entries(manifest.exports)) {
  const name = key === '.' ? 'operator' : key.slice(2);
  const configObject = {
    projectFolder: packageFolder,
    mainEntryPointFilePath: join(packageFolder, target.types),
    bundledPackages: ['@nestor/core'],
    compiler: { tsconfigFilePath: join(packageFolder, 'tsconfig.json') },
    apiReport: {
      enabled: true,
      reportFileName: name,
      reportFolder,
      reportTempFolder: tempFolder,
      includeForgottenExports: false,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: 'warning' } },
      extractorMessageReporting: {
        default: { logLevel: 'warning' },
        'ae-missing-release-tag': off,
        // An entry's API names types another entry exports (the runtime's, from the root).
        'ae-forgotten-export': off,
        'ae-internal-missing-underscore': off,
        'ae-incompatible-release-tags': off,
        'ae-unresolved-link': off,
        // Members without TSDoc show as `// (undocumented)` in the report; scripts/api-surface.mjs checks the names.
        'ae-undocumented': { logLevel: 'none' },
      },
      tsdocMessageReporting: { default: { logLevel: 'none' } },
    },
  };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: join(reportFolder, `${name}.api-extractor.json`),
    packageJsonFullPath,
  });
  const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false });
  const entry = `${manifest.name}${key === '.' ? '' : key.slice(1)}`;
  if (!result.succeeded || (!update && result.apiReportChanged)) {
    failed = true;
    console.error(
      `${entry}: ${result.apiReportChanged ? `its API differs from api/${name}.api.md` : 'API Extractor failed'}` +
        ` (${result.errorCount} errors, ${result.warningCount} warnings)`,
    );
  } else {
    console.log(`${entry}: api/${name}.api.md ${result.apiReportChanged ? 'updated' : 'unchanged'}`);
  }
}
if (failed) {
  console.error(
    'A change to the public surface: review it, then `npm run api:update` and commit packages/operator/api.',
  );
  process.exitCode = 1;
}
