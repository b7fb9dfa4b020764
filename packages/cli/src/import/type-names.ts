// The names of a version's generated types, each a function of its path in the schema: a
// type's name never depends on which other fields exist or in which order they come, so a
// field added upstream renames nothing it does not collide with. The readable name is the
// kind and the path's fields in PascalCase (`spec.issuerRef` -> `CertificateSpecIssuerRef`);
// two paths that read the same (`a-b` and `aB`) both take their exact path instead
// (`Widget_spec_a$2d$b`, `Widget_spec_aB`), and the command says so.

/** A name to resolve once every type of the version is known: its readable form and its path. */
interface Pending {
  readable: string;
  /** The property names from the root (array items and map values add none). */
  path: string[];
}

/** Type names handed out during the walk as placeholders, resolved when it ends. */
export class TypeNames {
  private readonly pending: Pending[] = [];

  constructor(private readonly kind: string) {}

  /** A placeholder for the type at `path`, resolved by `resolve()`. */
  placeholder(readable: string, path: string[]): string {
    return `\uE000${this.pending.push({ readable, path }) - 1}\uE000`;
  }

  /**
   * The final names, and a line for each group of paths that read the same. Every readable
   * name held by one path is kept; the paths that share one take their exact path.
   */
  resolve(): { names: string[]; collisions: string[] } {
    const holders = new Map<string, Pending[]>();
    for (const entry of this.pending) holders.set(entry.readable, [...(holders.get(entry.readable) ?? []), entry]);
    const collisions: string[] = [];
    for (const [readable, group] of holders) {
      if (group.length < 2) continue;
      const paths = group.map((entry) => `.${entry.path.join('.')}`);
      collisions.push(
        `${paths.join(' and ')} would both be ${readable}: named ${group.map((entry) => this.exact(entry.path)).join(' and ')}`,
      );
    }
    const names = this.pending.map((entry) =>
      holders.get(entry.readable)!.length > 1 ? this.exact(entry.path) : entry.readable,
    );
    return { names, collisions };
  }

  /**
   * The kind and each property name as it is, `_` between them, any character but a letter
   * or digit written `$<hex code>$`: one name per path. A readable name can equal it only as
   * the readable name of that same path (digits first: `.1` reads `Kind_1`), which is then
   * not in use, having collided.
   */
  private exact(path: string[]): string {
    return [this.kind, ...path.map(escapeName)].join('_');
  }
}

/** Replaces the placeholders in a text by their names. */
export function withNames(text: string, names: string[]): string {
  return text.replace(/\uE000(\d+)\uE000/g, (_, index: string) => names[Number(index)]!);
}

function escapeName(name: string): string {
  return name.replace(/[^A-Za-z0-9]/gu, (char) => `$${char.codePointAt(0)!.toString(16)}$`);
}
