import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { access, chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { controlPlaneCacheDir, ensureControlPlaneBinaries, kubernetesVersion } from './controlplane-binaries.js';
import { downloadEnvtestBinaries, envtestCacheDir, EnvtestVersionUnavailable } from './envtest-download.js';
import {
  envtestPlatform,
  parseEnvtestIndex,
  selectEnvtestArchive,
  type EnvtestArchive,
  type EnvtestPlatform,
} from './envtest-index.js';
import { extractTarGz } from './tar-extract.js';

// ---- a .tar.gz writer for the tests (ustar, with pax and GNU long-name entries on demand)

interface Entry {
  path: string;
  data?: string | Buffer;
  mode?: number;
  type?: '0' | '5' | '2' | 'x' | 'L';
  prefix?: string;
}

function header(entry: Entry, size: number): Buffer {
  const block = Buffer.alloc(512);
  block.write(entry.path.slice(0, 100), 0, 'utf8');
  block.write((entry.mode ?? 0o755).toString(8).padStart(7, '0') + '\0', 100, 'ascii');
  block.write('0000000\0', 108, 'ascii');
  block.write('0000000\0', 116, 'ascii');
  block.write(size.toString(8).padStart(11, '0') + '\0', 124, 'ascii');
  block.write('00000000000\0', 136, 'ascii');
  block.write(entry.type ?? '0', 156, 'ascii');
  block.write('ustar\0' + '00', 257, 'ascii');
  if (entry.prefix) block.write(entry.prefix, 345, 'utf8');
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii');
  return block;
}

function tar(entries: Entry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? '');
    parts.push(header(entry, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

const script = (name: string) => `#!/bin/sh\necho ${name}\n`;

/** An envtest archive as controller-tools makes them: controller-tools/envtest/{etcd,kube-apiserver,kubectl}. */
function envtestArchive(extra: Entry[] = []): Buffer {
  return gzipSync(
    tar([
      { path: 'controller-tools/', type: '5' },
      { path: 'controller-tools/envtest/', type: '5' },
      { path: 'controller-tools/envtest/etcd', data: script('etcd') },
      { path: 'controller-tools/envtest/kube-apiserver', data: script('kube-apiserver') },
      { path: 'controller-tools/envtest/kubectl', data: script('kubectl') },
      ...extra,
    ]),
  );
}

const sha512 = (data: Buffer) => createHash('sha512').update(data).digest('hex');

// ---- a release index and its archives on 127.0.0.1

interface Served {
  /** What the index lists: version → archive bytes (and a hash to claim instead of the real one). */
  releases: Record<string, { archive: Buffer; claimedHash?: string; truncate?: boolean }>;
}

class IndexServer {
  requests: string[] = [];
  served: Served = { releases: {} };
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<IndexServer> {
    const holder: { self?: IndexServer } = {};
    const server = createServer((request, response) => holder.self!.handle(request.url ?? '/', response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    holder.self = new IndexServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return holder.self;
  }

  get indexUrl(): string {
    return `${this.url}/envtest-releases.yaml`;
  }

  private handle(path: string, response: import('node:http').ServerResponse): void {
    this.requests.push(path);
    const { os, arch } = envtestPlatform();
    if (path === '/envtest-releases.yaml') {
      const lines = ['releases:'];
      for (const [version, release] of Object.entries(this.served.releases)) {
        lines.push(`  ${version}:`);
        for (const platform of [`${os}-${arch}`, 'plan9-mips']) {
          lines.push(
            `    envtest-${version}-${platform}.tar.gz:`,
            `      hash: ${release.claimedHash ?? sha512(release.archive)}`,
            // Relative links resolve against the index (real ones are absolute GitHub URLs).
            `      selfLink: /download/envtest-${version}-${platform}.tar.gz`,
          );
        }
      }
      response.end(lines.join('\n') + '\n');
      return;
    }
    const match = /^\/download\/envtest-(v[\d.]+)-/.exec(path);
    const release = match && this.served.releases[match[1]!];
    if (!release) {
      response.writeHead(404).end('not found');
      return;
    }
    response.writeHead(200, { 'content-length': release.archive.length, 'content-type': 'application/gzip' });
    if (release.truncate) {
      // Half the body, then the connection drops: an interrupted download.
      response.write(release.archive.subarray(0, release.archive.length >> 1), () => response.destroy());
      return;
    }
    response.end(release.archive);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let scratch: string;
let server: IndexServer;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'nestor-envtest-test-'));
  server = await IndexServer.start();
});
after(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

let caches = 0;
/** A fresh cache folder (as NESTOR_CACHE_DIR) per test. */
async function freshCache(): Promise<string> {
  const dir = join(scratch, `cache-${++caches}`);
  await mkdir(dir);
  return dir;
}

/** Everything under the cache's envtest folder (to show nothing half-written stays). */
async function envtestEntries(cache: string): Promise<string[]> {
  return (await readdir(join(cache, 'envtest')).catch(() => [] as string[])).sort();
}

describe('the envtest release index', () => {
  const linux: EnvtestPlatform = { os: 'linux', arch: 'amd64' };
  const archives = parseEnvtestIndex(
    [
      'releases:',
      ...['v1.29.3', 'v1.30.0', 'v1.30.2', 'v1.31.0'].flatMap((v) => [
        `  ${v}:`,
        `    envtest-${v}-linux-amd64.tar.gz: { hash: AB${v.replaceAll('.', '')}, selfLink: https://example.com/${v}.tgz }`,
        `    envtest-${v}-darwin-arm64.tar.gz: { hash: cd, selfLink: https://example.com/${v}-darwin.tgz }`,
      ]),
      '  v1.32.0:',
      '    envtest-v1.32.0-darwin-arm64.tar.gz: { hash: ef, selfLink: https://example.com/x.tgz }',
      '    README.md: { hash: 00, selfLink: https://example.com/readme }',
    ].join('\n'),
    'https://example.com/index.yaml',
  );
  const chosen = (selector: string, platform = linux) => selectEnvtestArchive(archives, selector, platform)?.version;

  it('reads every versioned archive, its platform, sha512 (lower case) and link, and skips other entries', () => {
    assert.equal(archives.length, 9);
    const one = archives.find((a) => a.name === 'envtest-v1.30.2-linux-amd64.tar.gz')!;
    assert.deepEqual(one, {
      version: 'v1.30.2',
      name: 'envtest-v1.30.2-linux-amd64.tar.gz',
      sha512: 'abv1302',
      url: 'https://example.com/v1.30.2.tgz',
      platform: linux,
    } satisfies EnvtestArchive);
  });

  it('chooses an exact version, the newest patch of a minor, or the newest of all, for the platform', () => {
    assert.equal(chosen('1.30.0'), 'v1.30.0');
    assert.equal(chosen('v1.30.0'), 'v1.30.0');
    assert.equal(chosen('1.30'), 'v1.30.2');
    assert.equal(chosen('1.30.x'), 'v1.30.2');
    assert.equal(chosen('latest'), 'v1.31.0'); // v1.32.0 has no linux-amd64 archive
    assert.equal(chosen('latest', { os: 'darwin', arch: 'arm64' }), 'v1.32.0');
    assert.equal(chosen('1.30.1'), undefined);
    assert.equal(chosen('1.28'), undefined);
  });

  it('refuses a selector it cannot read, saying how to write one', () => {
    assert.throws(() => chosen('newest'), /cannot read the envtest version "newest": write it as 1\.30\.2, 1\.30/);
  });

  it('refuses a document that is not an index', () => {
    assert.throws(() => parseEnvtestIndex('<html>', 'https://x/i'), /no "releases" map/);
    assert.throws(() => parseEnvtestIndex('a: [', 'https://x/i'), /is not YAML/);
  });

  it("names this machine's platform as Go does", () => {
    assert.deepEqual(envtestPlatform('linux', 'x64'), { os: 'linux', arch: 'amd64' });
    assert.deepEqual(envtestPlatform('darwin', 'arm64'), { os: 'darwin', arch: 'arm64' });
    assert.deepEqual(envtestPlatform('win32', 'x64'), { os: 'windows', arch: 'amd64' });
    assert.deepEqual(envtestPlatform('linux', 'ppc64'), { os: 'linux', arch: 'ppc64le' });
  });
});

describe('extractTarGz', () => {
  const write = async (name: string, data: Buffer) => {
    const path = join(scratch, name);
    await writeFile(path, data);
    const into = join(scratch, `${name}.out`);
    await mkdir(into);
    return { path, into };
  };
  const all = (path: string) => path.split('/').pop() || undefined;

  it('writes the chosen regular files flat, executable when the archive says so, and skips the rest', async () => {
    const { path, into } = await write(
      'plain.tgz',
      gzipSync(
        tar([
          { path: 'dir/', type: '5' },
          { path: 'dir/run', data: 'x'.repeat(1500), mode: 0o755 },
          { path: 'dir/notes.txt', data: 'hello', mode: 0o644 },
          { path: 'dir/link', type: '2' },
          { path: 'dir/skipped', data: 'no' },
          { path: 'empty', data: '' },
        ]),
      ),
    );
    const written = await extractTarGz(path, into, (p) => (p.endsWith('skipped') ? undefined : all(p)));
    assert.deepEqual(written, ['run', 'notes.txt', 'empty']);
    assert.deepEqual((await readdir(into)).sort(), ['empty', 'notes.txt', 'run']);
    assert.equal(await readFile(join(into, 'run'), 'utf8'), 'x'.repeat(1500));
    assert.equal((await stat(join(into, 'run'))).mode & 0o777, 0o755);
    assert.equal((await stat(join(into, 'notes.txt'))).mode & 0o777, 0o644);
  });

  it('reads long paths from the ustar prefix, a pax header and a GNU long name', async () => {
    const long = `${'d'.repeat(120)}/file`;
    const pax = (record: string) => `${record.length + 3 + String(record.length).length} ${record}`;
    const paxData = pax(`path=${long}-pax\n`);
    const seen: string[] = [];
    const { path, into } = await write(
      'long.tgz',
      gzipSync(
        tar([
          { path: 'file-ustar', prefix: 'p'.repeat(120), data: '1' },
          { path: 'PaxHeader', type: 'x', data: paxData },
          { path: 'truncated-name', data: '2' },
          { path: '././@LongLink', type: 'L', data: `${long}-gnu\0` },
          { path: 'short', data: '3' },
        ]),
      ),
    );
    await extractTarGz(path, into, (p) => {
      seen.push(p);
      return undefined;
    });
    assert.deepEqual(seen, [`${'p'.repeat(120)}/file-ustar`, `${long}-pax`, `${long}-gnu`]);
  });

  it('fails on a truncated archive and on data that is not tar', async () => {
    const whole = tar([{ path: 'big', data: 'y'.repeat(5000) }]);
    const cut = await write('cut.tgz', gzipSync(whole.subarray(0, 2048)));
    await assert.rejects(extractTarGz(cut.path, cut.into, all), /ends in the middle of an entry/);
    const junk = await write('junk.tgz', gzipSync(Buffer.alloc(1024, 7)));
    await assert.rejects(extractTarGz(junk.path, junk.into, all), /not a tar archive/);
    const notGzip = await write('plain.tar', whole);
    await assert.rejects(extractTarGz(notGzip.path, notGzip.into, all), /incorrect header check/);
  });
});

describe('downloadEnvtestBinaries', () => {
  it('downloads, verifies and unpacks the archive into the cache, then serves it from there offline', async () => {
    const cache = await freshCache();
    const archive = envtestArchive();
    server.served = { releases: { 'v1.30.0': { archive }, 'v1.30.2': { archive: envtestArchive() } } };
    server.requests = [];
    const lines: string[] = [];
    const env = { NESTOR_CACHE_DIR: cache, NESTOR_ENVTEST_INDEX_URL: server.indexUrl };
    const binaries = await downloadEnvtestBinaries({ version: '1.30.0', env, onProgress: (l) => lines.push(l) });
    const dir = envtestCacheDir('v1.30.0', envtestPlatform(), env);
    assert.deepEqual(binaries, {
      kubeApiServer: join(dir, 'kube-apiserver'),
      etcd: join(dir, 'etcd'),
      kubectl: join(dir, 'kubectl'),
      origin: `envtest v1.30.0 (envtest-v1.30.0-${envtestPlatform().os}-${envtestPlatform().arch}.tar.gz, sha512 verified) in ${dir}`,
    });
    for (const file of [binaries.kubeApiServer, binaries.etcd]) await access(file, 0o1); // executable
    assert.equal(await readFile(binaries.etcd, 'utf8'), script('etcd'));
    const marker = JSON.parse(await readFile(join(dir, 'complete'), 'utf8')) as { sha512: string };
    assert.equal(marker.sha512, sha512(archive));
    assert.deepEqual(server.requests, [
      '/envtest-releases.yaml',
      `/download/${binaries.origin.split(' ')[2]!.slice(1, -1)}`,
    ]);
    assert.ok(
      lines.some((l) => l.includes('verified and unpacked')),
      lines.join('\n'),
    );
    assert.deepEqual(await envtestEntries(cache), [`v1.30.0-${envtestPlatform().os}-${envtestPlatform().arch}`]);

    // An exact version in the cache is used without asking the network.
    server.requests = [];
    const again = await downloadEnvtestBinaries({
      version: 'v1.30.0',
      env: { ...env, NESTOR_ENVTEST_INDEX_URL: 'http://127.0.0.1:1/x' },
    });
    assert.deepEqual(again, binaries);
    assert.deepEqual(server.requests, []);

    // A minor selector asks the index for its newest patch.
    const newest = await downloadEnvtestBinaries({ version: '1.30', env });
    assert.match(newest.origin, /^envtest v1\.30\.2 /);
  });

  it('refuses an archive whose sha512 is not the index’s, and leaves nothing in the cache', async () => {
    const cache = await freshCache();
    server.served = {
      releases: { 'v1.30.0': { archive: envtestArchive(), claimedHash: sha512(Buffer.from('other')) } },
    };
    await assert.rejects(
      downloadEnvtestBinaries({
        version: '1.30.0',
        env: { NESTOR_CACHE_DIR: cache, NESTOR_ENVTEST_INDEX_URL: server.indexUrl },
      }),
      (error: Error) => {
        assert.match(
          error.message,
          /^checksum mismatch for envtest-v1\.30\.0-.*: sha512 [0-9a-f]{128} \(computed\) != [0-9a-f]{128} \(the index's\); nothing was installed/,
        );
        return true;
      },
    );
    assert.deepEqual(await envtestEntries(cache), []);
  });

  it('leaves nothing half-written when the download is cut off', async () => {
    const cache = await freshCache();
    server.served = {
      releases: {
        'v1.30.0': { archive: envtestArchive([{ path: 'pad', data: Buffer.alloc(300_000, 1) }]), truncate: true },
      },
    };
    await assert.rejects(
      downloadEnvtestBinaries({
        version: '1.30.0',
        env: { NESTOR_CACHE_DIR: cache, NESTOR_ENVTEST_INDEX_URL: server.indexUrl },
      }),
      /reading http:\/\/127\.0\.0\.1:\d+\/download\/envtest-v1\.30\.0-.*\.tar\.gz: /,
    );
    assert.deepEqual(await envtestEntries(cache), []);
  });

  it('removes what a killed download left behind, and ignores an unfinished entry', async () => {
    const cache = await freshCache();
    const root = join(cache, 'envtest');
    const item = `v1.30.0-${envtestPlatform().os}-${envtestPlatform().arch}`;
    await mkdir(join(root, item), { recursive: true }); // no "complete" marker: not an entry
    await writeFile(join(root, item, 'etcd'), 'half');
    await writeFile(join(root, `.${item}.999999999.part`), 'half'); // a pid that cannot be alive
    await mkdir(join(root, `.${item}.999999999.staging`));
    server.served = { releases: { 'v1.30.0': { archive: envtestArchive() } } };
    const binaries = await downloadEnvtestBinaries({
      version: '1.30.0',
      env: { NESTOR_CACHE_DIR: cache, NESTOR_ENVTEST_INDEX_URL: server.indexUrl },
    });
    assert.equal(await readFile(binaries.etcd, 'utf8'), script('etcd'));
    assert.deepEqual(await envtestEntries(cache), [item]);
  });

  it('says which versions the index offers when it lacks the one asked for', async () => {
    server.served = {
      releases: { 'v1.30.0': { archive: envtestArchive() }, 'v1.31.1': { archive: envtestArchive() } },
    };
    await assert.rejects(
      downloadEnvtestBinaries({
        version: '1.29',
        env: { NESTOR_CACHE_DIR: await freshCache(), NESTOR_ENVTEST_INDEX_URL: server.indexUrl },
      }),
      (error: Error) => {
        assert.ok(error instanceof EnvtestVersionUnavailable);
        assert.match(error.message, /has no archive of 1\.29 for .* \(it offers v1\.31\.1, v1\.30\.0\)$/);
        return true;
      },
    );
  });

  it('refuses an archive without kube-apiserver', async () => {
    const cache = await freshCache();
    const archive = gzipSync(tar([{ path: 'controller-tools/envtest/etcd', data: 'x' }]));
    server.served = { releases: { 'v1.30.0': { archive } } };
    await assert.rejects(
      downloadEnvtestBinaries({
        version: '1.30.0',
        env: { NESTOR_CACHE_DIR: cache, NESTOR_ENVTEST_INDEX_URL: server.indexUrl },
      }),
      /holds no kube-apiserver: not an envtest archive/,
    );
    assert.deepEqual(await envtestEntries(cache), []);
  });

  it('gives up quickly on a server that never answers', async () => {
    const silent = createServer(() => {}); // accepts, never responds
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/envtest-releases.yaml`;
    try {
      await assert.rejects(
        downloadEnvtestBinaries({
          version: '1.30.0',
          env: { NESTOR_CACHE_DIR: await freshCache(), NESTOR_ENVTEST_INDEX_URL: url },
          timeouts: { answerMs: 200 },
        }),
        new RegExp(`^Error: cannot reach ${url.replaceAll('.', '\\.')}: no answer within 200 ms$`),
      );
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});

describe('ensureControlPlaneBinaries with envtest downloads', () => {
  let fakeGo: string;
  let closedPort: string;
  const module = kubernetesVersion();

  before(async () => {
    // A `go` that "builds" by writing stub binaries where `-o` points: the fallback, without Go.
    fakeGo = join(scratch, 'fake-go');
    await writeFile(
      fakeGo,
      [
        '#!/bin/sh',
        'if [ "$1" = version ]; then echo "go version go1.26.0 fake"; exit 0; fi',
        'while [ $# -gt 0 ]; do if [ "$1" = -o ]; then out="$2"; fi; shift; done',
        'for b in kube-apiserver kube-controller-manager kube-scheduler server; do printf "#!/bin/sh\\n" > "$out$b"; chmod +x "$out$b"; done',
      ].join('\n') + '\n',
    );
    await chmod(fakeGo, 0o755);
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    closedPort = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/envtest-releases.yaml`;
    await new Promise((resolve) => probe.close(resolve));
  });

  const envFor = async (extra: NodeJS.ProcessEnv = {}) => ({
    NESTOR_CACHE_DIR: await freshCache(),
    GO: fakeGo,
    NESTOR_ENVTEST_INDEX_URL: server.indexUrl,
    ...extra,
  });

  it("downloads the Go module's Kubernetes version by default", async () => {
    server.served = { releases: { [module]: { archive: envtestArchive() } } };
    const env = await envFor();
    const binaries = await ensureControlPlaneBinaries({ env });
    assert.equal(binaries.kubeApiServer, join(envtestCacheDir(module, envtestPlatform(), env), 'kube-apiserver'));
    assert.equal(binaries.kubeControllerManager, undefined);
  });

  it('falls back to the Go build when the index cannot be reached, saying so', async () => {
    const lines: string[] = [];
    const env = await envFor({ NESTOR_ENVTEST_INDEX_URL: closedPort });
    const started = Date.now();
    const binaries = await ensureControlPlaneBinaries({ env, onProgress: (l) => lines.push(l) });
    assert.ok(Date.now() - started < 5_000, 'the fallback should not wait for long');
    assert.equal(binaries.kubeApiServer, join(controlPlaneCacheDir(undefined, env), 'kube-apiserver'));
    assert.ok(binaries.kubeControllerManager);
    const said = lines.find((l) => l.startsWith('no prebuilt envtest binaries'));
    assert.ok(said, lines.join('\n'));
    assert.ok(said.includes(`cannot reach ${closedPort}: ECONNREFUSED`), said);
    assert.ok(said.endsWith(`building ${module} from Go modules instead`), said);
  });

  it("falls back to the Go build when the index lacks the module's version", async () => {
    server.served = { releases: { 'v1.30.0': { archive: envtestArchive() } } };
    const lines: string[] = [];
    const env = await envFor();
    const binaries = await ensureControlPlaneBinaries({ env, onProgress: (l) => lines.push(l) });
    assert.match(binaries.origin, /^Nestor's build cache /);
    assert.ok(
      lines.some((l) => l.includes(`has no archive of ${module}`)),
      lines.join('\n'),
    );
  });

  it('refuses to stand in the Go build for another version asked for', async () => {
    server.served = { releases: { 'v1.30.0': { archive: envtestArchive() } } };
    await assert.rejects(
      ensureControlPlaneBinaries({ env: await envFor({ NESTOR_ENVTEST_VERSION: '1.29.0' }) }),
      new RegExp(`has no archive of 1\\.29\\.0 .*The Go fallback builds only ${module.replaceAll('.', '\\.')}`),
    );
  });

  it('uses an asked version over a complete Go build, and the Go build otherwise', async () => {
    server.served = { releases: { 'v1.30.0': { archive: envtestArchive() } } };
    const env = await envFor({ NESTOR_CONTROLPLANE_SOURCE: 'go' });
    const built = await ensureControlPlaneBinaries({ env });
    assert.match(built.origin, /^Nestor's build cache /);
    server.requests = [];
    assert.deepEqual(
      await ensureControlPlaneBinaries({ env: { ...env, NESTOR_CONTROLPLANE_SOURCE: undefined } }),
      built,
    );
    assert.deepEqual(server.requests, [], 'a complete Go build needs no download');
    const asked = await ensureControlPlaneBinaries({
      env: { ...env, NESTOR_CONTROLPLANE_SOURCE: undefined, NESTOR_ENVTEST_VERSION: '1.30.0' },
    });
    assert.match(asked.origin, /^envtest v1\.30\.0 /);
  });

  it('builds with Go when kube-controller-manager is needed (envtest ships none)', async () => {
    server.served = { releases: { [module]: { archive: envtestArchive() } } };
    server.requests = [];
    const binaries = await ensureControlPlaneBinaries({ env: await envFor(), controllerManager: true });
    assert.ok(binaries.kubeControllerManager);
    assert.deepEqual(server.requests, []);
  });

  it('with NESTOR_CONTROLPLANE_SOURCE=download fails instead of building', async () => {
    await assert.rejects(
      ensureControlPlaneBinaries({
        env: await envFor({ NESTOR_CONTROLPLANE_SOURCE: 'download', NESTOR_ENVTEST_INDEX_URL: closedPort }),
      }),
      /cannot reach .*ECONNREFUSED/,
    );
    await assert.rejects(
      ensureControlPlaneBinaries({
        env: await envFor({ NESTOR_CONTROLPLANE_SOURCE: 'download' }),
        controllerManager: true,
      }),
      /kube-controller-manager is needed, but NESTOR_CONTROLPLANE_SOURCE=download/,
    );
  });

  it('with NESTOR_CONTROLPLANE_SOURCE=go never asks the index', async () => {
    server.requests = [];
    const binaries = await ensureControlPlaneBinaries({ env: await envFor({ NESTOR_CONTROLPLANE_SOURCE: 'go' }) });
    assert.match(binaries.origin, /^Nestor's build cache /);
    assert.deepEqual(server.requests, []);
  });

  it('refuses a source it does not know', async () => {
    await assert.rejects(
      ensureControlPlaneBinaries({ env: await envFor({ NESTOR_CONTROLPLANE_SOURCE: 'github' }) }),
      /NESTOR_CONTROLPLANE_SOURCE is "github": write auto .*, download or go/,
    );
  });
});
