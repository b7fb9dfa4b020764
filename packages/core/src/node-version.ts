// Checked when @nestor/core is first imported: on an older Node the failures come later and
// look like something else (an API server that "does not answer" because of a headers
// array, `Promise.withResolvers is not a function`), and npm's engines check is silent when
// npm itself runs on a newer Node than the program.

/** The oldest Node.js the packages run on (their `engines`). */
export const MINIMUM_NODE_VERSION = '22.19.0';

/** Throws, saying what to do, unless `version` (default: this process's) is at least MINIMUM_NODE_VERSION. */
export function assertSupportedNode(version: string = process.versions.node): void {
  const have = version.split('.').map(Number);
  const need = MINIMUM_NODE_VERSION.split('.').map(Number);
  for (let i = 0; i < need.length; i++) {
    if ((have[i] ?? 0) > need[i]!) return;
    if ((have[i] ?? 0) < need[i]!) {
      throw new Error(
        `Nestor needs Node.js ${MINIMUM_NODE_VERSION} or newer, and this process runs ${version}: ` +
          'run it with a newer node (a project that pins one as a devDependency has it in node_modules/.bin)',
      );
    }
  }
}

assertSupportedNode();
