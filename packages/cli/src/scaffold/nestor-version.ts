import { readFileSync } from 'node:fs';

/** This CLI's version: the @nestor/* versions a scaffolded project depends on. */
export function nestorVersion(): string {
  const manifest = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}
