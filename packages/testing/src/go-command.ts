import { spawn } from 'node:child_process';

export interface GoCommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  progress: (line: string) => void;
  /** Names the command in the error when it fails. */
  what: string;
}

/**
 * Runs a `go build -v` or `go install -v`, reporting the packages compiled every 15 s (a cold
 * build takes minutes) and failing with the last lines Go printed.
 */
export function runGo(go: string, args: string[], options: GoCommandOptions): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(go, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let compiled = 0;
    let lastPackage = '';
    const tail: string[] = [];
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (!line) continue;
        tail.push(line);
        if (tail.length > 40) tail.shift();
        if (/^[\w.-]+(\/[\w.@~+-]+)*$/.test(line)) {
          compiled++;
          lastPackage = line;
        }
      }
    });
    child.stdout.resume();
    const ticker = setInterval(
      () => options.progress(`  ... ${compiled} Go packages compiled (last: ${lastPackage})`),
      15_000,
    );
    child.on('error', (error) => {
      clearInterval(ticker);
      reject(error);
    });
    child.on('close', (code) => {
      clearInterval(ticker);
      if (code === 0) resolvePromise();
      else reject(new Error(`${options.what} failed (exit ${code}):\n${tail.join('\n')}`));
    });
  });
}
