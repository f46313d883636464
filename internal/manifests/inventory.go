package manifests

import (
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// Workload is one object of the add-on set that runs containers: where it lives and which
// images it runs. The guide "What runs on the cluster after apply" is built from these, read back
// from the rendered YAML, so it lists what is applied and not what someone remembered to write.
type Workload struct {
	File, Kind, Namespace, Name string
	Images                      []string
}

// Inventory renders the add-ons and returns every object that runs containers, in apply order.
func Inventory(o Options, a AddonOptions) ([]Workload, error) {
	files, err := Addons(o, a)
	if err != nil {
		return nil, err
	}
	var out []Workload
	for _, f := range files {
		for _, d := range f.Docs {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(d.YAML), &obj); err != nil {
				return nil, fmt.Errorf("%s %s: %w", f.Name, d.ID(), err)
			}
			var imgs []string
			collectImages(obj, &imgs)
			if len(imgs) == 0 {
				continue
			}
			slices.Sort(imgs)
			out = append(out, Workload{File: f.Name, Kind: d.Kind, Namespace: d.Namespace, Name: d.Name, Images: slices.Compact(imgs)})
		}
	}
	return out, nil
}

// collectImages finds every container's image, wherever the pod template sits in the object
// (Deployment, DaemonSet, Job, CronJob, PodTemplate; containers and init containers).
func collectImages(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for _, key := range []string{"containers", "initContainers"} {
			if cs, ok := t[key].([]any); ok {
				for _, c := range cs {
					if m, ok := c.(map[string]any); ok {
						if img, ok := m["image"].(string); ok {
							*out = append(*out, img)
						}
					}
				}
			}
		}
		for k, child := range t {
			if k != "containers" && k != "initContainers" {
				collectImages(child, out)
			}
		}
	case []any:
		for _, child := range t {
			collectImages(child, out)
		}
	}
}
