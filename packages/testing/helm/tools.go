//go:build tools

// Package helm pins the helm command that @nestor/testing runs in the chart tests
// of `nestor manifests --helm`, built from Go modules into Nestor's cache.
package helm

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
