#!/usr/bin/env node
// The `nestor` command.
import 'reflect-metadata';
import { run } from './cli.js';

process.exitCode = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
});
