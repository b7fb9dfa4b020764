// A kubeconfig read from a Secret of the management cluster: whoever may write the Secret
// chooses what the operator connects to, so it is read bounded and with inline credentials only.
import { createHash } from 'node:crypto';
import { ClusterConfig } from '@nestor/core';
import type { V1Secret } from '../../client/kinds.js';

/** A kubeconfig in a Secret is at most this large (a Secret is at most 1 MiB; a kubeconfig a few KiB). */
export const MAX_KUBECONFIG_BYTES = 256 * 1024;

/** A kubeconfig ready to engage: its parsed form, and a hash of its text that changes when it does. */
export interface InlineKubeconfig {
  kubeConfig: ClusterConfig;
  revision: string;
}

/**
 * The kubeconfig under data key `key` of `secret` (`where` names it in errors), with its
 * credentials inline (ClusterConfig.fromInline: no file paths; exec and auth providers only
 * with `allowExec`), or an Error saying why not. One over MAX_KUBECONFIG_BYTES is refused
 * before it is decoded.
 */
export function inlineKubeconfig(
  secret: V1Secret,
  key: string,
  where: string,
  allowExec: boolean,
): InlineKubeconfig | Error {
  const encoded = secret.data?.[key];
  if (encoded === undefined) return new Error(`${where} has no data key ${JSON.stringify(key)}`);
  // base64 is 4/3 of the bytes.
  if (encoded.length > (MAX_KUBECONFIG_BYTES * 4) / 3 + 4) {
    return new Error(`${where}: the kubeconfig is over ${MAX_KUBECONFIG_BYTES} bytes`);
  }
  const text = Buffer.from(encoded, 'base64').toString('utf8');
  try {
    const kubeConfig = ClusterConfig.fromInline(text, { allowExec });
    return { kubeConfig, revision: createHash('sha256').update(text).digest('hex').slice(0, 16) };
  } catch (error) {
    return new Error(`${where}: ${(error as Error).message}`, { cause: error });
  }
}
