// loadKubeConfig in a controlled environment: HOME, KUBECONFIG and the in-cluster
// variables are set per test and restored after it (tests in a file run one at a time).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { ClusterConfig } from './cluster-config.js';
import { loadKubeConfig } from './load-kube-config.js';

const VARIABLES = ['HOME', 'KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'] as const;
const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
const dirs: string[] = [];

afterEach(() => {
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nestor-kubeconfig-'));
  dirs.push(dir);
  return dir;
}

/** Sets exactly these of the variables; the others are unset. */
function environment(vars: Partial<Record<(typeof VARIABLES)[number], string>>): void {
  for (const name of VARIABLES) {
    if (vars[name] === undefined) delete process.env[name];
    else process.env[name] = vars[name];
  }
}

function kubeconfigFile(dir: string, name: string, server: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{ name: ${name}, cluster: { server: "${server}" } }]`,
      `users: [{ name: ${name}, user: { token: t } }]`,
      `contexts: [{ name: ${name}, context: { cluster: ${name}, user: ${name} } }]`,
      `current-context: ${name}`,
    ].join('\n'),
  );
  return path;
}

/** A fake filesystem root with a mounted service account. */
function serviceAccountRoot(): string {
  const root = tempDir();
  const dir = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'token'), 'sa-token');
  writeFileSync(join(dir, 'namespace'), 'ops');
  return root;
}

describe('loadKubeConfig', () => {
  it('with nothing configured, never falls back to localhost:8080: it says where it looked and what to do', () => {
    const home = tempDir();
    environment({ HOME: home });
    assert.throws(
      () => loadKubeConfig(undefined, { root: tempDir() }),
      (error: Error) => {
        assert.match(error.message, /^no Kubernetes cluster is configured/);
        assert.match(error.message, /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/);
        assert.match(
          error.message,
          /no service account token at .*\/var\/run\/secrets\/kubernetes\.io\/serviceaccount\/token/,
        );
        assert.match(error.message, /KUBECONFIG: not set/);
        assert.ok(error.message.includes(`${join(home, '.kube', 'config')}: does not exist`), error.message);
        assert.match(
          error.message,
          /set KUBECONFIG to a kubeconfig file.*pass kubeConfig to OperatorModule\.forRoot\(\)/s,
        );
        assert.doesNotMatch(error.message, /localhost:8080|skipTLSVerify/);
        return true;
      },
    );
  });

  it('says when the in-cluster variables are set but the token is not mounted', () => {
    environment({ HOME: tempDir(), KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' });
    assert.throws(
      () => loadKubeConfig(undefined, { root: tempDir() }),
      /KUBERNETES_SERVICE_HOST and _PORT are set, but there is no service account token at .*token \(is automountServiceAccountToken false\?\)/,
    );
  });

  it('refuses a KUBECONFIG that names no existing file', () => {
    const dir = tempDir();
    environment({ HOME: dir, KUBECONFIG: join(dir, 'missing') });
    assert.throws(
      () => loadKubeConfig(undefined, { root: dir }),
      new RegExp(
        `KUBECONFIG names ${join(dir, 'missing')}, and that file does not exist: set KUBECONFIG to a kubeconfig file`,
      ),
    );
    environment({ HOME: dir, KUBECONFIG: [join(dir, 'a'), join(dir, 'b')].join(delimiter) });
    assert.throws(() => loadKubeConfig(undefined, { root: dir }), /and none of these files exists: set KUBECONFIG/);
  });

  it('refuses a kubeConfig option that names no file', () => {
    assert.throws(
      () => loadKubeConfig('/nonexistent/kubeconfig'),
      /the kubeConfig option of OperatorModule names \/nonexistent\/kubeconfig, which does not exist/,
    );
  });

  it('loads the files of KUBECONFIG, skipping missing ones as kubectl does, the first one’s context current', () => {
    const dir = tempDir();
    const first = kubeconfigFile(dir, 'first', 'https://first.example:6443');
    const second = kubeconfigFile(dir, 'second', 'https://second.example:6443');
    environment({ HOME: dir, KUBECONFIG: [join(dir, 'missing'), first, second].join(delimiter) });
    const kubeConfig = loadKubeConfig(undefined, { root: dir });
    assert.equal(kubeConfig.getCurrentCluster()?.server, 'https://first.example:6443');
    assert.deepEqual(
      (kubeConfig as ClusterConfig).clusters.map((c) => c.name),
      ['first', 'second'],
    );
  });

  it('loads ~/.kube/config when KUBECONFIG is not set', () => {
    const home = tempDir();
    mkdirSync(join(home, '.kube'));
    writeFileSync(
      join(home, '.kube', 'config'),
      `clusters: [{ name: c, cluster: { server: "https://home.example" } }]\ncontexts: [{ name: c, context: { cluster: c, user: u } }]\nusers: [{ name: u, user: {} }]\ncurrent-context: c\n`,
    );
    environment({ HOME: home });
    assert.equal(loadKubeConfig(undefined, { root: tempDir() }).getCurrentCluster()?.server, 'https://home.example');
  });

  it('refuses a kubeconfig without a current cluster, saying how to pick one', () => {
    const dir = tempDir();
    const path = join(dir, 'config');
    writeFileSync(path, 'clusters: [{ name: c, cluster: { server: "https://x.example" } }]\n');
    environment({ HOME: dir, KUBECONFIG: path });
    assert.throws(
      () => loadKubeConfig(undefined, { root: dir }),
      /has no current cluster: .*kubectl config use-context/,
    );
  });

  it('prefers KUBECONFIG to the in-cluster service account, as controller-runtime', () => {
    const dir = tempDir();
    environment({
      HOME: dir,
      KUBECONFIG: kubeconfigFile(dir, 'local', 'https://local.example'),
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
    });
    const kubeConfig = loadKubeConfig(undefined, { root: serviceAccountRoot() });
    assert.equal(kubeConfig.getCurrentCluster()?.server, 'https://local.example');
  });

  it('uses the in-cluster service account before ~/.kube/config', () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.kube'));
    kubeconfigFile(join(dir, '.kube'), 'config', 'https://home.example');
    environment({ HOME: dir, KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' });
    const kubeConfig = loadKubeConfig(undefined, { root: serviceAccountRoot() });
    assert.equal(kubeConfig.getCurrentCluster()?.server, 'https://10.96.0.1:443');
  });

  it('returns a given client-node KubeConfig as it is', () => {
    const given = new KubeConfig();
    assert.equal(loadKubeConfig(given), given);
  });
});
