// The names `nestor create api` derives from --group, --version and --kind, checked the way
// the API server checks them, so a mistake is refused before any file is written.

/** What a kind's files, classes and CRD are called. */
export interface ApiNames {
  group: string;
  version: string;
  kind: string;
  /** The resource's plural, lower case (the URL segment and the CRD's name prefix). */
  plural: string;
  /** kebab-case of the kind: the folder and file names (`cache-pool`). */
  file: string;
}

const KIND = /^[A-Z][A-Za-z0-9]*$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
const PLURAL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/** A flag's value the API server would refuse; the message says what is accepted. */
export class InvalidApiName extends Error {
  override readonly name = 'InvalidApiName';
}

export function apiNames(input: { group?: string; version?: string; kind?: string; plural?: string }): ApiNames {
  const { group, version, kind } = input;
  if (!group || !version || !kind) {
    throw new InvalidApiName(
      '--group, --version and --kind are required, e.g. --group cache.example.com --version v1alpha1 --kind Memcached',
    );
  }
  if (!KIND.test(kind)) {
    throw new InvalidApiName(
      `--kind ${JSON.stringify(kind)} is not a Kubernetes kind: PascalCase letters and digits, starting with a capital (e.g. CachePool)`,
    );
  }
  if (!VERSION.test(version)) {
    throw new InvalidApiName(
      `--version ${JSON.stringify(version)} is not a Kubernetes API version: v1, v2, v1alpha1, v1beta2, ...`,
    );
  }
  if (!DNS_SUBDOMAIN.test(group) || group.length > 253) {
    throw new InvalidApiName(
      `--group ${JSON.stringify(group)} is not a DNS subdomain with a dot: lower case, e.g. cache.example.com (a domain you own)`,
    );
  }
  const plural = input.plural ?? pluralOf(kind.toLowerCase());
  if (!PLURAL.test(plural)) {
    throw new InvalidApiName(
      `--plural ${JSON.stringify(plural)} is not a resource name: lower case letters, digits and dashes`,
    );
  }
  return { group, version, kind, plural, file: kebabCase(kind) };
}

/** English plural as kubebuilder's flect makes the common cases; --plural overrides it. */
export function pluralOf(word: string): string {
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

/** `CachePool` -> `cache-pool`, `HTTPRoute` -> `http-route`. */
export function kebabCase(kind: string): string {
  return kind
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}
