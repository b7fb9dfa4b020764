#!/usr/bin/env node
// The `nestor-controlplane` command (controlplane-command.ts). This repository's
// `npm run controlplane` runs it with --controller-manager --nodes --helm --olm.
import { controlPlaneCommand } from './controlplane-command.js';

process.exitCode = await controlPlaneCommand(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
