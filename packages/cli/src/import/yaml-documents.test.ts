import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isEmptyDocument, parseYamlDocuments, YamlBoundsError, yamlDocuments } from './yaml-documents.js';

/** A list of small mappings: the shape the yaml package parses in more than linear time. */
function hostile(bytes: number): string {
  const item = '- name: item\n  values: [1, 2, 3]\n  nested:\n    a: b\n';
  return '# kind: CustomResourceDefinition, says a comment\nitems:\n' + item.repeat(Math.floor(bytes / item.length));
}

describe('YAML documents', () => {
  it('are split at their markers and scanned for their kind and name, without a parse', () => {
    const text = [
      '# a comment',
      'apiVersion: v1',
      'kind: Namespace',
      'metadata:',
      '  labels: {a: b}',
      '  name: tools',
      '---',
      '"kind": "ConfigMap"',
      'metadata: {namespace: x, name: settings}',
      'data:',
      '  text: |',
      '    kind: CustomResourceDefinition',
      '--- # the next one',
      'apiVersion: apiextensions.k8s.io/v1',
      'kind: CustomResourceDefinition',
      '...',
      '---',
      '# nothing but this',
    ].join('\n');
    const documents = yamlDocuments(text);
    assert.deepEqual(
      documents.map(({ kind, name, candidate }) => ({ kind, name, candidate })),
      [
        { kind: 'Namespace', name: 'tools', candidate: false },
        // The word in a value makes it a candidate: it is parsed, and then skipped as a ConfigMap.
        { kind: 'ConfigMap', name: 'settings', candidate: true },
        { kind: 'CustomResourceDefinition', name: undefined, candidate: true },
        { kind: undefined, name: undefined, candidate: false },
      ],
    );
    assert.equal(documents.map((d) => text.slice(d.start, d.end)).join(''), text);
    assert.equal(isEmptyDocument(text.slice(documents[3]!.start, documents[3]!.end)), true);
    assert.equal(isEmptyDocument(text.slice(documents[0]!.start, documents[0]!.end)), false);
  });

  it('are parsed with their values, and a syntax error says where in the whole text', async () => {
    const text =
      'kind: CustomResourceDefinition\nspec: {a: 1}\n---\nkind: CustomResourceDefinition\nspec: [1, 2\nnext: 3\n';
    const documents = yamlDocuments(text);
    assert.deepEqual(await parseYamlDocuments(text, documents.slice(0, 1)), {
      values: [{ kind: 'CustomResourceDefinition', spec: { a: 1 } }],
    });
    const failed = await parseYamlDocuments(text, documents);
    assert.ok('failure' in failed);
    assert.deepEqual(failed.failure.at, { line: 6, column: 1 });
  });

  it('are parsed within a deadline and a heap limit, whatever their shape', async () => {
    const text = hostile(4 * 1024 * 1024);
    const all = [{ start: 0, end: text.length }];
    await assert.rejects(parseYamlDocuments(text, all, { deadlineMs: 200 }), {
      name: 'YamlBoundsError',
      message: 'parsing it took more than 0.2 s',
    });
    await assert.rejects(parseYamlDocuments(text, all, { heapMb: 16 }), (error) => {
      assert.ok(error instanceof YamlBoundsError);
      assert.equal(error.message, 'parsing it took more than 16 MB');
      return true;
    });
  });
});
