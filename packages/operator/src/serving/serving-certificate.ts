import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import {
  refreshCertificate,
  renewalTime,
  selfSignedCertificate,
  silentLogger,
  systemClock,
  type Clock,
  type KeyPair,
  type RuntimeLogger,
} from '@nestor/core';

export type { KeyPair };

export interface ServingCertificateOptions {
  /**
   * A directory holding the certificate and its key (a mounted kubernetes.io/tls Secret, as
   * cert-manager writes one). Without it, a self-signed certificate is made in memory.
   */
  certDir?: string;
  /** File names in certDir (default tls.crt and tls.key, a TLS Secret's keys). */
  certName?: string;
  keyName?: string;
  /** Names the self-signed certificate is for (default localhost and 127.0.0.1). */
  hosts?: readonly string[];
  /** How often the files are checked for a new certificate (default 10 s). */
  pollMs?: number;
  /** The setting that names certDir, for error messages (default metrics.certDir). */
  setting?: string;
  /** Whether leaving certDir out gives a self-signed certificate, for error messages (default true). */
  selfSignedFallback?: boolean;
  clock?: Clock;
  logger?: RuntimeLogger;
}

/** A self-signed certificate is made again this long before it expires (it lasts a year). */
const RENEW_BEFORE_MS = 30 * 24 * 3600_000;

/**
 * The certificate an HTTPS server presents, kept current: files are read again when they
 * change (cert-manager rotates them in place, as controller-runtime's certwatcher expects),
 * and a self-signed one is made again before it expires. A pair that does not load (a
 * rotation half written) is logged and tried again on the next check; the old one stays.
 */
export class ServingCertificate {
  private pair: KeyPair;
  private notAfter?: Date;
  private refresh?: { stop(): void };
  private readonly clock: Clock;
  private readonly log: RuntimeLogger;

  constructor(private readonly options: ServingCertificateOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.log = options.logger ?? silentLogger;
    this.pair = options.certDir ? this.validated(this.readFiles()) : this.generate();
  }

  /** The PEM certificate and key to serve now. */
  get current(): KeyPair {
    return this.pair;
  }

  /** Where the certificate comes from, for the start-up log line. */
  get source(): string {
    return this.options.certDir ? `${this.certPath} and ${this.keyPath}` : 'a self-signed certificate made at start-up';
  }

  /** Calls `onChange` with each new pair, until stop(). */
  watch(onChange: (pair: KeyPair) => void): void {
    const pollMs = this.options.pollMs ?? 10_000;
    this.refresh = refreshCertificate({
      clock: this.clock,
      logger: this.log,
      firstMs: pollMs,
      check: () => {
        if (this.changed()) onChange(this.pair);
        return pollMs;
      },
      failed: () => pollMs,
      warning: (problem) => `keeping the current serving certificate: ${problem}`,
    });
  }

  stop(): void {
    this.refresh?.stop();
    this.refresh = undefined;
  }

  /** True when the pair changed. */
  private changed(): boolean {
    if (!this.options.certDir) {
      if (this.clock.now() < renewalTime(this.notAfter!, RENEW_BEFORE_MS)) return false;
      this.pair = this.generate();
      this.log.info('made a new self-signed serving certificate: the last one was about to expire');
      return true;
    }
    // Two small files every few seconds: comparing contents is cheap and needs no mtime.
    const files = this.readFiles();
    if (files.cert === this.pair.cert && files.key === this.pair.key) return false;
    this.pair = this.validated(files);
    this.log.info(`loaded the new serving certificate from ${this.certPath}`);
    return true;
  }

  private get certPath(): string {
    return join(this.options.certDir!, this.options.certName ?? 'tls.crt');
  }

  private get keyPath(): string {
    return join(this.options.certDir!, this.options.keyName ?? 'tls.key');
  }

  private generate(): KeyPair {
    const generated = selfSignedCertificate({
      ...(this.options.hosts ? { hosts: this.options.hosts } : {}),
      now: new Date(this.clock.now()),
    });
    this.notAfter = generated.notAfter;
    return { cert: generated.cert, key: generated.key };
  }

  private readFiles(): KeyPair {
    return {
      cert: this.readOrExplain(this.certPath),
      key: this.readOrExplain(this.keyPath),
    };
  }

  /** The pair, once TLS accepts it: a PEM certificate and the private key of its public key. */
  private validated(pair: KeyPair): KeyPair {
    try {
      createSecureContext(pair);
    } catch (error) {
      throw new Error(
        `${this.certPath} and ${this.keyPath} are not a PEM certificate and its private key (${(error as Error).message}): ` +
          `write both files together${this.fallbackHint}`,
        { cause: error },
      );
    }
    return pair;
  }

  private get fallbackHint(): string {
    return (this.options.selfSignedFallback ?? true)
      ? `, or leave ${this.options.setting ?? 'metrics.certDir'} out for a self-signed certificate`
      : '';
  }

  private readOrExplain(path: string): string {
    try {
      return readFileSync(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new Error(
        `cannot read ${path} (${code ?? (error as Error).message}): ${this.options.setting ?? 'metrics.certDir'} ${this.options.certDir!} must hold the certificate and its key ` +
          `(mount a kubernetes.io/tls Secret there, or set certName/keyName)${this.fallbackHint}`,
        { cause: error },
      );
    }
  }
}
