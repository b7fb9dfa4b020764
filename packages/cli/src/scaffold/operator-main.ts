// The `src/main.ts` `nestor init` gives an operator. The starter's boots an HTTP app on port
// 3000 with Nest's coloured text logs; an operator serves no HTTP API of its own (its
// metrics, probe and webhook servers are OperatorModule's), and a pod's log collector reads
// JSON lines. A main.ts that is not the starter's is the user's: kept, with a note.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileChange } from './file-changes.js';
import { importPath, type NestProject } from './nest-project.js';

/** What init does to src/main.ts: write the operator's, or say what to add by hand. */
export function operatorMainChange(project: Pick<NestProject, 'root' | 'esm'>): {
  change?: FileChange;
  note?: string;
} {
  const path = join(project.root, 'src', 'main.ts');
  const content = operatorMainSource(project);
  const what = 'an application context (no HTTP listener), operatorLogger(), enableShutdownHooks()';
  if (!existsSync(path)) return { change: { path, content, what } };
  const source = readFileSync(path, 'utf8');
  if (source === content) return {};
  if (isStarterMain(source)) return { change: { path, content, what: `replaces the starter's HTTP app: ${what}` } };
  const missing = [
    ...(/\bNestFactory\.create\(/.test(source) && /\.listen\(/.test(source)
      ? ['NestFactory.createApplicationContext in place of create and listen (unless the app serves HTTP itself)']
      : []),
    ...(source.includes('operatorLogger') ? [] : ["{ logger: operatorLogger() } (from '@nestor/operator')"]),
    ...(source.includes('enableShutdownHooks') ? [] : ['app.enableShutdownHooks()']),
  ];
  if (missing.length === 0) return {};
  return {
    note:
      `src/main.ts is not the starter's: kept as it is. It lacks ${missing.join('; ')}. ` +
      `An operator's main.ts:\n${content.replace(/^/gm, '    ')}`,
  };
}

export function operatorMainSource(project: Pick<NestProject, 'esm'>): string {
  return `import { NestFactory } from '@nestjs/core';
import { operatorLogger } from '@nestor/operator';
import { AppModule } from '${importPath(project, './app.module')}';

// An operator serves no HTTP API of its own, so no HTTP app: its metrics, probe and webhook
// servers are OperatorModule's. operatorLogger(): JSON lines off a terminal, text on one
// (LOG_FORMAT, LOG_LEVEL).
async function bootstrap() {
  const app = await NestFactory.createApplicationContext(AppModule, {
    logger: operatorLogger(),
  });
  // On SIGTERM running reconciles finish and the leader Lease is released.
  app.enableShutdownHooks();
}
${project.esm ? 'await bootstrap();' : 'void bootstrap();'}
`;
}

/**
 * The main.ts of `nest new` (Nest 10 to 12, CommonJS or ES modules), unchanged but for the
 * enableShutdownHooks() line an earlier `nestor init` added: anything else is the user's.
 */
function isStarterMain(source: string): boolean {
  const bare = source.replace(/^[^\S\n]*\w+\.enableShutdownHooks\(\);.*\n/m, '').replace(/\s+/g, '');
  return /^import\{NestFactory\}from'@nestjs\/core';import\{AppModule\}from'\.\/app\.module(\.js)?';asyncfunctionbootstrap\(\)\{constapp=awaitNestFactory\.create\(AppModule\);awaitapp\.listen\((process\.env\.PORT\?\?)?3000\);\}(await|void)?bootstrap\(\);$/.test(
    bare,
  );
}
