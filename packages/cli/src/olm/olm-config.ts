import { readFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { OLM_CAPABILITIES, type OlmBundleMetadata } from '@nestor/operator/manifests';
import { parse } from 'yaml';

// olm.yaml: what an OLM bundle needs that no decorator says (the names OperatorHub shows,
// who maintains the operator, its icon, capability level, version and channels), read from
// beside the project's package.json and checked, every gap named at once.

export const OLM_CONFIG_FILE = 'olm.yaml';

/** What `nestor manifests --olm` needs beyond the other flags: the bundle's folder, olm.yaml, the project's version. */
export interface OlmRequest {
  dir: string;
  config: string;
  version?: string;
}

/** The author's values a bundle cannot be made without, and what each is. */
const REQUIRED: Record<string, string> = {
  displayName: 'the name OperatorHub shows, e.g. Widget Operator',
  description: 'what the operator does, in Markdown (OperatorHub shows it on its page)',
  provider: 'who ships it: { name: Example Inc, url: https://example.com }',
  maintainers: 'who to ask: a list of { name, email }',
  icon: 'a PNG, SVG, GIF or JPEG file, beside olm.yaml: icon: icon.svg',
  capabilities: `the operator's capability level: one of ${OLM_CAPABILITIES.join(', ')}`,
  channels: 'the channels this release is in, e.g. [stable] (OLM names them stable, fast or candidate)',
  minKubeVersion: 'the oldest Kubernetes release the operator runs on, e.g. 1.31.0',
};

const ICON_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.gif': 'image/gif',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
};

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-.]+)?(\+[0-9A-Za-z-.]+)?$/;

/** An olm.yaml that is missing or wrong: the message names what and where. */
export class OlmConfigError extends Error {
  override readonly name = 'OlmConfigError';
}

/**
 * The bundle's metadata from `file` (olm.yaml), the kinds the bundle owns checked to be
 * described, the version defaulting to the project's package.json and the package to the
 * operator's name.
 */
export function readOlmConfig(
  file: string,
  defaults: { packageName: string; version?: string; kinds: readonly string[] },
): OlmBundleMetadata {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new OlmConfigError(
      `no ${file}: an OLM bundle needs values no decorator gives. Write it beside package.json (or name another ` +
        `with --olm-config), with:\n${Object.entries(REQUIRED)
          .map(([key, what]) => `  ${key}: ${what}`)
          .join('\n')}\n  kinds: for each kind, { description } (and displayName), e.g.\n` +
        defaults.kinds.map((kind) => `    ${kind}: { description: ... }`).join('\n') +
        '\n(docs/upgrades.md, "Shipping with OLM")',
    );
  }
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    throw new OlmConfigError(`${file} is not YAML: ${(error as Error).message}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new OlmConfigError(`${file} must be a YAML mapping of the bundle's values (displayName, description, ...)`);
  const config = raw as Record<string, unknown>;
  const problems: string[] = [];
  for (const [key, what] of Object.entries(REQUIRED)) {
    const value = config[key];
    if (value === undefined || value === null || value === '' || (Array.isArray(value) && !value.length))
      problems.push(`${key} is missing: ${what}`);
  }
  const described = (config.kinds ?? {}) as Record<string, { description?: unknown; displayName?: unknown }>;
  for (const kind of defaults.kinds) {
    if (typeof described[kind]?.description !== 'string' || !described[kind].description)
      problems.push(`kinds.${kind}.description is missing: what a ${kind} is, for OperatorHub's list of its APIs`);
  }
  const version = config.version ?? defaults.version;
  if (typeof version !== 'string' || !SEMVER.test(version))
    problems.push(
      version === undefined
        ? 'version is missing, and package.json has none: the release, e.g. 1.2.0'
        : `version ${String(version)} is not a semantic version such as 1.2.0`,
    );
  if (typeof config.minKubeVersion === 'string' && !SEMVER.test(config.minKubeVersion))
    problems.push(`minKubeVersion ${config.minKubeVersion} is not a version such as 1.31.0`);
  if (config.capabilities !== undefined && !(OLM_CAPABILITIES as readonly unknown[]).includes(config.capabilities))
    problems.push(`capabilities ${String(config.capabilities)} is not one of ${OLM_CAPABILITIES.join(', ')}`);
  const provider = config.provider as { name?: unknown } | undefined;
  if (provider !== undefined && (typeof provider !== 'object' || typeof provider.name !== 'string'))
    problems.push('provider must be { name, url }: who ships the operator');
  const maintainers = config.maintainers;
  if (
    maintainers !== undefined &&
    (!Array.isArray(maintainers) ||
      maintainers.some(
        (m: { name?: unknown; email?: unknown }) => typeof m?.name !== 'string' || typeof m.email !== 'string',
      ))
  )
    problems.push('maintainers must be a list of { name, email }');
  const channels = config.channels;
  if (channels !== undefined && (!Array.isArray(channels) || channels.some((c) => typeof c !== 'string')))
    problems.push('channels must be a list of channel names, e.g. [stable]');
  if (config.defaultChannel !== undefined && Array.isArray(channels) && !channels.includes(config.defaultChannel))
    problems.push(`defaultChannel ${String(config.defaultChannel)} is not one of channels`);
  let icon: OlmBundleMetadata['icon'] | undefined;
  if (typeof config.icon === 'string') {
    const path = resolve(dirname(file), config.icon);
    const mediatype = ICON_TYPES[extname(path).toLowerCase()];
    if (!mediatype) problems.push(`icon ${config.icon} is not a .png, .svg, .gif or .jpeg file`);
    else {
      try {
        icon = { base64data: readFileSync(path).toString('base64'), mediatype };
      } catch {
        problems.push(`icon ${config.icon}: no such file beside ${file} (${path})`);
      }
    }
  } else if (config.icon !== undefined) problems.push('icon must name a file beside olm.yaml, e.g. icon: icon.svg');
  if (problems.length)
    throw new OlmConfigError(`${file} cannot make an OLM bundle:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  const optional = <K extends keyof OlmBundleMetadata>(key: K) =>
    config[key] !== undefined ? { [key]: config[key] as OlmBundleMetadata[K] } : {};
  return {
    packageName: typeof config.package === 'string' ? config.package : defaults.packageName,
    version: version as string,
    displayName: config.displayName as string,
    description: config.description as string,
    provider: config.provider as OlmBundleMetadata['provider'],
    maintainers: maintainers as OlmBundleMetadata['maintainers'],
    icon: icon!,
    capabilities: config.capabilities as OlmBundleMetadata['capabilities'],
    channels: channels as string[],
    minKubeVersion: config.minKubeVersion as string,
    kinds: Object.fromEntries(
      defaults.kinds.map((kind) => [
        kind,
        {
          description: described[kind]!.description as string,
          ...(typeof described[kind]!.displayName === 'string' ? { displayName: described[kind]!.displayName } : {}),
        },
      ]),
    ),
    ...optional('summary'),
    ...optional('defaultChannel'),
    ...optional('categories'),
    ...optional('keywords'),
    ...optional('links'),
    ...optional('maturity'),
    ...optional('replaces'),
    ...optional('skipRange'),
    ...optional('examples'),
    ...optional('repository'),
  };
}

/** olm.yaml beside the project's package.json, and that package.json's version. */
export function olmConfigNear(project: string | undefined): { file?: string; version?: string } {
  if (!project) return {};
  let version: string | undefined;
  try {
    version = (JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { version?: string }).version;
  } catch {
    version = undefined;
  }
  return { file: join(project, OLM_CONFIG_FILE), ...(version ? { version } : {}) };
}
