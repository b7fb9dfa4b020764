import { stringify } from 'yaml';
import type { Manifest } from '@nestor/operator/manifests';
import { CHART_NAMESPACE } from './chart-placeholders.js';

/** A condition in a template: a Go template pipeline, e.g. `.Values.crd.enable`. */
export type Condition = string;

/**
 * Placeholders for template text: a string put in an object where the chart needs a
 * template expression or block, made into that text once the object is YAML.
 */
export class TemplateBlocks {
  private readonly blocks = new Map<string, (indent: number, prefix: string) => string>();
  private readonly inline = new Map<string, string>();

  /** A scalar that is the expression's value. */
  expression(pipeline: string): string {
    const token = this.token();
    this.inline.set(token, `{{ ${pipeline} }}`);
    return token;
  }

  /**
   * A list item or a map value written only when the condition holds: in its place, the
   * value's YAML between `if` and `end`.
   */
  ifThen<T>(condition: Condition, value: T): T {
    const token = this.token();
    this.blocks.set(token, (indent, prefix) => {
      const pad = ' '.repeat(indent);
      const yaml = this.escape(
        stringify(prefix.startsWith('-') ? [value] : { [prefix.slice(0, -2)]: value }, {
          lineWidth: 0,
          aliasDuplicateObjects: false,
        }),
      );
      const lines = yaml
        .trimEnd()
        .split('\n')
        .map((line) => pad + line);
      return [`{{- if ${condition} }}`, ...lines, '{{- end }}'].join('\n');
    });
    return token as T;
  }

  /** A map key whose whole line becomes the text made for its indentation. */
  raw(text: (indent: number) => string): string {
    const token = this.token();
    this.blocks.set(token, (indent) => text(indent));
    return token;
  }

  /** The object's YAML as one document of a template file, written only when the condition holds. */
  document(object: Manifest, when?: Condition): string {
    const yaml = this.escape(stringify(object, { lineWidth: 0, aliasDuplicateObjects: false }));
    return when ? `{{- if ${when} }}\n---\n${yaml}{{- end }}\n` : `---\n${yaml}`;
  }

  /** The text with every placeholder replaced. */
  expand(text: string): string {
    let out = text.replace(
      /^( *)(- |[^\s:][^:\n]*: )?(x-nestor-t\d+-x)(: ''|: "")?$/gm,
      (line, indent: string, prefix: string | undefined, token: string) => {
        const block = this.blocks.get(token);
        if (!block) return line;
        // A raw key (`token: ''`) spans its line; a list item or map value takes the prefix's place.
        return block(indent.length, prefix ?? '');
      },
    );
    out = out.replace(/x-nestor-t\d+-x/g, (token) => this.inline.get(token) ?? token);
    return out.replaceAll(CHART_NAMESPACE, '{{ .Release.Namespace }}');
  }

  /** Text of the objects is no template: what looks like an action in it is written as text. */
  private escape(yaml: string): string {
    return yaml.replaceAll('{{', '{{ "{{" }}');
  }

  private token(): string {
    return `x-nestor-t${this.blocks.size + this.inline.size}-x`;
  }
}
