// Command olm-validate runs operator-framework's own bundle validators
// (github.com/operator-framework/api/pkg/validation, those `operator-sdk bundle validate`
// runs) on a bundle folder: manifests/, metadata/annotations.yaml. @nestor/testing builds it
// into Nestor's cache (olm-validator.ts) for the tests of `nestor manifests --olm`.
//
// Usage: olm-validate <bundle dir> [k8s-version]
// Prints one JSON object: the bundle as the loader read it and each validator's findings.
// Exits 0 when no validator reported an error, 1 when one did, 2 when the bundle cannot be read.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

type finding struct {
	Validator string `json:"validator"`
	Object    string `json:"object"`
	Level     string `json:"level"`
	Type      string `json:"type"`
	Field     string `json:"field,omitempty"`
	Detail    string `json:"detail"`
}

type report struct {
	Package        string    `json:"package"`
	Channels       []string  `json:"channels"`
	DefaultChannel string    `json:"defaultChannel"`
	CSV            string    `json:"csv"`
	CRDs           []string  `json:"crds"`
	Objects        []string  `json:"objects"`
	Validators     []string  `json:"validators"`
	Findings       []finding `json:"findings"`
}

// The validators by the names `operator-sdk bundle validate --select-optional name=...` gives
// them; "operatorhub/v2", "standardcapabilities" and "standardcategories" are what the
// deprecated "operatorhub" validator checked.
var validators = []struct {
	name      string
	validator interfaces.Validator
}{
	{"bundle", validation.BundleValidator},
	{"csv", validation.ClusterServiceVersionValidator},
	{"crd", validation.CustomResourceDefinitionValidator},
	{"operatorhub/v2", validation.OperatorHubV2Validator},
	{"standardcapabilities", validation.StandardCapabilitiesValidator},
	{"standardcategories", validation.StandardCategoriesValidator},
	{"good-practices", validation.GoodPracticesValidator},
}

func main() {
	if len(os.Args) < 2 || len(os.Args) > 3 {
		fmt.Fprintln(os.Stderr, "usage: olm-validate <bundle dir> [k8s-version]")
		os.Exit(2)
	}
	bundle, err := manifests.GetBundleFromDir(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot read the bundle in %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	objects := bundle.ObjectsToValidate()
	if len(os.Args) == 3 {
		objects = append(objects, map[string]string{"k8s-version": os.Args[2]})
	}
	out := report{
		Package:        bundle.Package,
		Channels:       bundle.Channels,
		DefaultChannel: bundle.DefaultChannel,
		CSV:            bundle.CSV.GetName(),
		CRDs:           []string{},
		Objects:        []string{},
		Validators:     []string{},
		Findings:       []finding{},
	}
	for _, crd := range bundle.V1CRDs {
		out.CRDs = append(out.CRDs, crd.GetName())
	}
	for _, object := range bundle.Objects {
		out.Objects = append(out.Objects, object.GetKind()+"/"+object.GetName())
	}
	failed := false
	for _, v := range validators {
		out.Validators = append(out.Validators, v.name)
		for _, result := range v.validator.Validate(objects...) {
			for _, list := range [][]errors.Error{result.Errors, result.Warnings} {
				for _, e := range list {
					if e.Level == errors.LevelError {
						failed = true
					}
					out.Findings = append(out.Findings, finding{
						Validator: v.name, Object: result.Name, Level: string(e.Level),
						Type: string(e.Type), Field: e.Field, Detail: e.Error(),
					})
				}
			}
		}
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(out); err != nil {
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}
