import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  controlPlaneCacheDir,
  controlPlaneModuleDir,
  ensureControlPlaneBinaries,
  kubernetesVersion,
} from './controlplane-binaries.js';

let scratch: string;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'nestor-binaries-test-'));
});
after(() => rm(scratch, { recursive: true, force: true }));

/** A Go module folder with the given go.mod requirement and go.sum text. */
async function moduleDir(name: string, kubernetes: string, goSum: string): Promise<string> {
  const dir = join(scratch, name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'go.mod'),
    `module example.com/cp\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/x/y v1.0.0\n\tk8s.io/kubernetes ${kubernetes}\n)\n`,
  );
  await writeFile(join(dir, 'go.sum'), goSum);
  return dir;
}

/** A folder of stub files, executable unless listed in `notExecutable`. */
async function stubs(name: string, files: string[], notExecutable: string[] = []): Promise<string> {
  const dir = join(scratch, name);
  await mkdir(dir, { recursive: true });
  for (const file of [...files, ...notExecutable]) {
    await writeFile(join(dir, file), '#!/bin/sh\nexit 1\n');
    await chmod(join(dir, file), files.includes(file) ? 0o755 : 0o644);
  }
  return dir;
}

describe('kubernetesVersion', () => {
  it("reads the k8s.io/kubernetes requirement of the control plane's go.mod", async () => {
    const goMod = await readFile(join(controlPlaneModuleDir, 'go.mod'), 'utf8');
    const version = kubernetesVersion();
    assert.match(version, /^v1\.\d+\.\d+$/);
    assert.match(goMod, new RegExp(`^\\s*k8s\\.io/kubernetes ${version.replaceAll('.', '\\.')}\\s*$`, 'm'));
  });

  it('reads the requirement of another module folder', async () => {
    assert.equal(kubernetesVersion(await moduleDir('version', 'v1.2.3', '')), 'v1.2.3');
  });

  it('fails clearly when go.mod does not require a Kubernetes release', async () => {
    const dir = await moduleDir('pseudo', 'v0.0.0-20250101000000-abcdef123456', '');
    assert.throws(() => kubernetesVersion(dir), /go\.mod does not require k8s\.io\/kubernetes at a release version/);
  });
});

describe('controlPlaneCacheDir', () => {
  it('is under NESTOR_CACHE_DIR when set, keyed by version and go.sum', async () => {
    const dir = await moduleDir('cache-nestor', 'v1.2.3', 'a v1 h1:x=\n');
    const cache = controlPlaneCacheDir(dir, { NESTOR_CACHE_DIR: '/n', XDG_CACHE_HOME: '/x' });
    assert.match(cache, /^\/n\/controlplane\/v1\.2\.3-[0-9a-f]{12}$/);
  });

  it('is under XDG_CACHE_HOME/nestor, else ~/.cache/nestor', async () => {
    const dir = await moduleDir('cache-xdg', 'v1.2.3', 'a v1 h1:x=\n');
    const key = controlPlaneCacheDir(dir, { NESTOR_CACHE_DIR: '/n' }).slice('/n/'.length);
    assert.equal(controlPlaneCacheDir(dir, { XDG_CACHE_HOME: '/x' }), join('/x', 'nestor', key));
    assert.equal(controlPlaneCacheDir(dir, {}), join(homedir(), '.cache', 'nestor', key));
  });

  it('changes when go.sum changes and not otherwise', async () => {
    const dir = await moduleDir('cache-sum', 'v1.2.3', 'a v1 h1:x=\n');
    const env = { NESTOR_CACHE_DIR: '/n' };
    const first = controlPlaneCacheDir(dir, env);
    assert.equal(controlPlaneCacheDir(dir, env), first);
    await writeFile(join(dir, 'go.sum'), 'a v1 h1:y=\n');
    const second = controlPlaneCacheDir(dir, env);
    assert.notEqual(second, first);
    assert.match(second, /^\/n\/controlplane\/v1\.2\.3-[0-9a-f]{12}$/);
  });
});

describe('ensureControlPlaneBinaries', () => {
  // An empty cache and no Go: should any case here try to build, it fails at once instead.
  let noBuild: NodeJS.ProcessEnv;
  before(async () => {
    noBuild = {
      NESTOR_CACHE_DIR: join(scratch, 'empty-cache'),
      GO: join(scratch, 'no-go'),
      NESTOR_CONTROLPLANE_SOURCE: 'go',
    };
  });

  it('takes the binaries in KUBEBUILDER_ASSETS without building', async () => {
    const assets = await stubs('assets-all', ['kube-apiserver', 'etcd', 'kube-controller-manager']);
    const binaries = await ensureControlPlaneBinaries({ env: { ...noBuild, KUBEBUILDER_ASSETS: assets } });
    assert.deepEqual(binaries, {
      kubeApiServer: join(assets, 'kube-apiserver'),
      etcd: join(assets, 'etcd'),
      kubeControllerManager: join(assets, 'kube-controller-manager'),
      origin: `KUBEBUILDER_ASSETS=${assets}`,
    });
  });

  it('has no kube-controller-manager when KUBEBUILDER_ASSETS has none, as envtest ships none', async () => {
    const assets = await stubs('assets-envtest', ['kube-apiserver', 'etcd']);
    const binaries = await ensureControlPlaneBinaries({ env: { ...noBuild, KUBEBUILDER_ASSETS: assets } });
    assert.equal(binaries.kubeApiServer, join(assets, 'kube-apiserver'));
    assert.equal(binaries.etcd, join(assets, 'etcd'));
    assert.equal(binaries.kubeControllerManager, undefined);
  });

  it('lets TEST_ASSET_* override KUBEBUILDER_ASSETS one binary at a time', async () => {
    const assets = await stubs('assets-override', ['kube-apiserver', 'etcd']);
    const other = await stubs('other', ['my-etcd', 'my-kcm']);
    const binaries = await ensureControlPlaneBinaries({
      env: {
        ...noBuild,
        KUBEBUILDER_ASSETS: assets,
        TEST_ASSET_ETCD: join(other, 'my-etcd'),
        TEST_ASSET_KUBE_CONTROLLER_MANAGER: join(other, 'my-kcm'),
      },
    });
    assert.equal(binaries.kubeApiServer, join(assets, 'kube-apiserver'));
    assert.equal(binaries.etcd, join(other, 'my-etcd'));
    assert.equal(binaries.kubeControllerManager, join(other, 'my-kcm'));
  });

  it('fails clearly, naming the variable and path, on a non-executable TEST_ASSET_ETCD', async () => {
    const dir = await stubs('not-executable', ['kube-apiserver'], ['etcd']);
    const etcd = join(dir, 'etcd');
    await assert.rejects(
      ensureControlPlaneBinaries({
        env: { ...noBuild, TEST_ASSET_KUBE_APISERVER: join(dir, 'kube-apiserver'), TEST_ASSET_ETCD: etcd },
      }),
      (error: Error) => {
        assert.match(error.message, /^etcd not usable at /);
        assert.ok(error.message.includes(`${etcd} (from TEST_ASSET_ETCD): not an executable file`), error.message);
        return true;
      },
    );
  });

  it('checks a given binary before it would build the missing ones', async () => {
    // Only TEST_ASSET_ETCD is given, so kube-apiserver would come from a build (which fails
    // here for want of Go); the wrong etcd must be reported first.
    await assert.rejects(
      ensureControlPlaneBinaries({ env: { ...noBuild, TEST_ASSET_ETCD: '/nonexistent/etcd' } }),
      /etcd not usable at \/nonexistent\/etcd \(from TEST_ASSET_ETCD\): ENOENT/,
    );
  });

  it('fails clearly on a missing binary in KUBEBUILDER_ASSETS', async () => {
    const assets = await stubs('assets-no-apiserver', ['etcd']);
    await assert.rejects(
      ensureControlPlaneBinaries({ env: { ...noBuild, KUBEBUILDER_ASSETS: assets } }),
      (error: Error) => {
        assert.ok(
          error.message.startsWith(
            `kube-apiserver not usable at ${join(assets, 'kube-apiserver')} (from KUBEBUILDER_ASSETS=${assets})`,
          ),
          error.message,
        );
        return true;
      },
    );
  });

  it('fails clearly on an explicit TEST_ASSET_KUBE_CONTROLLER_MANAGER that does not exist', async () => {
    const assets = await stubs('assets-bad-kcm', ['kube-apiserver', 'etcd']);
    await assert.rejects(
      ensureControlPlaneBinaries({
        env: { ...noBuild, KUBEBUILDER_ASSETS: assets, TEST_ASSET_KUBE_CONTROLLER_MANAGER: '/nonexistent/kcm' },
      }),
      /kube-controller-manager not usable at \/nonexistent\/kcm \(from TEST_ASSET_KUBE_CONTROLLER_MANAGER\)/,
    );
  });
});

describe('the Go build cache, with kube-scheduler and kwok for fake nodes', () => {
  // A stand-in `go` that records its arguments and writes the binaries `build -o` or
  // `install` (into GOBIN) would, so the cache logic runs without compiling anything.
  let go: string;
  let log: string;
  before(async () => {
    log = join(scratch, 'go.log');
    go = join(scratch, 'fake-go');
    await writeFile(
      go,
      [
        '#!/bin/sh',
        'echo "$@" >> "${LOG:-/dev/null}"',
        'case "$1" in',
        '  version) echo "go version go1.26.0 fake/amd64" ;;',
        '  build)',
        '    out=""; prev=""',
        '    for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done',
        '    for a in "$@"; do case "$a" in k8s.io/*|go.etcd.io/*)',
        '      name=$(basename "$a"); [ "$name" = v3 ] && name=server',
        '      printf "#!/bin/sh\\n" > "$out$name"; chmod +x "$out$name" ;; esac; done ;;',
        '  install) printf "#!/bin/sh\\n" > "$GOBIN/kwok"; chmod +x "$GOBIN/kwok" ;;',
        'esac',
      ].join('\n') + '\n',
    );
    await chmod(go, 0o755);
  });

  /** An env with its own cache, holding a control plane built before kube-scheduler was. */
  async function oldCache(name: string): Promise<NodeJS.ProcessEnv> {
    const env = { NESTOR_CACHE_DIR: join(scratch, name), GO: go, LOG: log, NESTOR_CONTROLPLANE_SOURCE: 'go' };
    const dir = controlPlaneCacheDir(controlPlaneModuleDir, env);
    await mkdir(dir, { recursive: true });
    for (const binary of ['kube-apiserver', 'kube-controller-manager', 'etcd']) {
      await writeFile(join(dir, binary), '#!/bin/sh\n');
      await chmod(join(dir, binary), 0o755);
    }
    await writeFile(join(dir, 'complete'), '{}\n');
    return env;
  }
  const goCalls = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);

  it('uses a cache from before kube-scheduler as it is when no fake nodes are asked for', async () => {
    await rm(log, { force: true });
    const env = await oldCache('old-no-nodes');
    const binaries = await ensureControlPlaneBinaries({ env, controllerManager: true });
    assert.equal(binaries.kubeScheduler, undefined);
    assert.equal(binaries.kwok, undefined);
    assert.deepEqual(await goCalls(), [], 'nothing built');
  });

  it('adds kube-scheduler to that cache, and builds kwok once, when fake nodes are asked for', async () => {
    await rm(log, { force: true });
    const env = await oldCache('old-nodes');
    const dir = controlPlaneCacheDir(controlPlaneModuleDir, env);
    const binaries = await ensureControlPlaneBinaries({ env, controllerManager: true, nodes: true });
    assert.equal(binaries.kubeApiServer, join(dir, 'kube-apiserver'));
    assert.equal(binaries.kubeScheduler, join(dir, 'kube-scheduler'));
    assert.equal(binaries.kwok, join(scratch, 'old-nodes', 'kwok', 'v0.8.0', 'kwok'));
    const builds = (await goCalls()).filter((line) => !line.startsWith('version'));
    assert.equal(builds.length, 2, builds.join('\n'));
    assert.match(builds[0]!, /^build .* k8s\.io\/kubernetes\/cmd\/kube-scheduler$/, 'only the missing binary');
    assert.match(builds[1]!, /^install .* sigs\.k8s\.io\/kwok\/cmd\/kwok@v0\.8\.0$/);

    await rm(log, { force: true });
    assert.deepEqual(await ensureControlPlaneBinaries({ env, nodes: true }), binaries);
    assert.deepEqual(await goCalls(), [], 'the second time, all from the cache');
  });

  it('takes kube-scheduler and kwok from TEST_ASSET_* without building', async () => {
    const assets = await stubs('assets-nodes', ['kube-apiserver', 'etcd', 'kube-scheduler', 'kwok']);
    const binaries = await ensureControlPlaneBinaries({
      nodes: true,
      env: {
        NESTOR_CACHE_DIR: join(scratch, 'empty-cache'),
        GO: join(scratch, 'no-go'),
        KUBEBUILDER_ASSETS: assets,
        TEST_ASSET_KWOK: join(assets, 'kwok'),
      },
    });
    assert.equal(binaries.kubeScheduler, join(assets, 'kube-scheduler'));
    assert.equal(binaries.kwok, join(assets, 'kwok'));
  });

  it('fails clearly on a TEST_ASSET_KWOK that is not there', async () => {
    const assets = await stubs('assets-no-kwok', ['kube-apiserver', 'etcd', 'kube-scheduler']);
    await assert.rejects(
      ensureControlPlaneBinaries({
        nodes: true,
        env: { KUBEBUILDER_ASSETS: assets, TEST_ASSET_KWOK: '/nonexistent/kwok', GO: join(scratch, 'no-go') },
      }),
      /kwok not usable at \/nonexistent\/kwok \(from TEST_ASSET_KWOK\)/,
    );
  });
});
