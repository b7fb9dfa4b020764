// A kubeconfig file is read from disk or a mounted Secret: whatever bytes it holds, loading
// it gives a ClusterConfig or an error that says what is wrong and where, never a
// TypeError from inside client-node's parsers, and never quotes a secret.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { ClusterConfig } from './cluster-config.js';
import { loadKubeConfig } from './load-kube-config.js';

const SECRET = 'sekrit-7f3a9c';

/** The messages this loader gives for a file it refuses (fromString's part). */
const CLEAR =
  /^(a kubeconfig must be (YAML or JSON: .+|a YAML mapping with clusters, users, contexts and current-context, not .+)|\S+ (must be .+|is missing|is an alias of a node that contains it)( \(line \d+\))?.*|a user's token-file cannot be read: .+)$/s;

/** Loads `text`; returns the config, or the error after checking it is one of the clear ones. */
function load(text: string): ClusterConfig | Error {
  try {
    return ClusterConfig.fromString(text);
  } catch (error) {
    assert.equal((error as Error).constructor, Error, `${(error as Error).stack}`);
    assert.match((error as Error).message, CLEAR);
    if (text.includes(SECRET)) assert.ok(!(error as Error).message.includes(SECRET), 'the error quotes a secret');
    return error as Error;
  }
}

const valid = {
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [{ name: 'c', cluster: { server: 'https://c.example:6443', 'certificate-authority-data': 'Y2E=' } }],
  users: [{ name: 'u', user: { token: SECRET } }],
  contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'ops' } }],
  'current-context': 'x',
};
const validText = stringify(valid, { version: '1.1' });

/** Any YAML value, a mapping's keys drawn from the kubeconfig's own field names so they land. */
const KEYS = [
  'clusters',
  'users',
  'contexts',
  'current-context',
  'name',
  'cluster',
  'user',
  'context',
  'server',
  'token',
  'exec',
  'command',
  'args',
  'env',
  'auth-provider',
  'config',
  'insecure-skip-tls-verify',
  'namespace',
];
const { value: anyValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(null, true, false, 0, -1, 1.5, '', 'c', 'x', 'u', 'https://c.example', SECRET),
    fc.string({ maxLength: 8 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 4 }),
  ),
}));

/** The valid kubeconfig with one field, somewhere, replaced by any value. */
const oneFieldWrong = fc
  .tuple(
    fc.constantFrom(
      ['clusters'],
      ['clusters', 0],
      ['clusters', 0, 'name'],
      ['clusters', 0, 'cluster'],
      ['clusters', 0, 'cluster', 'server'],
      ['clusters', 0, 'cluster', 'insecure-skip-tls-verify'],
      ['users', 0, 'user'],
      ['users', 0, 'user', 'token'],
      ['users', 0, 'user', 'exec'],
      ['users', 0, 'user', 'auth-provider'],
      ['contexts', 0, 'context'],
      ['contexts', 0, 'context', 'cluster'],
      ['contexts', 0, 'name'],
      ['current-context'],
    ),
    anyValue,
  )
  .map(([path, value]) => {
    const copy = structuredClone(valid) as Record<string, unknown>;
    let parent: Record<string | number, unknown> = copy;
    for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    parent[path.at(-1)!] = value;
    return stringify(copy, { version: '1.1' });
  });

/** The valid kubeconfig's text with a few characters inserted, deleted or replaced. */
const mangled = fc
  .array(
    fc.tuple(
      fc.nat(),
      fc.nat({ max: 4 }),
      fc.string({ maxLength: 4, unit: fc.constantFrom(...' \n\t:-[]{}&*!|>"\'#,?x1') }),
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((edits) => {
    let text = validText;
    for (const [at, removed, inserted] of edits) {
      const start = at % (text.length + 1);
      text = text.slice(0, start) + inserted + text.slice(start + removed);
    }
    return text;
  });

describe('kubeconfig parsing, properties', () => {
  it('arbitrary text: a config or a clear error', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200, unit: 'binary' }), (text) => void load(text)),
      { numRuns: 300 },
    );
  });

  it('arbitrary bytes in a file: a config or an error naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nestor-kubeconfig-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'config');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        writeFileSync(path, bytes);
        try {
          loadKubeConfig(path);
        } catch (error) {
          assert.equal((error as Error).constructor, Error);
          assert.match(
            (error as Error).message,
            new RegExp(`^(cannot read the kubeconfig ${path}: |the kubeconfig from ${path} has no current cluster)`),
          );
        }
      }),
      { numRuns: 150 },
    );
  });

  it('any value in any field: a config whose fields have their types, or an error naming the field', () => {
    fc.assert(
      fc.property(oneFieldWrong, (text) => {
        const loaded = load(text);
        if (loaded instanceof Error) return;
        const cluster = loaded.getCurrentCluster();
        if (cluster) assert.equal(typeof cluster.server, 'string');
        for (const user of loaded.users) if (user.token != null) assert.equal(typeof user.token, 'string');
      }),
      { numRuns: 300 },
    );
  });

  it('a token written as an alias (`token: *<token>`): an error that does not quote it', () => {
    const error = load(`users:\n  - name: u\n    user:\n      token: *${SECRET}\n`);
    assert.ok(error instanceof Error);
    assert.match(error.message, /Unresolved alias/);
  });

  it('a mangled file: a config or a clear error, never quoting the token', () => {
    fc.assert(
      fc.property(mangled, (text) => void load(text)),
      { numRuns: 300 },
    );
  });

  it('a valid kubeconfig loads as written', () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
    fc.assert(
      fc.property(
        name,
        name,
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (cluster, user, token, skip) => {
          const text = stringify(
            {
              clusters: [
                {
                  name: cluster,
                  cluster: { server: `https://${cluster}.example:6443`, 'insecure-skip-tls-verify': skip },
                },
              ],
              users: [{ name: user, user: { token } }],
              contexts: [{ name: 'ctx', context: { cluster, user } }],
              'current-context': 'ctx',
            },
            { version: '1.1' },
          );
          const config = ClusterConfig.fromString(text);
          assert.equal(config.getCurrentCluster()?.server, `https://${cluster}.example:6443`);
          assert.equal(config.getCurrentCluster()?.skipTLSVerify, skip);
          assert.equal(config.getCurrentUser()?.token, token);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('kubeconfig parsing, errors', () => {
  it('names the field, what it must be, and its line', () => {
    const text = validText.replace('server: https://c.example:6443', 'server: 6443');
    assert.throws(
      () => ClusterConfig.fromString(text),
      /^Error: clusters\[0\]\.cluster\.server must be a string, not a number \(line \d+\): quote it to make it a string$/,
    );
    assert.throws(() => ClusterConfig.fromString('clusters:\n  - name: c\n    cluster: {}\n'), {
      message: 'clusters[0].cluster.server is missing (line 3)',
    });
    assert.throws(() => ClusterConfig.fromString('users: {a: 1}\n'), {
      message: 'users must be a list, not a mapping (line 1)',
    });
    assert.throws(
      () => ClusterConfig.fromString('current-context: 2024-01-01\n'),
      /current-context must be a string, not a date/,
    );
  });

  it('says where the YAML is broken, without quoting the file', () => {
    const broken = [
      `users:\n- name: u\n  user:\n    token: ${SECRET}\n   x: "${SECRET}"\n`,
      // yaml's own message for a stray indicator is "Not a YAML token: <the rest of the line>".
      `users:\n- name: u\n  user:\n   | token: ${SECRET}\n`,
      `users:\n- name: u\n  user: { token: "${SECRET}\\q" }\n`,
    ];
    for (const text of broken) {
      assert.throws(
        () => ClusterConfig.fromString(text),
        (error: Error) => {
          assert.match(error.message, /^a kubeconfig must be YAML or JSON: .* at line \d+, column \d+$/);
          assert.ok(!error.message.includes(SECRET), error.message);
          return true;
        },
        text,
      );
    }
  });

  it('refuses an alias inside its own anchor, and an alias bomb', () => {
    assert.throws(
      () => ClusterConfig.fromString('preferences: &p {colors: [*p]}\n'),
      /^Error: preferences\.colors\[0\] is an alias of a node that contains it \(line 1\): a kubeconfig cannot refer to itself$/,
    );
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      bomb.push(
        `${'abcdefghi'[i]}: &${'abcdefghi'[i]} [${Array(9)
          .fill(`*${'abcdefghi'[i - 1]}`)
          .join(', ')}]`,
      );
    assert.throws(() => ClusterConfig.fromString(bomb.join('\n')), /a kubeconfig must be YAML or JSON: .*alias/i);
  });
});
