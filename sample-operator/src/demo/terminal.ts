// Plain output for the demo: one line per change, ANSI colours only on a terminal (and not
// with NO_COLOR), so the same run reads well in a terminal and in CI logs.
import { stripVTControlCharacters } from 'node:util';
import type { LoggerService } from '@nestjs/common';

const CODES = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 } as const;
export type Style = keyof typeof CODES;

/** Nest's start-up chatter, shown with --verbose only. */
const NEST_BOOTSTRAP = new Set(['NestFactory', 'InstanceLoader', 'NestApplicationContext']);

export class Terminal {
  readonly color: boolean;
  private readonly started = Date.now();

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {
    this.color = process.env.FORCE_COLOR ? process.env.FORCE_COLOR !== '0' : !!out.isTTY && !process.env.NO_COLOR;
  }

  paint(text: string, ...styles: Style[]): string {
    if (!this.color || styles.length === 0 || text === '') return text;
    return `\x1b[${styles.map((s) => CODES[s]).join(';')}m${text}\x1b[0m`;
  }

  /** Seconds since the demo started, right-aligned. */
  clock(): string {
    return this.paint(`${((Date.now() - this.started) / 1000).toFixed(1).padStart(5)}s`, 'dim');
  }

  line(text = ''): void {
    this.out.write(`${text}\n`);
  }

  /** A timestamped line under the current step. */
  change(label: string, text: string): void {
    const visible = stripVTControlCharacters(label).length;
    this.line(`${this.clock()}  ${label}${' '.repeat(Math.max(1, 39 - visible))}${text}`);
  }

  step(index: number, total: number, title: string): void {
    this.line();
    this.line(this.paint(`━━ ${index}/${total}  ${title}`, 'bold', 'cyan'));
  }

  ok(text: string): void {
    this.line(`${this.clock()}  ${this.paint('✔', 'green')} ${text}`);
  }

  fail(text: string): void {
    this.line(`${this.clock()}  ${this.paint('✖', 'red', 'bold')} ${this.paint(text, 'red')}`);
  }

  note(text: string): void {
    this.line(`         ${this.paint(text, 'dim')}`);
  }

  /** A Nest logger that prints the operator's own log lines, dimmed, between the view's. */
  logger(verbose: boolean): LoggerService {
    const print = (level: string, message: unknown, params: unknown[]) => {
      let context = typeof params.at(-1) === 'string' ? (params.pop() as string) : '';
      if (!verbose && NEST_BOOTSTRAP.has(context)) return;
      const fields = params.find((p): p is Record<string, unknown> => typeof p === 'object' && p !== null);
      if (typeof fields?.controller === 'string') context = fields.controller; // a reconcile's own log
      const object = fields?.name ? ` ${String(fields.name)}:` : '';
      const detail = fields?.error ?? fields?.details;
      const text = `${context ? `[${context}]` : ''}${object} ${String(message)}${detail ? ` (${String(detail)})` : ''}`;
      const style: Style[] = level === 'error' ? ['red'] : level === 'warn' ? ['yellow'] : ['dim'];
      this.line(`${this.clock()}  ${this.paint(`operator │ ${text}`, ...style)}`);
    };
    return {
      log: (message, ...params) => print('log', message, params),
      warn: (message, ...params) => print('warn', message, params),
      error: (message, ...params) => print('error', message, params),
      debug: (message, ...params) => verbose && print('debug', message, params),
      verbose: (message, ...params) => verbose && print('verbose', message, params),
    };
  }
}
