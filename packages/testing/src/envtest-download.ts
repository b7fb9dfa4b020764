// Prebuilt control-plane binaries, fetched as controller-runtime's setup-envtest fetches
// them: controller-tools' release index names one archive per version and platform with
// its sha512; the archive (controller-tools/envtest/{etcd,kube-apiserver,kubectl}) is
// downloaded, checked against that hash before anything is unpacked, and unpacked into
// the cache. The cache entry appears by one rename of a complete folder, so a failed or
// interrupted download never leaves a half-written entry behind.
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { acquireLock, isAlive, nestorCacheRoot } from './download-cache.js';
import type { ControlPlaneBinaries } from './binary-paths.js';
import {
  DEFAULT_ENVTEST_INDEX_URL,
  envtestPlatform,
  exactVersion,
  offeredVersions,
  parseEnvtestIndex,
  selectEnvtestArchive,
  type EnvtestArchive,
  type EnvtestPlatform,
} from './envtest-index.js';
import { extractTarGz } from './tar-extract.js';

export interface EnvtestDownloadOptions {
  /** Version selector: 1.30.2, 1.30 (newest patch), latest. */
  version: string;
  /** The release index (default: NESTOR_ENVTEST_INDEX_URL, else controller-tools'). */
  indexUrl?: string;
  env?: NodeJS.ProcessEnv;
  platform?: EnvtestPlatform;
  onProgress?: (line: string) => void;
  /**
   * Bound on each request's answer (connecting, TLS, the response's headers), so an
   * unreachable network fails fast; and on silence while a body streams.
   */
  timeouts?: { answerMs?: number; idleMs?: number };
}

/** The index does not offer the version asked for on this platform. */
export class EnvtestVersionUnavailable extends Error {
  constructor(
    readonly version: string,
    readonly offered: string[],
    message: string,
  ) {
    super(message);
    this.name = 'EnvtestVersionUnavailable';
  }
}

const ANSWER_MS = 5_000;
const IDLE_MS = 30_000;

/** Where envtest archives are unpacked: `<cache>/envtest/<version>-<os>-<arch>/`. */
export function envtestCacheDir(version: string, platform: EnvtestPlatform, env = process.env): string {
  return join(nestorCacheRoot(env), 'envtest', `${version}-${platform.os}-${platform.arch}`);
}

/**
 * The envtest binaries of a version, from the cache, else downloaded into it. Throws
 * (and leaves the cache as it was) when the index or the archive cannot be fetched, the
 * version is not offered, or the archive's sha512 is not the index's.
 */
export async function downloadEnvtestBinaries(options: EnvtestDownloadOptions): Promise<ControlPlaneBinaries> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? envtestPlatform();
  const progress = options.onProgress ?? (() => {});
  const timeouts = { answerMs: options.timeouts?.answerMs ?? ANSWER_MS, idleMs: options.timeouts?.idleMs ?? IDLE_MS };
  const indexUrl = options.indexUrl ?? env.NESTOR_ENVTEST_INDEX_URL ?? DEFAULT_ENVTEST_INDEX_URL;

  // An exact version already unpacked needs no network at all.
  const exact = exactVersion(options.version);
  if (exact) {
    const cached = await readCached(envtestCacheDir(exact, platform, env));
    if (cached) return cached;
  }

  const archives = parseEnvtestIndex(await fetchText(indexUrl, timeouts), indexUrl);
  const archive = selectEnvtestArchive(archives, options.version, platform);
  if (!archive) {
    const offered = offeredVersions(archives, platform);
    throw new EnvtestVersionUnavailable(
      options.version,
      offered,
      `the envtest index ${indexUrl} has no archive of ${options.version} for ${platform.os}/${platform.arch}` +
        (offered.length ? ` (it offers ${offered.slice(0, 8).join(', ')}${offered.length > 8 ? ', ...' : ''})` : ''),
    );
  }
  const dir = envtestCacheDir(archive.version, platform, env);
  const cached = await readCached(dir);
  if (cached) return cached;

  const root = join(nestorCacheRoot(env), 'envtest');
  await mkdir(root, { recursive: true });
  await removeAbandoned(root);
  const release = await acquireLock(`${dir}.lock`, progress, `downloading ${archive.name}`);
  try {
    const again = await readCached(dir);
    if (again) return again; // another process downloaded it while we waited
    return await install(archive, dir, root, timeouts, progress);
  } finally {
    await release();
  }
}

async function install(
  archive: EnvtestArchive,
  dir: string,
  root: string,
  timeouts: Required<NonNullable<EnvtestDownloadOptions['timeouts']>>,
  progress: (line: string) => void,
): Promise<ControlPlaneBinaries> {
  // Dot-named, with our pid: never mistaken for an entry, and removable once we are gone.
  const part = join(root, `.${basename(dir)}.${process.pid}.part`);
  const staging = join(root, `.${basename(dir)}.${process.pid}.staging`);
  const started = Date.now();
  try {
    progress(`downloading ${archive.name} from ${archive.url}`);
    const { bytes, sha512 } = await download(archive.url, part, timeouts);
    if (sha512 !== archive.sha512) {
      throw new Error(
        `checksum mismatch for ${archive.name} from ${archive.url}: sha512 ${sha512} (computed) != ${archive.sha512} (the index's); ` +
          `nothing was installed. A proxy may have altered the download, or the index is wrong: retry, or set KUBEBUILDER_ASSETS.`,
      );
    }
    await mkdir(staging);
    const written = await extractTarGz(part, staging, (path) => {
      const name = basename(path);
      return /^(kube-apiserver|etcd|kubectl)(\.exe)?$/.test(name) ? name : undefined;
    });
    const suffix = archive.platform.os === 'windows' ? '.exe' : '';
    for (const name of ['kube-apiserver', 'etcd']) {
      if (!written.includes(name + suffix)) throw new Error(`${archive.name} holds no ${name}: not an envtest archive`);
    }
    const marker = { version: archive.version, archive: archive.name, url: archive.url, sha512, bytes, files: written };
    await writeFile(
      join(staging, 'complete'),
      JSON.stringify({ ...marker, downloadedAt: new Date().toISOString() }) + '\n',
    );
    await rm(dir, { recursive: true, force: true }); // an incomplete folder left by hand
    await rename(staging, dir);
    progress(`${archive.name} (${(bytes / 1e6).toFixed(1)} MB) verified and unpacked in ${Date.now() - started} ms`);
  } finally {
    await rm(part, { force: true });
    await rm(staging, { recursive: true, force: true });
  }
  return (await readCached(dir))!;
}

/** The binaries of a complete cache entry, or undefined. */
async function readCached(dir: string): Promise<ControlPlaneBinaries | undefined> {
  const text = await readFile(join(dir, 'complete'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const marker = JSON.parse(text) as { version: string; archive: string; url: string };
  const exe = existsSync(join(dir, 'kube-apiserver.exe')) ? '.exe' : '';
  return {
    kubeApiServer: join(dir, `kube-apiserver${exe}`),
    etcd: join(dir, `etcd${exe}`),
    ...(existsSync(join(dir, `kubectl${exe}`)) ? { kubectl: join(dir, `kubectl${exe}`) } : {}),
    origin: `envtest ${marker.version} (${marker.archive}, sha512 verified) in ${dir}`,
  };
}

/** Removes what downloads of processes that died (SIGKILL, a power cut) left behind. */
async function removeAbandoned(root: string): Promise<void> {
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const pid = /^\..+\.(\d+)\.(part|staging)$/.exec(name)?.[1];
    if (pid && Number(pid) !== process.pid && !isAlive(Number(pid))) {
      await rm(join(root, name), { recursive: true, force: true });
    }
  }
}

/**
 * A GET whose answer (connection, TLS, headers) must come within `answerMs`, and whose body
 * may not stall for longer than `idleMs`. Errors name the URL and the network's reason.
 */
async function get(url: string, timeouts: { answerMs: number; idleMs: number }) {
  const controller = new AbortController();
  let timer = setTimeout(
    () => controller.abort(new Error(`no answer within ${timeouts.answerMs} ms`)),
    timeouts.answerMs,
  );
  let response: Response;
  try {
    response = await fetch(url, { signal: controller.signal, redirect: 'follow' });
  } catch (error) {
    clearTimeout(timer);
    throw new Error(`cannot reach ${url}: ${reason(error, controller.signal)}`, { cause: error });
  }
  clearTimeout(timer);
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel();
    throw new Error(`GET ${url} answered ${response.status} ${response.statusText}`);
  }
  const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  /** The body, aborted when no byte arrives for idleMs. */
  const watched = body.pipe(
    new Transform({
      transform(chunk, _encoding, done) {
        timer.refresh();
        done(null, chunk);
      },
      flush(done) {
        clearTimeout(timer);
        done();
      },
    }),
  );
  body.on('error', (error) => watched.destroy(new Error(`reading ${url}: ${reason(error, controller.signal)}`)));
  timer = setTimeout(() => controller.abort(new Error(`no data for ${timeouts.idleMs} ms`)), timeouts.idleMs);
  watched.on('close', () => clearTimeout(timer));
  return watched;
}

async function fetchText(url: string, timeouts: { answerMs: number; idleMs: number }): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of await get(url, timeouts)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Streams the body into `path`, hashing it on the way (sha512, hex). */
async function download(url: string, path: string, timeouts: { answerMs: number; idleMs: number }) {
  const body = await get(url, timeouts);
  const hash = createHash('sha512');
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(body, count, createWriteStream(path, { flags: 'wx' }));
  return { bytes, sha512: hash.digest('hex') };
}

function reason(error: unknown, signal: AbortSignal): string {
  if (signal.aborted && signal.reason instanceof Error) return signal.reason.message;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ? `${cause.code} ${cause.message ?? ''}`.trim() : (error as Error).message;
}
