#!/usr/bin/env node
// The `nestor` command.
import 'reflect-metadata';
import { run } from './cli.js';
import { commandOutput } from './process-output.js';

const output = commandOutput();
let code: number;
try {
  code = await run(process.argv.slice(2), { stdout: output.stdout, stderr: output.stderr, cwd: process.cwd() });
} catch (error) {
  output.stderr(`nestor: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  code = 1;
}
// The application imported may have left timers, sockets or servers running: the command
// is done once its output is out, whatever they would keep alive.
await output.flushed();
process.exit(code);
