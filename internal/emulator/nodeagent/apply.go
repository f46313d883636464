package nodeagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// addonsFieldManager is the field manager gpucluster-addons.service applies with
// (internal/bootstrap's addons script: kubectl apply --server-side --field-manager=...).
const addonsFieldManager = "gpucluster-addons"

// applyPasses and applyPause bound the retries of objects that fail: the control plane's
// script retries the whole apply (60 times, 10 s apart) so that a custom resource applied
// before its CRD is established goes in on a later pass, and Kueue's queues once its manager
// answers the webhooks the same file registered (manifests.AddonKueue); the agent retries only
// what failed, as many times, closer together.
const (
	applyPasses = 60
	applyPause  = 2 * time.Second
)

type addonObject struct {
	file string
	obj  *unstructured.Unstructured
	err  error // of the last attempt
}

// ApplyAddons applies every object of every file, in file order and document order, with
// server-side apply and forced conflicts, as the control plane's add-on unit does.
func (k *clientKube) ApplyAddons(ctx context.Context, addons []Addon) []AddonResult {
	var results []AddonResult
	var pending []addonObject
	for _, a := range addons {
		objs, err := decodeManifest(a.YAML)
		if err != nil {
			results = append(results, AddonResult{File: a.Name, Object: "(file)", Error: err.Error()})
		}
		for _, o := range objs {
			pending = append(pending, addonObject{file: a.Name, obj: o})
		}
	}
	for pass := 0; pass < applyPasses && len(pending) > 0 && ctx.Err() == nil; pass++ {
		if pass > 0 {
			k.mapper.Reset() // CRDs applied on the last pass are served now
			select {
			case <-ctx.Done():
			case <-time.After(applyPause):
			}
		}
		var next []addonObject
		for _, o := range pending {
			if o.err = k.apply(ctx, o.obj); o.err != nil {
				next = append(next, o)
				continue
			}
			results = append(results, AddonResult{File: o.file, Object: describeObject(o.obj)})
		}
		pending = next
	}
	for _, o := range pending {
		if o.err == nil { // never tried: the context ended first
			o.err = ctx.Err()
		}
		results = append(results, AddonResult{File: o.file, Object: describeObject(o.obj), Error: o.err.Error()})
	}
	return results
}

func (k *clientKube) apply(ctx context.Context, obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()
	mapping, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: addonsFieldManager, Force: &force}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		_, err = k.dyn.Resource(mapping.Resource).Namespace(ns).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
		return err
	}
	_, err = k.dyn.Resource(mapping.Resource).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	return err
}

// decodeManifest reads a multi-document YAML (or JSON) manifest; lists are expanded.
func decodeManifest(doc string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(doc)), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, fmt.Errorf("not a YAML manifest: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return out, err
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		out = append(out, u)
	}
}

func describeObject(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return o.GetKind() + " " + ns + "/" + o.GetName()
	}
	return o.GetKind() + " " + o.GetName()
}
