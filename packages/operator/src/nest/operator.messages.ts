// Every start-up error a user can meet, in one place: what is wrong, where, and what to do.

export const NO_RECONCILE = (className: string) =>
  `${className} is decorated with @Controller() but has no @Reconcile() method: mark the method that reconciles one object with @Reconcile().`;

export const TWO_RECONCILES = (className: string, methods: string[]) =>
  `${className} has ${methods.length} @Reconcile() methods (${methods.join(', ')}): a controller has exactly one.`;

export const TWO_FINALIZERS = (className: string, methods: string[]) =>
  `${className} has ${methods.length} @Finalizer() methods (${methods.join(', ')}): a controller has at most one.`;

export const REQUEST_SCOPED = (className: string) =>
  `${className} is request-scoped (or depends on a request-scoped provider): controllers live as long as the application. Make it and its dependencies singletons (Scope.DEFAULT).`;

export const NO_KIND_NO_SOURCE = (className: string) =>
  `${className} has no kind and no @Source() method: pass a kind to @Controller(Kind) or add a @Source() method returning an Observable of object refs.`;

export const FINALIZER_WITHOUT_KIND = (className: string) =>
  `${className} has a @Finalizer() but no kind: finalizers need a Kubernetes object. Pass a kind to @Controller(Kind).`;

export const DUPLICATE_CONTROLLER_NAME = (name: string, classes: string[]) =>
  `two controllers are named "${name}" (${classes.join(', ')}): give one a name with @Controller(Kind, { name }).`;

export const INVALID_KIND = (className: string, detail: string) => `${className}: ${detail}`;

export const SOURCE_NOT_OBSERVABLE = (className: string, method: string) =>
  `${className}.${method}() is a @Source() but did not return an Observable: return an rxjs Observable of object refs.`;

export const RESOURCE_NOT_SERVED = (className: string, resource: string, detail: string) =>
  `${className} watches ${resource}, which the API server does not serve (${detail}). If it is a custom resource, install its CRD first (nestor manifests, or installCustomResources in development).`;

export const UNSCOPED_FINALIZER = (className: string, resource: string) =>
  `${className} has a @Finalizer() on ${resource}, a kind this application does not define, and watches it in every namespace without a label selector: the finalizer would land on every ${resource} object in the cluster, and uninstalling the operator would block their deletion. Scope the controller (the module's or @Controller's namespace, or a labelSelector), or write @Finalizer({ unscoped: true }) if every object really is yours to finalize.`;

export const WEBHOOK_WITHOUT_HANDLERS = (className: string) =>
  `${className} is decorated with @Webhook() but has no handler: mark methods with @ValidateCreate(), @ValidateUpdate(), @ValidateDelete() or @Default().`;

export const TWO_WEBHOOK_HANDLERS = (className: string, decorator: string, methods: string[]) =>
  `${className} has ${methods.length} ${decorator} methods (${methods.join(', ')}): a webhook has at most one of each.`;

export const WEBHOOK_REQUEST_SCOPED = (className: string) =>
  `${className} is request-scoped (or depends on a request-scoped provider): webhooks are served for as long as the application runs. Make it and its dependencies singletons (Scope.DEFAULT).`;

export const DUPLICATE_WEBHOOK_PATH = (path: string, classes: string[]) =>
  `${classes.join(' and ')} both serve ${path}: one @Webhook class per kind holds its validating and defaulting handlers.`;

export const CONVERSION_HUB_NOT_A_KIND = (className: string, hub: string) =>
  `${className}: @Conversion(${hub}) needs the hub's class, decorated with @CustomResource({ group, version, kind }).`;

export const CONVERSION_WITHOUT_METHODS = (className: string, hub: string) =>
  `${className} is decorated with @Conversion(${hub}) but has no conversion methods: add @ConvertToHub(Spoke) and @ConvertFromHub(Spoke) methods for each other version of the kind.`;

export const CONVERSION_TWO_MARKS = (className: string, method: string) =>
  `${className}.${method}() has several conversion decorators: one method converts one way for one version.`;

export const CONVERSION_SPOKE_NOT_A_VERSION = (className: string, decorator: string, spoke: string, detail: string) =>
  `${className}: ${decorator}(${spoke}): ${detail}`;

export const CONVERSION_TWO_METHODS = (className: string, decorator: string, methods: string[]) =>
  `${className} has ${methods.length} ${decorator} methods (${methods.join(', ')}): one per direction and version.`;

export const CONVERSION_MISSING_DIRECTION = (className: string, present: string, missing: string, signature: string) =>
  `${className} has ${present} but no ${missing}: add a method ${signature} marked ${missing}, so the version converts both ways.`;

export const CONVERSION_VERSION_WITHOUT_METHODS = (className: string, kind: string, version: string, spoke: string) =>
  `${className} converts ${kind}, whose version ${version} (${spoke}) has no conversion: add @ConvertToHub(${spoke}) and @ConvertFromHub(${spoke}) methods (every version of a kind converts through its hub).`;

export const CONVERSION_REQUEST_SCOPED = (className: string) =>
  `${className} is request-scoped (or depends on a request-scoped provider): converters are called for as long as the application runs. Make it and its dependencies singletons (Scope.DEFAULT).`;

export const TWO_CONVERSIONS = (crd: string, classes: string[]) =>
  `${classes.join(' and ')} both convert ${crd}: a kind has one hub, so one @Conversion class holds all its conversions.`;

export const NAMESPACE_AND_NAMESPACES = (className: string, where: string) =>
  `${className}: ${where} has both namespace and namespaces; give one namespace, or the list of them`;

export const TIMER_WITHOUT_KIND = (className: string, method: string) =>
  `${className}.${method}() is a @Timer, but ${className} has no kind: a timer runs on each object of the controller's kind; give @Controller a kind, or use @nestjs/schedule's @Interval for work not tied to objects`;
