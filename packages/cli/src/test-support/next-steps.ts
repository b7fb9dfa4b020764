// What a user does next to a kind `nestor create api` wrote, for the scaffolding e2e tests:
// its controller owns a kind another project defines (imported with `nestor import crd`,
// whose CRD no other test installs), and the kind gets a second version, stored, with the
// first marked `storage: false` and a converter between them. The generated e2e test must
// pass on with both (its CRDs: every version loaded, and those vendored in src/kinds).
import { randomBytes } from 'node:crypto';

/** A CRD of a group no other test uses: installed only if the app's tests install it. */
export function importableCrd(): { group: string; yaml: string } {
  const group = `i${randomBytes(4).toString('hex')}.scaffold.nestor.dev`;
  const yaml = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList }
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: integer }
`;
  return { group, yaml };
}

/** The controller's source with `owns: [Gizmo]`, imported from where `nestor import crd` wrote it. */
export function withOwnedImport(controller: string, kind: string, gizmoImport: string): string {
  const decorator = `@Controller(${kind})`;
  if (!controller.includes(decorator)) throw new Error(`the controller has no "${decorator}"`);
  return `import { Gizmo } from '${gizmoImport}';\n${controller.replace(decorator, `@Controller(${kind}, { owns: [Gizmo] })`)}`;
}

/** The first version's source, marked `storage: false`. */
export function notStored(resource: string): string {
  const scope = "scope: 'Namespaced',";
  if (!resource.includes(scope)) throw new Error(`the resource has no "${scope}"`);
  return resource.replace(scope, `${scope}\n  storage: false,`);
}

/** `<Kind>V2` (version v2, stored) of the same shape, in `<file>-v2.resource.ts`. */
export function secondVersionSource(kind: string, group: string, resourceImport: string): string {
  return `import { CustomResource, Field, type ObjectMeta } from '@nestor/operator';
import { ${kind}Spec, ${kind}Status } from '${resourceImport}';

@CustomResource({ group: '${group}', version: 'v2', kind: '${kind}', scope: 'Namespaced', subresources: { status: {} } })
export class ${kind}V2 {
  apiVersion?: string;
  kind?: string;
  metadata!: ObjectMeta;

  @Field(() => ${kind}Spec)
  spec!: ${kind}Spec;

  @Field(() => ${kind}Status, { required: false })
  status?: ${kind}Status;
}
`;
}

/** The converter between them, v2 the hub, in `<file>.conversion.ts`. */
export function conversionSource(kind: string, resourceImport: string, v2Import: string): string {
  return `import { Conversion, ConvertFromHub, ConvertToHub } from '@nestor/operator';
import { ${kind} } from '${resourceImport}';
import { ${kind}V2 } from '${v2Import}';

@Conversion(${kind}V2)
export class ${kind}Conversion {
  @ConvertToHub(${kind})
  toHub(object: ${kind}): Pick<${kind}V2, 'spec' | 'status'> {
    return { spec: object.spec, status: object.status };
  }

  @ConvertFromHub(${kind})
  fromHub(object: ${kind}V2): Pick<${kind}, 'spec' | 'status'> {
    return { spec: object.spec, status: object.status };
  }
}
`;
}

/** The kind's module source with the converter imported and provided. */
export function withConversionProvider(moduleSource: string, kind: string, conversionImport: string): string {
  const providers = `providers: [${kind}Controller`;
  if (!moduleSource.includes(providers)) throw new Error(`the module has no "${providers}" to add the converter to`);
  return `import { ${kind}Conversion } from '${conversionImport}';\n${moduleSource.replace(providers, `providers: [${kind}Conversion, ${kind}Controller`)}`;
}
