// ClusterConfig against client-node's KubeConfig: the same kubeconfig must give the same TLS
// material and auth through either, since Nestor swaps one for the other.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterConfig } from './cluster-config.js';
import { readCredentials } from './kubeconfig-credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'nestor-cluster-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const b64 = (text: string) => Buffer.from(text).toString('base64');

function kubeconfig(name: string, user: string, cluster = `server: "https://${name}.example:6443"`): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      `clusters: [{ name: c, cluster: { ${cluster} } }]`,
      `users: [{ name: u, user: { ${user} } }]`,
      'contexts: [{ name: x, context: { cluster: c, user: u, namespace: ops } }]',
      'current-context: x',
    ].join('\n'),
  );
  return path;
}

async function bothWays(path: string) {
  const clientNode = new KubeConfig();
  clientNode.loadFromFile(path);
  const [ours, theirs] = await Promise.all([
    readCredentials(ClusterConfig.fromFile(path)),
    readCredentials(clientNode),
  ]);
  return { ours, theirs };
}

describe('ClusterConfig', () => {
  writeFileSync(join(dir, 'ca.crt'), 'CA FROM FILE');
  writeFileSync(join(dir, 'tls.crt'), 'CERT FROM FILE');
  writeFileSync(join(dir, 'tls.key'), 'KEY FROM FILE');

  it('gives what client-node gives for a token, CA data and a TLS server name', async () => {
    const path = kubeconfig(
      'token',
      'token: abc',
      `server: "https://token.example", certificate-authority-data: ${b64('CA')}, tls-server-name: api.internal`,
    );
    const { ours, theirs } = await bothWays(path);
    assert.deepEqual(ours, theirs);
    assert.equal(ours.headers.authorization, 'Bearer abc');
    assert.equal(ours.tls.ca?.toString(), 'CA');
    assert.equal(ours.tls.servername, 'api.internal');
  });

  it('resolves relative certificate files against the kubeconfig directory, as client-node', async () => {
    const path = kubeconfig(
      'files',
      'client-certificate: tls.crt, client-key: tls.key',
      'server: "https://files.example", certificate-authority: ca.crt',
    );
    const { ours, theirs } = await bothWays(path);
    assert.deepEqual(ours, theirs);
    assert.equal(ours.tls.cert?.toString(), 'CERT FROM FILE');
    assert.equal(ours.tls.key?.toString(), 'KEY FROM FILE');
    assert.equal(ours.tls.ca?.toString(), 'CA FROM FILE');
  });

  it('reads insecure-skip-tls-verify as kubectl does (YAML 1.1 booleans)', async () => {
    const yes = await bothWays(
      kubeconfig('skip', 'token: t', 'server: "https://s.example", insecure-skip-tls-verify: yes'),
    );
    assert.equal(yes.ours.tls.rejectUnauthorized, false);
    const no = await bothWays(
      kubeconfig('noskip', 'token: t', 'server: "https://s.example", insecure-skip-tls-verify: no'),
    );
    assert.equal(no.ours.tls.rejectUnauthorized, undefined);
    assert.deepEqual(no.ours, no.theirs);
  });

  it('sends basic auth and impersonation as client-node', async () => {
    const { ours, theirs } = await bothWays(kubeconfig('basic', 'username: admin, password: s3cret, as: alice'));
    assert.deepEqual(ours, theirs);
    assert.equal(ours.headers.authorization, `Basic ${b64('admin:s3cret')}`);
    assert.equal(ours.headers['impersonate-user'], 'alice');
  });

  it('runs an exec credential plugin with client-node’s authenticator', async () => {
    const plugin = join(dir, 'plugin.mjs');
    writeFileSync(
      plugin,
      `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-plugin' } }));`,
    );
    const path = kubeconfig(
      'exec',
      `exec: { apiVersion: client.authentication.k8s.io/v1, command: "${process.execPath}", args: ["${plugin}"], interactiveMode: Never }`,
    );
    const { ours, theirs } = await bothWays(path);
    assert.deepEqual(ours, theirs);
    assert.equal(ours.headers.authorization, 'Bearer from-plugin');
    assert.equal(ours.expiring, true);
  });

  describe('in a pod', () => {
    const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
    afterEach(() => {
      for (const [name, value] of [
        ['KUBERNETES_SERVICE_HOST', saved.host],
        ['KUBERNETES_SERVICE_PORT', saved.port],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });

    it('uses the service account token file, the CA and the namespace, as client-go', async () => {
      const root = join(dir, 'pod');
      const accountDir = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
      mkdirSync(accountDir, { recursive: true });
      writeFileSync(join(accountDir, 'token'), 'sa-token\n');
      writeFileSync(join(accountDir, 'ca.crt'), 'CLUSTER CA');
      writeFileSync(join(accountDir, 'namespace'), 'ops');
      chmodSync(join(accountDir, 'token'), 0o600);
      process.env.KUBERNETES_SERVICE_HOST = 'fd00::1';
      process.env.KUBERNETES_SERVICE_PORT = '443';

      const config = ClusterConfig.inCluster(root);
      assert.equal(config.getCurrentCluster()?.server, 'https://[fd00::1]:443');
      assert.equal(config.getContextObject(config.getCurrentContext())?.namespace, 'ops');
      const credentials = await readCredentials(config);
      assert.equal(credentials.headers.authorization, 'Bearer sa-token');
      assert.equal(credentials.tls.ca?.toString(), 'CLUSTER CA');
      assert.equal(credentials.expiring, true, 'a projected token rotates, so it is read again');

      const clientNode = new KubeConfig();
      clientNode.loadFromCluster(root);
      assert.deepEqual(credentials, await readCredentials(clientNode));
    });
  });

  it('merges as kubectl: the first definition of a name and the first current-context win', () => {
    const first = ClusterConfig.fromString(
      'clusters: [{ name: c, cluster: { server: "https://first" } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]\nusers: [{ name: u, user: {} }]\ncurrent-context: x',
    );
    const second = ClusterConfig.fromString(
      'clusters: [{ name: c, cluster: { server: "https://second" } }, { name: d, cluster: { server: "https://d" } }]\ncurrent-context: later',
    );
    const merged = first.merge(second);
    assert.deepEqual(
      merged.clusters.map((cluster) => cluster.server),
      ['https://first', 'https://d'],
    );
    assert.equal(merged.getCurrentContext(), 'x');
    assert.equal(ClusterConfig.fromString('users: []').merge(second).getCurrentContext(), 'later');
  });

  it('hands auth providers it does not apply itself to client-node, loaded then', async () => {
    // An OIDC id-token that expires in an hour: client-node's authenticator sends it as is.
    const jwt = [{ alg: 'none' }, { exp: Math.floor(Date.now() / 1000) + 3600 }, 'sig']
      .map((part) => (typeof part === 'string' ? part : Buffer.from(JSON.stringify(part)).toString('base64url')))
      .join('.');
    const path = kubeconfig(
      'oidc',
      `auth-provider: { name: oidc, config: { id-token: "${jwt}", idp-issuer-url: "https://issuer.example", client-id: k } }`,
    );
    const { ours, theirs } = await bothWays(path);
    assert.equal(ours.headers.authorization, `Bearer ${jwt}`);
    assert.deepEqual(ours, theirs);
  });

  it('converts to a client-node KubeConfig for its generated API clients', async () => {
    const config = ClusterConfig.fromFile(kubeconfig('convert', 'token: abc'));
    const kubeConfig = await config.toClientNode();
    assert.ok(kubeConfig instanceof KubeConfig);
    assert.equal(kubeConfig.getCurrentCluster()?.server, 'https://convert.example:6443');
    assert.equal(kubeConfig.getCurrentUser()?.token, 'abc');
  });

  it('says which file is not a kubeconfig', () => {
    const path = join(dir, 'not-yaml');
    writeFileSync(path, 'just a string');
    assert.throws(
      () => ClusterConfig.fromFile(path),
      new RegExp(`cannot read the kubeconfig ${path}: a kubeconfig must be a YAML mapping`),
    );
  });
});

describe('ClusterConfig.fromInline (a kubeconfig from a Secret)', () => {
  const inline = (user: string, cluster = 'server: "https://m.example:6443"') =>
    [
      `clusters: [{ name: c, cluster: { ${cluster} } }]`,
      `users: [{ name: u, user: { ${user} } }]`,
      'contexts: [{ name: x, context: { cluster: c, user: u } }]',
      'current-context: x',
    ].join('\n');

  it('takes inline credentials', () => {
    const config = ClusterConfig.fromInline(inline(`token: abc, client-key-data: ${b64('k')}`));
    assert.equal(config.getCurrentUser()?.token, 'abc');
    assert.equal(config.getCurrentCluster()?.server, 'https://m.example:6443');
  });

  it("refuses what would read this process's files, naming each field, without reading them", () => {
    // The operator's own token sent to a server of the Secret writer's choosing.
    const token = join(dir, 'operator-token');
    writeFileSync(token, 'the-operators-own-token');
    assert.throws(
      () =>
        ClusterConfig.fromInline(
          inline(
            `token-file: ${token}, client-certificate: /etc/cert, client-key: /etc/key`,
            'server: "https://x", certificate-authority: /etc/ca',
          ),
        ),
      (error: Error) =>
        /cluster c: certificate-authority \(a file\)/.test(error.message) &&
        /user u: token-file \(a file\)/.test(error.message) &&
        /client-certificate/.test(error.message) &&
        /client-key/.test(error.message) &&
        !error.message.includes('the-operators-own-token'),
    );
  });

  it('refuses exec plugins and auth providers unless allowed', () => {
    const exec = inline('exec: { apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, "id"] }');
    assert.throws(() => ClusterConfig.fromInline(exec), /user u: exec \(runs code in this process\).*allowExec/);
    assert.equal(ClusterConfig.fromInline(exec, { allowExec: true }).getCurrentUser()?.exec?.command, '/bin/sh');
  });
});
