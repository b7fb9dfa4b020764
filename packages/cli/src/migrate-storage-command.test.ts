import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { run } from './cli.js';
import type { CommandIo } from './command-io.js';

async function capture(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CommandIo = { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), cwd: process.cwd() };
  const code = await run(argv, io);
  return { code, stdout, stderr };
}

describe('nestor migrate-storage, called wrong', () => {
  it('is listed in the usage, and explains itself with --help', async () => {
    assert.match((await capture(['--help'])).stdout, /migrate-storage/);
    const help = await capture(['migrate-storage', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--kind <name>.*<plural>\.<group>/);
    assert.match(help.stdout, /--writes-per-second/);
  });

  it('refuses a call without --kind, a name that is no CRD name, a stray argument or a rate that is no number (exit 2)', async () => {
    for (const [argv, message] of [
      [[], /--kind is required/],
      [['--kind', 'Widgets'], /--kind Widgets is no CRD name: give <plural>\.<group>/],
      [['widgets.example.com'], /unexpected argument widgets\.example\.com: name each CRD with --kind/],
      [
        ['--kind', 'widgets.example.com', '--writes-per-second', 'fast'],
        /--writes-per-second fast: give a number above 0/,
      ],
      [['--kind', 'widgets.example.com', '--concurrency', '2.5'], /--concurrency 2\.5: give a whole number above 0/],
      [['--kind', 'widgets.example.com', '--wat'], /Unknown option '--wat'/],
    ] as const) {
      const { code, stderr } = await capture(['migrate-storage', ...argv]);
      assert.equal(code, 2, argv.join(' '));
      assert.match(stderr, message);
      assert.match(stderr, /Usage: nestor migrate-storage/);
    }
  });

  it('says when the kubeconfig it is given does not exist (exit 1)', async () => {
    const { code, stderr } = await capture([
      'migrate-storage',
      '--kind',
      'widgets.example.com',
      '--kubeconfig',
      'nowhere.yaml',
    ]);
    assert.equal(code, 1);
    assert.match(stderr, /--kubeconfig nowhere\.yaml does not exist/);
  });
});
