// What the objects of a chart are made with where the release gives the value: the
// placeholders' text, replaced once the objects are YAML.

/** The namespace the objects are made for: it becomes the release's namespace. */
export const CHART_NAMESPACE = 'x-nestor-chart-namespace-x';
/** The image the objects are made with: it becomes the image of the values (image.repository, tag, digest). */
export const CHART_IMAGE = 'x-nestor-chart-image-x';
