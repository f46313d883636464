// Package manifests builds the Kubernetes objects a GPU cluster needs after its nodes join:
// the NVIDIA device plugin, dcgm-exporter, a training pod template with anti-affinity and a
// liveness probe that means something, an idle-workload reaper, GPU-utilisation autoscaling
// through prometheus-adapter, and validation jobs (nccl-tests per node, an all-reduce across the
// pool's nodes, HPCG). Objects are k8s.io/api
// types rendered with sigs.k8s.io/yaml, never string templates. Pure Go: no I/O, no Terraform
// types.
package manifests

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Defaults.
const (
	DefaultNamespace         = "gpu-system"
	DefaultWorkloadNamespace = "gpu-workloads"
	// DefaultMaxRuntime is the cluster's target "idle jobs reclaimed after 72 h"
	// (internal/catalog/SOURCES.md section 2).
	DefaultMaxRuntime = 72 * time.Hour
	// ReapLabel opts a workload in to the reaper: pods labelled ReapLabel=true are reclaimed
	// after MaxRuntime.
	ReapLabel = "gpucluster.io/reap-after-max-runtime"
	// ReplicaGroupLabel groups the replicas of one training job for anti-affinity.
	ReplicaGroupLabel = "gpucluster.io/replica-group"
	// GPUUtilMetric is the per-pod metric prometheus-adapter serves from DCGM_FI_DEV_GPU_UTIL.
	GPUUtilMetric = "gpu_utilization"
	// GPUUtilPoolMetric is the pool-wide external metric.
	GPUUtilPoolMetric = "gpu_pool_utilization"
	// HeartbeatFile is what the training liveness probe checks; the training loop touches it.
	HeartbeatFile = "/var/run/gpucluster/heartbeat"
)

// Images are the container images a user may override one by one (a newer tag, another build);
// ImagesIn takes them from the project's one table of pinned images, internal/images, in the
// cluster's image registry.
type Images struct {
	DevicePlugin string
	DCGMExporter string
	NCCLTests    string
	HPCG         string
	Reaper       string
	// PyTorch runs the cross-node all-reduce: torchrun, torch with CUDA and NCCL, python3.
	PyTorch string
}

// DefaultImages returns the pinned images of internal/images from their upstream registries.
func DefaultImages() Images { return ImagesIn("") }

// ImagesIn returns the pinned images of internal/images in registry (images.MirrorName; "" is the
// upstream registries).
func ImagesIn(registry string) Images {
	return Images{
		DevicePlugin: images.RefIn(images.DevicePlugin, registry),
		DCGMExporter: images.RefIn(images.DCGMExporter, registry),
		NCCLTests:    images.RefIn(images.NCCLTests, registry),
		HPCG:         images.RefIn(images.HPCG, registry),
		Reaper:       images.RefIn(images.Reaper, registry),
		PyTorch:      images.RefIn(images.PyTorch, registry),
	}
}

// HPA configures autoscaling of one Deployment on GPU utilisation.
type HPA struct {
	Deployment  string
	MinReplicas int32
	MaxReplicas int32
	// TargetPercent is the average GPU utilisation to hold; 0 means the scenario's alert
	// threshold, so the autoscaler removes replicas before the low-utilisation alert fires.
	TargetPercent int
}

// Options describe the pool the manifests are for.
type Options struct {
	Scenario          string
	Namespace         string
	WorkloadNamespace string
	Nodes             int
	GPUsPerNode       int
	ERDMA             bool
	NCCLEnv           map[string]string
	MaxRuntime        time.Duration
	// MinBusBandwidthGBs fails the nccl-tests job when all_reduce_perf's average bus bandwidth
	// is below it; 0 reports only.
	MinBusBandwidthGBs float64
	// MinCrossNodeBusBandwidthGBs fails the cross-node all-reduce when its bus bandwidth at the
	// largest message size is below it; 0 reports only. A separate threshold: across nodes the
	// bus bandwidth is bounded by one node's network (12.5 GB/s at 100 Gbit/s), within a node by
	// NVLink (hundreds of GB/s), so no one number fits both.
	MinCrossNodeBusBandwidthGBs float64
	HPA                         *HPA
	// ImageRegistry is where every image is pulled from, by the rule of internal/images
	// (registry.go): <registry>/<last element of the repository>:<tag>@<digest>. "" is the
	// upstream registries. Images set one by one in Images are used as given.
	ImageRegistry string
	Images        Images
}

// Document is one rendered object.
type Document struct {
	APIVersion, Kind, Namespace, Name string
	YAML                              string
}

// ID is apiVersion/kind/namespace/name, unique within a render.
func (d Document) ID() string {
	return strings.Join([]string{d.APIVersion, d.Kind, d.Namespace, d.Name}, "/")
}

// IsSimulation reports whether a scenario is one of the simulation pools (HPCG validation).
func IsSimulation(scenario string) bool {
	return scenario == catalog.ScenarioMolecularDynamics || scenario == catalog.ScenarioEngineeringSimulation
}

var imageRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9._-]+)*(:[A-Za-z0-9_.-]{1,128})?(@sha256:[0-9a-f]{64})?$`)

// withDefaults validates and fills Options.
func withDefaults(o Options) (Options, catalog.Scenario, error) {
	sc, err := catalog.LookupScenario(o.Scenario)
	if err != nil {
		return o, sc, planerr.Input("scenario", o.Scenario, "is not a scenario", "use one of "+strings.Join(catalog.ScenarioNames(), ", "))
	}
	o.Scenario = sc.Name
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.WorkloadNamespace == "" {
		o.WorkloadNamespace = DefaultWorkloadNamespace
	}
	for field, ns := range map[string]string{"namespace": o.Namespace, "workload_namespace": o.WorkloadNamespace} {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return o, sc, planerr.Input(field, ns, "is not a namespace name: "+strings.Join(errs, "; "), "use lower case letters, digits and '-', such as gpu-system")
		}
	}
	if o.Nodes < 1 {
		return o, sc, planerr.Input("node_count", fmt.Sprint(o.Nodes), "is below 1", "give the number of GPU nodes in the pool")
	}
	if o.GPUsPerNode < 1 || o.GPUsPerNode > 16 {
		return o, sc, planerr.Input("gpus_per_node", fmt.Sprint(o.GPUsPerNode), "is not between 1 and 16", "give the GPU count of the pool's instance type")
	}
	if o.MaxRuntime == 0 {
		o.MaxRuntime = DefaultMaxRuntime
	}
	if o.MaxRuntime < time.Hour {
		return o, sc, planerr.Input("max_runtime", o.MaxRuntime.String(), "is under one hour, which would reclaim ordinary jobs", "use a duration such as 72h (the default)")
	}
	if o.MinBusBandwidthGBs < 0 {
		return o, sc, planerr.Input("min_bus_bandwidth_gbs", fmt.Sprint(o.MinBusBandwidthGBs), "is negative", "use 0 to report only, or the expected GB/s")
	}
	if o.MinCrossNodeBusBandwidthGBs < 0 {
		return o, sc, planerr.Input("min_cross_node_bus_bandwidth_gbs", fmt.Sprint(o.MinCrossNodeBusBandwidthGBs), "is negative", "use 0 to report only, or the expected GB/s")
	}
	if err := images.CheckRegistry("image_registry", o.ImageRegistry); err != nil {
		return o, sc, err
	}
	d := ImagesIn(o.ImageRegistry)
	for _, img := range []struct {
		field string
		v     *string
		def   string
	}{{"images.device_plugin", &o.Images.DevicePlugin, d.DevicePlugin}, {"images.dcgm_exporter", &o.Images.DCGMExporter, d.DCGMExporter},
		{"images.nccl_tests", &o.Images.NCCLTests, d.NCCLTests}, {"images.hpcg", &o.Images.HPCG, d.HPCG}, {"images.reaper", &o.Images.Reaper, d.Reaper},
		{"images.pytorch", &o.Images.PyTorch, d.PyTorch}} {
		if *img.v == "" {
			*img.v = img.def
		}
		if !imageRE.MatchString(*img.v) {
			return o, sc, planerr.Input(img.field, *img.v, "is not an image reference", "use registry/repository:tag, such as "+img.def)
		}
	}
	env := bootstrap.ResolvedNCCLEnv(o.ERDMA, o.NCCLEnv)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if errs := validation.IsEnvVarName(k); len(errs) > 0 {
			return o, sc, planerr.Input(planerr.Key("nccl_env", k), k, "is not an environment variable name", "use upper case letters, digits and _")
		}
	}
	o.NCCLEnv = env
	if h := o.HPA; h != nil {
		if errs := validation.IsDNS1123Subdomain(h.Deployment); len(errs) > 0 {
			return o, sc, planerr.Input("hpa.deployment", h.Deployment, "is not a Deployment name", "give the name of the Deployment to scale")
		}
		if h.MinReplicas < 1 || h.MaxReplicas < h.MinReplicas {
			return o, sc, planerr.Input("hpa", fmt.Sprintf("%d..%d", h.MinReplicas, h.MaxReplicas), "is not a replica range with 1 <= min <= max", "such as min_replicas = 1, max_replicas = 4")
		}
		if h.TargetPercent == 0 {
			h2 := *h
			h2.TargetPercent = sc.GPUUtilAlertPercent
			o.HPA = &h2
		}
		if o.HPA.TargetPercent < 1 || o.HPA.TargetPercent > 100 {
			return o, sc, planerr.Input("hpa.target_gpu_util_percent", fmt.Sprint(o.HPA.TargetPercent), "is not a percentage", "use 1 to 100, or leave unset for the scenario's threshold")
		}
	}
	return o, sc, nil
}

// object is what every k8s.io/api object offers here.
type object interface {
	GetName() string
	GetNamespace() string
}

func document(gvk schema.GroupVersionKind, obj object) (Document, error) {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return Document{}, fmt.Errorf("encoding %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return Document{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), YAML: string(b)}, nil
}

// Render builds every object for the pool, in apply order (namespaces and RBAC first).
func Render(o Options) ([]Document, error) {
	o, sc, err := withDefaults(o)
	if err != nil {
		return nil, err
	}
	var objs []object
	objs = append(objs, namespaces(o)...)
	objs = append(objs, devicePlugin(o), dcgmExporter(o), dcgmService(o))
	objs = append(objs, trainingTemplate(o))
	objs = append(objs, reaper(o)...)
	adapter, err := adapterConfigMap(o)
	if err != nil {
		return nil, err
	}
	objs = append(objs, adapter)
	if o.HPA != nil {
		objs = append(objs, hpa(o))
	}
	objs = append(objs, ncclTests(o)...)
	objs = append(objs, poolAllReduce(o)...)
	if IsSimulation(sc.Name) {
		objs = append(objs, hpcg(o))
	}
	return documents(objs)
}

func documents(objs []object) ([]Document, error) {
	docs := make([]Document, 0, len(objs))
	for _, obj := range objs {
		gvk, err := kindOf(obj)
		if err != nil {
			return nil, err
		}
		d, err := document(gvk, obj)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// Join renders documents as one multi-document YAML stream.
func Join(docs []Document) string {
	parts := make([]string, len(docs))
	for i, d := range docs {
		parts[i] = d.YAML
	}
	return strings.Join(parts, "---\n")
}
