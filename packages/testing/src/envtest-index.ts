// The release index of controller-tools' envtest archives, as setup-envtest reads it:
//
//   releases:
//     v1.30.0:
//       envtest-v1.30.0-linux-amd64.tar.gz:
//         hash: <sha512, hex>
//         selfLink: https://github.com/kubernetes-sigs/controller-tools/releases/download/...
//
// Pure functions: parse it, and choose the archive of a version for a platform.
import { parse } from 'yaml';

/** setup-envtest's default index (controller-tools' envtest-releases.yaml). */
export const DEFAULT_ENVTEST_INDEX_URL =
  'https://raw.githubusercontent.com/kubernetes-sigs/controller-tools/HEAD/envtest-releases.yaml';

export interface EnvtestPlatform {
  os: string;
  arch: string;
}

/** One archive of the index. */
export interface EnvtestArchive {
  /** `v1.30.0` */
  version: string;
  /** `envtest-v1.30.0-linux-amd64.tar.gz` */
  name: string;
  /** sha512 of the archive, hex. */
  sha512: string;
  url: string;
  platform: EnvtestPlatform;
}

const ARCHIVE_NAME = /^envtest-(v\d+\.\d+\.\d+)-([a-z0-9]+)-([a-z0-9]+)\.tar\.gz$/;

/** The archives an index lists (entries that are not versioned envtest archives are skipped, as setup-envtest does). */
export function parseEnvtestIndex(text: string, source: string): EnvtestArchive[] {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new Error(`the envtest index at ${source} is not YAML: ${(error as Error).message}`, { cause: error });
  }
  const releases = (document as { releases?: unknown } | null)?.releases;
  if (!releases || typeof releases !== 'object') {
    throw new Error(
      `the envtest index at ${source} has no "releases" map: is it controller-tools' envtest-releases.yaml?`,
    );
  }
  const archives: EnvtestArchive[] = [];
  for (const release of Object.values(releases as Record<string, unknown>)) {
    if (!release || typeof release !== 'object') continue;
    for (const [name, entry] of Object.entries(release as Record<string, unknown>)) {
      const match = ARCHIVE_NAME.exec(name);
      const { hash, selfLink } = (entry ?? {}) as { hash?: unknown; selfLink?: unknown };
      if (!match || typeof hash !== 'string' || typeof selfLink !== 'string') continue;
      archives.push({
        version: match[1]!,
        name,
        sha512: hash.toLowerCase(),
        url: new URL(selfLink, source).href,
        platform: { os: match[2]!, arch: match[3]! },
      });
    }
  }
  return archives;
}

/** This machine as envtest names platforms (GOOS/GOARCH). */
export function envtestPlatform(platform: string = process.platform, arch: string = process.arch): EnvtestPlatform {
  const os = platform === 'win32' ? 'windows' : platform;
  const goArch = ({ x64: 'amd64', ia32: '386', ppc64: 'ppc64le' } as Record<string, string>)[arch] ?? arch;
  return { os, arch: goArch };
}

/**
 * A version selector as setup-envtest takes it: `1.30.2` or `v1.30.2` (exactly that),
 * `1.30`, `1.30.x` or `1.30.*` (the newest patch of 1.30), `latest`. The exact version it
 * names, when it names one.
 */
export function exactVersion(selector: string): string | undefined {
  const match = /^v?(\d+\.\d+\.\d+)$/.exec(selector.trim());
  return match ? `v${match[1]}` : undefined;
}

/** The archive the selector chooses for the platform: the newest that matches, or undefined. */
export function selectEnvtestArchive(
  archives: EnvtestArchive[],
  selector: string,
  platform: EnvtestPlatform,
): EnvtestArchive | undefined {
  const wanted = selector.trim();
  const minor = /^v?(\d+\.\d+)(?:\.[x*])?$/.exec(wanted)?.[1];
  const exact = exactVersion(wanted);
  if (!exact && !minor && wanted !== 'latest') {
    throw new Error(
      `cannot read the envtest version "${selector}": write it as 1.30.2, 1.30 (its newest patch) or latest`,
    );
  }
  return archives
    .filter((a) => a.platform.os === platform.os && a.platform.arch === platform.arch)
    .filter((a) => (exact ? a.version === exact : minor ? a.version.startsWith(`v${minor}.`) : true))
    .sort((a, b) => compareVersions(b.version, a.version))[0];
}

/** The versions the index offers for a platform, newest first (for error messages). */
export function offeredVersions(archives: EnvtestArchive[], platform: EnvtestPlatform): string[] {
  const versions = archives
    .filter((a) => a.platform.os === platform.os && a.platform.arch === platform.arch)
    .map((a) => a.version);
  return [...new Set(versions)].sort((a, b) => compareVersions(b, a));
}

export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.replace(/^v/, '').split('.').map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
