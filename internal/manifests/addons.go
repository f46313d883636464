package manifests

import (
	"maps"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/alerting"
)

// Add-on file names. The init control-plane node writes each to a directory and applies it with
// `kubectl apply --server-side`, which reads a directory's files in name order: the number prefix
// puts namespaces before what lives in them and the monitoring stack before the workloads it
// watches.
const (
	AddonNamespaces   = "00-namespaces.yaml"
	AddonDevicePlugin = "10-device-plugin.yaml"
	AddonDCGMExporter = "20-dcgm-exporter.yaml"
	AddonMonitoring   = "30-monitoring.yaml"
	AddonReaper       = "40-reaper.yaml"
	AddonWorkloads    = "45-workloads.yaml"
	AddonValidation   = "50-validation.yaml"
)

// AddonOptions choose what the cluster applies beyond the add-ons every GPU cluster needs.
type AddonOptions struct {
	// Validation adds AddonValidation: nccl-tests on every node, the cross-node all-reduce and,
	// on simulation pools, HPCG. They run once the GPU nodes join.
	Validation bool
	// Alerting selects the alert thresholds; its Scenario is the pool's. Zero values keep the
	// scenario's defaults (alerting.ForScenario).
	Alerting alerting.Options
	// ClusterAutoscaler adds AddonClusterAutoscaler, the Cluster Autoscaler of the cluster's
	// autoscaling pools; nil when the cluster has none.
	ClusterAutoscaler *ClusterAutoscalerOptions
	// MPIOperator adds AddonMPIOperator, the MPI Operator with its CRD (mpi_addon.go): for a
	// cluster whose add-ons travel in a bootstrap bundle, since it does not fit in user data.
	MPIOperator bool
	// GPUHealthAgent adds AddonGPUHealthAgent, the GPU health agent on every GPU node
	// (gpu_health_agent.go): for a bundled cluster, like MPIOperator.
	GPUHealthAgent bool
	// Kueue adds AddonKueue, Kueue with the queues of these pools and teams (kueue_addon.go; only
	// Pools and Teams are read): for a bundled cluster, like MPIOperator.
	Kueue *MPIOptions
}

// AddonFile is one file of the add-on set: a name and its objects in apply order.
type AddonFile struct {
	Name string
	Docs []Document
}

// YAML is the file's content, a multi-document stream.
func (f AddonFile) YAML() string { return Join(f.Docs) }

// Addons renders what the cluster applies to itself after `kubeadm init`: namespaces, the NVIDIA
// device plugin, dcgm-exporter, the monitoring stack (Prometheus with the scenario's rules,
// Alertmanager with its routing, Grafana with its dashboard, node-exporter, prometheus-adapter
// serving the HPA's metric), the Cluster Autoscaler when the cluster has autoscaling pools, the idle
// reaper, the training template and HPA, and the validation jobs when asked. Files are returned in name order.
func Addons(o Options, a AddonOptions) ([]AddonFile, error) {
	o, sc, err := withDefaults(o)
	if err != nil {
		return nil, err
	}
	a.Alerting.Scenario = sc.Name
	th, err := alerting.ForScenario(a.Alerting)
	if err != nil {
		return nil, err
	}
	mon, err := monitoring(o, th)
	if err != nil {
		return nil, err
	}
	ns := append(namespaces(o), &corev1.Namespace{TypeMeta: tm("v1", "Namespace"), ObjectMeta: meta(MonitoringNamespace, "", nil)})
	workloads := []object{trainingTemplate(o)}
	if o.HPA != nil {
		workloads = append(workloads, hpa(o))
	}
	files := map[string][]object{
		AddonNamespaces:   ns,
		AddonDevicePlugin: {devicePlugin(o)},
		AddonDCGMExporter: {dcgmExporter(o), dcgmService(o)},
		AddonMonitoring:   mon,
		AddonReaper:       reaper(o),
		AddonWorkloads:    workloads,
	}
	if a.ClusterAutoscaler != nil {
		c := *a.ClusterAutoscaler
		if c.ImageRegistry == "" {
			c.ImageRegistry = o.ImageRegistry
		}
		ca, err := clusterAutoscaler(c)
		if err != nil {
			return nil, err
		}
		files[AddonClusterAutoscaler] = ca
	}
	if a.GPUHealthAgent {
		files[AddonGPUHealthAgent] = gpuHealthAgent(o)
	}
	if a.Validation {
		// The cross-node all-reduce first: its ranks must run together, one per node. Created
		// after the per-node jobs, which take every node's GPUs, its first rank could start on
		// a node freed early and hold it while waiting for the others; created first, the
		// scheduler places all its ranks while the nodes are free, and the per-node jobs queue.
		v := append(poolAllReduce(o), ncclTests(o)...)
		if IsSimulation(sc.Name) {
			v = append(v, hpcg(o))
		}
		files[AddonValidation] = runOnce(v)
	}
	out := make([]AddonFile, 0, len(files))
	for _, name := range slices.Sorted(maps.Keys(files)) {
		docs, err := documents(files[name])
		if err != nil {
			return nil, err
		}
		out = append(out, AddonFile{Name: name, Docs: docs})
	}
	if a.MPIOperator {
		docs, err := mpiOperatorAddon(o.ImageRegistry)
		if err != nil {
			return nil, err
		}
		out = append(out, AddonFile{Name: AddonMPIOperator, Docs: docs})
	}
	if a.Kueue != nil {
		docs, err := kueueAddon(o, *a.Kueue)
		if err != nil {
			return nil, err
		}
		out = append(out, AddonFile{Name: AddonKueue, Docs: docs}) // the last name in order
	}
	return out, nil
}

// runOnce drops the validation Jobs' time-to-live. The init node applies the add-ons at every
// boot: a Job deleted a day after it finished would be created again and run again after a reboot,
// while a Job that stays is left as it is by the next apply. So each validation runs once per
// cluster and its result stays readable; delete the Jobs to run them again.
func runOnce(objs []object) []object {
	for _, obj := range objs {
		if j, ok := obj.(*batchv1.Job); ok {
			j.Spec.TTLSecondsAfterFinished = nil
		}
	}
	return objs
}

// AddonsYAML is Addons as file name -> multi-document YAML, the shape the node pool's
// kubernetes.addons takes.
func AddonsYAML(o Options, a AddonOptions) (map[string]string, error) {
	files, err := Addons(o, a)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(files))
	for _, f := range files {
		m[f.Name] = f.YAML()
	}
	return m, nil
}
