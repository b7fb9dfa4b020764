// The worker that parses the YAML documents `parseYamlDocuments` gives it, so that its time
// and heap are bounded apart from the command's. The yaml package's duplicate-key check is
// off: it compares each key of a mapping with every other, quadratic in the keys of another
// project's file (8,000 keys took 9 s). Aliases are bounded by its `maxAliasCount`.
import { parentPort, workerData } from 'node:worker_threads';
import { parseAllDocuments } from 'yaml';

const { text, ranges } = workerData as { text: string; ranges: Array<{ start: number; end: number }> };

function parse(): { values: unknown[] } | { error: string; offset?: number } {
  const values: unknown[] = [];
  for (const { start, end } of ranges) {
    for (const document of parseAllDocuments(text.slice(start, end), { uniqueKeys: false, prettyErrors: false })) {
      const [error] = document.errors;
      if (error) return { error: error.message, offset: start + error.pos[0] };
      try {
        values.push(document.toJS({ maxAliasCount: 100 }));
      } catch (failure) {
        return { error: (failure as Error).message }; // not where: what (too many aliases)
      }
    }
  }
  return { values };
}

parentPort!.postMessage(parse());
