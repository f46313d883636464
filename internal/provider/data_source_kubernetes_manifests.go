package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/health"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

var _ datasource.DataSourceWithConfigure = (*kubernetesManifestsDataSource)(nil)

func newKubernetesManifestsDataSource() datasource.DataSource {
	return &kubernetesManifestsDataSource{}
}

// kubernetesManifestsDataSource renders the cluster's Kubernetes objects (internal/manifests).
// Offline: no API call; the provider's region only picks image_registry's default.
type kubernetesManifestsDataSource struct{ region string }

func (d *kubernetesManifestsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.region = regionOf(req.ProviderData, &resp.Diagnostics)
}

func (d *kubernetesManifestsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_kubernetes_manifests"
}

func (d *kubernetesManifestsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := joinAttributes(manifestsWorkloadAttributes(), manifestsImageAttributes(), manifestsOutputAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "Kubernetes objects for a GPU pool, as YAML built from `k8s.io/api` types, ready for `kubectl apply -f` or the " +
			"`kubernetes_manifest` resource: the NVIDIA device plugin and dcgm-exporter DaemonSets (selecting and tolerating the GPU " +
			"workers' label and taint from `gpucluster_node_bootstrap`), a `PodTemplate` for training replicas (anti-affinity per node, " +
			"heartbeat liveness probe, NCCL environment, `activeDeadlineSeconds` at `max_runtime`), the idle-workload reaper (CronJob, " +
			"ServiceAccount, Role, RoleBinding), prometheus-adapter rules with an HPA on GPU utilisation, and validation Jobs " +
			"(nccl-tests `all_reduce_perf` on every node, one all-reduce across every GPU of every node, HPCG on simulation pools).\n\n" +
			"The cross-node all-reduce (`validation_all_reduce_yaml`) is what tests the fabric between nodes: an Indexed Job with " +
			"one pod per node and a headless Service that names each pod `" + manifests.PoolAllReduceName + "-<index>." + manifests.PoolAllReduceName + "`. " +
			"Every pod runs `torchrun` with its completion index as node rank and pod 0 as master, and a short script (in a ConfigMap) " +
			"times NCCL all-reduces from 1 MiB to 1 GiB and prints algbw and busbw as nccl-tests does. It uses `torchrun` rather than " +
			"`all_reduce_perf` under `mpirun`, which would need the MPI Operator (not a built-in type) or sshd and keys in every pod. " +
			"The pods use the host network, so NCCL's `eth0` and eRDMA device are the node's own; with eRDMA they are privileged " +
			"(no RDMA device plugin gives `/dev/infiniband` otherwise) and set `NCCL_NET=IB`, so a fabric that does not work fails " +
			"rather than falling back to TCP.\n\n" +
			"Two common recipes do not work and are not used: an HPA `Resource` metric on `nvidia.com/gpu` (Resource metrics are " +
			"cpu and memory from metrics-server; `nvidia.com/gpu` is a count, not a usage), and `pgrep python` as a liveness probe " +
			"(it passes while a rank hangs in a collective). Offline: no API call.",
		Attributes: attrs,
	}
}

// manifestsWorkloadAttributes: the workload the manifests are for (scenario, namespaces, nodes, NCCL, limits, HPA).
func manifestsWorkloadAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"scenario": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Scenario. One of " + mdValues(catalog.ScenarioNames()) + ". Sets the HPA target and whether HPCG runs.",
			Validators:          []validator.String{stringvalidator.OneOf(catalog.ScenarioNames()...)},
		},
		"namespace": schema.StringAttribute{Optional: true, MarkdownDescription: "Namespace of the cluster components. Default `" + manifests.DefaultNamespace + "`."},
		"workload_namespace": schema.StringAttribute{Optional: true,
			MarkdownDescription: "Namespace of the GPU workloads (training template, HPA, validation jobs, reaper scope). Default `" + manifests.DefaultWorkloadNamespace + "`."},
		"node_count": schema.Int64Attribute{Required: true, MarkdownDescription: "GPU nodes in the pool: one validation pod per node.",
			Validators: []validator.Int64{int64validator.AtLeast(1)}},
		"gpus_per_node": schema.Int64Attribute{Required: true, MarkdownDescription: "GPUs per node (the instance type's count).",
			Validators: []validator.Int64{int64validator.Between(1, 16)}},
		"erdma": schema.BoolAttribute{Optional: true, MarkdownDescription: "The pool uses eRDMA: workloads get the eRDMA NCCL environment. Default `false`."},
		"nccl_env": schema.MapAttribute{Optional: true, ElementType: types.StringType,
			MarkdownDescription: "NCCL variables that override the network's defaults in workload pods."},
		"max_runtime": schema.StringAttribute{Optional: true, Computed: true,
			MarkdownDescription: "How long an opted-in workload (label `" + manifests.ReapLabel + "=true`) may run before the reaper " +
				"reclaims it: Jobs are deleted, bare pods deleted, pods of other controllers reported. A Go duration of at least `1h`. Default `72h` (the research scenarios' idle-reclaim target)."},
		"min_bus_bandwidth_gbs": schema.Float64Attribute{Optional: true,
			MarkdownDescription: "Fail the nccl-tests job on a node whose `all_reduce_perf` average bus bandwidth (GB/s) is below this. Default 0: report only."},
		"min_cross_node_bus_bandwidth_gbs": schema.Float64Attribute{Optional: true,
			MarkdownDescription: "Fail the cross-node all-reduce when its bus bandwidth (GB/s) at the largest message size (1 GiB) is below this. " +
				"Separate from `min_bus_bandwidth_gbs`: across nodes the bus bandwidth is bounded by one node's network (12.5 GB/s at " +
				"100 Gbit/s), within a node by NVLink or PCIe. Default 0: report only."},
		"hpa": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "Autoscale a Deployment on its pods' average GPU utilisation (Pods metric `" + manifests.GPUUtilMetric + "` from prometheus-adapter). Unset: no HPA.",
			Attributes: map[string]schema.Attribute{
				"deployment":   schema.StringAttribute{Required: true, MarkdownDescription: "Deployment to scale, in `workload_namespace`."},
				"min_replicas": schema.Int64Attribute{Required: true, MarkdownDescription: "Minimum replicas.", Validators: []validator.Int64{int64validator.AtLeast(1)}},
				"max_replicas": schema.Int64Attribute{Required: true, MarkdownDescription: "Maximum replicas.", Validators: []validator.Int64{int64validator.AtLeast(1)}},
				"target_gpu_util_percent": schema.Int64Attribute{Optional: true,
					MarkdownDescription: "Average GPU utilisation to hold. Default: the scenario's low-utilisation alert threshold, so replicas are removed before the alert fires.",
					Validators:          []validator.Int64{int64validator.Between(1, 100)}},
			},
		},
	}
}

// manifestsImageAttributes: where the container images come from.
func manifestsImageAttributes() map[string]schema.Attribute {
	img := manifests.DefaultImages()
	image := func(what, dflt string) schema.Attribute {
		return schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: what + " image. Default `" + dflt + "` (in `image_registry` when set)."}
	}
	return map[string]schema.Attribute{
		"image_registry": schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: imageRegistryDoc},
		"pinned_images":  pinnedImagesAttribute(),
		"images": schema.SingleNestedAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Container images set one by one, used as given (a newer tag, another build); unset ones are the pinned images in `image_registry`.",
			Attributes: map[string]schema.Attribute{
				"device_plugin": image("NVIDIA device plugin", img.DevicePlugin),
				"dcgm_exporter": image("dcgm-exporter", img.DCGMExporter),
				"nccl_tests":    image("nccl-tests (with `all_reduce_perf` on `PATH`)", img.NCCLTests),
				"hpcg":          image("NVIDIA HPC-Benchmarks (HPCG)", img.HPCG),
				"reaper":        image("Python 3 for the reaper script", img.Reaper),
				"pytorch":       image("PyTorch (with `torchrun`, CUDA and NCCL) for the cross-node all-reduce", img.PyTorch),
			},
		},
	}
}

// manifestsOutputAttributes: the rendered documents.
func manifestsOutputAttributes() map[string]schema.Attribute {
	str := func(desc string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	return map[string]schema.Attribute{
		"documents": schema.ListNestedAttribute{
			Computed:            true,
			MarkdownDescription: "Each object, in apply order (namespaces and RBAC first).",
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"api_version": str("`apiVersion`."),
				"kind":        str("`kind`."),
				"namespace":   str("Namespace; empty for cluster-scoped objects."),
				"name":        str("Name."),
				"yaml":        str("The object as YAML."),
			}},
		},
		"yaml":               str("Every object as one multi-document YAML stream."),
		"anti_affinity_yaml": str("The training replicas' `affinity` stanza alone (group `example-job`), for pod specs you write yourself."),
		"validation_all_reduce_yaml": str("The cross-node all-reduce validation alone (ConfigMap, headless Service, Indexed Job `" +
			manifests.PoolAllReduceName + "`; also in `documents` and `yaml`), to apply when the pool is up and delete after. " +
			"Its result is the Job's status and the log of pod 0 (`kubectl logs -n <workload_namespace> -l " +
			"batch.kubernetes.io/job-completion-index=0,app.kubernetes.io/name=" + manifests.PoolAllReduceName + "`)."),
		"mpi":                       mpiManifestsAttribute(), // MPI jobs and team queues: data_source_kubernetes_manifests_mpi.go
		"cluster_autoscaler":        clusterAutoscalerAttribute(),
		"prometheus_adapter_config": str("prometheus-adapter `config.yaml` (also in the ConfigMap `" + manifests.AdapterConfigMapName + "`)."),
		"addons_validation": schema.BoolAttribute{Optional: true,
			MarkdownDescription: "Include the validation jobs in `addons` (file `" + manifests.AddonValidation + "`): nccl-tests on every node, the cross-node all-reduce and, on simulation pools, HPCG. Default `false`."},
		"addons_mpi_operator": schema.BoolAttribute{Optional: true,
			MarkdownDescription: "Include the MPI Operator with its MPIJob CRD (" + manifests.MPIOperatorVersion + ") in `addons` (file `" + manifests.AddonMPIOperator + "`), " +
				"so MPIJobs run once the cluster is up. For a control-plane pool with a `bootstrap_bundle` only: the CRD alone is 219 KB of YAML, " +
				"and with it the add-ons do not fit in the 32 KB of user data ECS accepts. Default `false`."},
		"addons_gpu_health_agent": schema.BoolAttribute{Optional: true,
			MarkdownDescription: "Include the GPU health agent in `addons` (file `" + manifests.AddonGPUHealthAgent + "`): a DaemonSet on the GPU nodes that " +
				"taints a node whose GPU fails (`" + health.UnhealthyTaintKey + "`), evicts its GPU pods and asks its pool for a new instance; see the guide " +
				"\"GPU health\". For a control-plane pool with a `bootstrap_bundle` only, like the MPI Operator: the inline add-ons fill their user-data budget. Default `false`."},
		"addons_kueue": schema.BoolAttribute{Optional: true,
			MarkdownDescription: "Include Kueue (" + manifests.KueueVersion + ") in `addons` (file `" + manifests.AddonKueue + "`, after the validation jobs and the MPI Operator): " +
				"its release manifest (CRDs, manager, webhooks), the manager configuration of `mpi.queues_yaml` in place of the release's, and the queues of `mpi.pools` and `mpi.teams`; needs `mpi`. " +
				"For a control-plane pool with a `bootstrap_bundle` only (the release is 627 KB of YAML). Kueue's webhooks refuse Jobs until its manager runs. Default `false`."},
		"addons": schema.MapAttribute{Computed: true, ElementType: types.StringType,
			MarkdownDescription: "Everything the cluster needs after `kubeadm init`, as file name -> multi-document YAML, for the node pool's `kubernetes.addons` " +
				"(the init control-plane node applies the files in name order with `kubectl apply --server-side`): `" + manifests.AddonNamespaces + "` (this data source's namespaces and `" +
				manifests.MonitoringNamespace + "`), `" + manifests.AddonDevicePlugin + "`, `" + manifests.AddonDCGMExporter + "`, `" + manifests.AddonMonitoring +
				"` (Prometheus with the scenario's alert rules, Alertmanager with its routing, Grafana with its dashboard and anonymous read-only access, node-exporter, " +
				"prometheus-adapter serving the HPA's metric), with `cluster_autoscaler` `" + manifests.AddonClusterAutoscaler + "` (the Cluster Autoscaler), `" + manifests.AddonReaper + "`, `" + manifests.AddonWorkloads + "` (training template and HPA), with `addons_validation` `" +
				manifests.AddonValidation + "`, with `addons_gpu_health_agent` `" + manifests.AddonGPUHealthAgent + "`, with `addons_mpi_operator` `" + manifests.AddonMPIOperator + "` and, with `addons_kueue`, `" + manifests.AddonKueue + "`. Images are pinned in one place; see the guide \"What runs on the cluster after apply\". Holds no secret: Grafana's admin password is made in its pod."},
	}
}

type kubernetesManifestsModel struct {
	Scenario           types.String        `tfsdk:"scenario"`
	Namespace          types.String        `tfsdk:"namespace"`
	WorkloadNamespace  types.String        `tfsdk:"workload_namespace"`
	NodeCount          types.Int64         `tfsdk:"node_count"`
	GPUsPerNode        types.Int64         `tfsdk:"gpus_per_node"`
	ERDMA              types.Bool          `tfsdk:"erdma"`
	NCCLEnv            map[string]string   `tfsdk:"nccl_env"`
	MaxRuntime         types.String        `tfsdk:"max_runtime"`
	MinBusBandwidthGBs types.Float64       `tfsdk:"min_bus_bandwidth_gbs"`
	MinCrossNodeGBs    types.Float64       `tfsdk:"min_cross_node_bus_bandwidth_gbs"`
	HPA                *manifestsHPA       `tfsdk:"hpa"`
	ImageRegistry      types.String        `tfsdk:"image_registry"`
	PinnedImages       types.List          `tfsdk:"pinned_images"`
	Images             *manifestsImages    `tfsdk:"images"`
	Documents          []manifestsDocument `tfsdk:"documents"`
	YAML               types.String        `tfsdk:"yaml"`
	AntiAffinityYAML   types.String        `tfsdk:"anti_affinity_yaml"`
	AdapterConfig      types.String        `tfsdk:"prometheus_adapter_config"`
	AllReduceYAML      types.String        `tfsdk:"validation_all_reduce_yaml"`
	AddonsValidation   types.Bool          `tfsdk:"addons_validation"`
	AddonsMPIOperator  types.Bool          `tfsdk:"addons_mpi_operator"`
	AddonsKueue        types.Bool          `tfsdk:"addons_kueue"`
	AddonsGPUHealth    types.Bool          `tfsdk:"addons_gpu_health_agent"`
	Addons             map[string]string   `tfsdk:"addons"`
	MPI                *manifestsMPI       `tfsdk:"mpi"`
	ClusterAutoscaler  *manifestsScaler    `tfsdk:"cluster_autoscaler"`
}

type manifestsHPA struct {
	Deployment    types.String `tfsdk:"deployment"`
	MinReplicas   types.Int64  `tfsdk:"min_replicas"`
	MaxReplicas   types.Int64  `tfsdk:"max_replicas"`
	TargetPercent types.Int64  `tfsdk:"target_gpu_util_percent"`
}

type manifestsImages struct {
	DevicePlugin types.String `tfsdk:"device_plugin"`
	DCGMExporter types.String `tfsdk:"dcgm_exporter"`
	NCCLTests    types.String `tfsdk:"nccl_tests"`
	HPCG         types.String `tfsdk:"hpcg"`
	Reaper       types.String `tfsdk:"reaper"`
	PyTorch      types.String `tfsdk:"pytorch"`
}

type manifestsDocument struct {
	APIVersion types.String `tfsdk:"api_version"`
	Kind       types.String `tfsdk:"kind"`
	Namespace  types.String `tfsdk:"namespace"`
	Name       types.String `tfsdk:"name"`
	YAML       types.String `tfsdk:"yaml"`
}

func (d *kubernetesManifestsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m kubernetesManifestsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	summary := "Rendering Kubernetes manifests for scenario " + m.Scenario.ValueString()
	o, registry, ok := d.options(&m, summary, &resp.Diagnostics)
	if !ok {
		return
	}
	docs, err := manifests.Render(o)
	if err != nil {
		addPlanError(&resp.Diagnostics, err, summary)
		return
	}
	affinity, err := manifests.AntiAffinityYAML("example-job")
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	adapter, err := manifests.PrometheusAdapterConfigYAML()
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	allReduce, err := manifests.RenderPoolAllReduce(o)
	if err != nil {
		resp.Diagnostics.AddError(summary, err.Error())
		return
	}
	autoscaler, err := clusterAutoscalerOptions(m.ClusterAutoscaler)
	if err == nil && autoscaler != nil {
		autoscaler.ImageRegistry = registry
	}
	if err == nil {
		err = renderClusterAutoscaler(m.ClusterAutoscaler, autoscaler)
	}
	kueue, kerr := kueueAddon(&m)
	if err = errors.Join(err, kerr); err != nil {
		addPlanError(&resp.Diagnostics, err, summary)
		return
	}
	addons, err := manifests.AddonsYAML(o, manifests.AddonOptions{Validation: m.AddonsValidation.ValueBool(), ClusterAutoscaler: autoscaler,
		MPIOperator: m.AddonsMPIOperator.ValueBool(), Kueue: kueue, GPUHealthAgent: m.AddonsGPUHealth.ValueBool()})
	if err != nil {
		addPlanError(&resp.Diagnostics, err, summary)
		return
	}
	if err := renderMPI(o, m.MPI); err != nil {
		addPlanError(&resp.Diagnostics, err, summary)
		return
	}

	if m.MaxRuntime.IsNull() || m.MaxRuntime.IsUnknown() {
		m.MaxRuntime = types.StringValue(formatHours(manifests.DefaultMaxRuntime))
	}
	resp.Diagnostics.Append(m.setImages(registry)...)
	m.setDocuments(docs)
	m.YAML = types.StringValue(manifests.Join(docs))
	m.AntiAffinityYAML = types.StringValue(affinity)
	m.AdapterConfig = types.StringValue(adapter)
	m.AllReduceYAML = types.StringValue(manifests.Join(allReduce))
	m.Addons = addons
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// options are the rendering options of the configuration, with the image registry resolved
// (warned about once here); ok is false on an invalid max_runtime.
func (d *kubernetesManifestsDataSource) options(m *kubernetesManifestsModel, summary string, diags *diag.Diagnostics) (o manifests.Options, registry string, ok bool) {
	o = manifests.Options{
		Scenario: m.Scenario.ValueString(), Namespace: m.Namespace.ValueString(), WorkloadNamespace: m.WorkloadNamespace.ValueString(),
		Nodes: int(m.NodeCount.ValueInt64()), GPUsPerNode: int(m.GPUsPerNode.ValueInt64()), ERDMA: m.ERDMA.ValueBool(),
		NCCLEnv: m.NCCLEnv, MinBusBandwidthGBs: m.MinBusBandwidthGBs.ValueFloat64(), MinCrossNodeBusBandwidthGBs: m.MinCrossNodeGBs.ValueFloat64(),
	}
	registry, warn := resolveImageRegistry(m.ImageRegistry, d.region)
	addImageRegistryWarning(diags, path.Root("image_registry"), warn)
	o.ImageRegistry = registry
	if s := m.MaxRuntime.ValueString(); s != "" {
		dur, err := time.ParseDuration(s)
		if err != nil {
			diags.AddAttributeError(path.Root("max_runtime"), summary,
				fmt.Sprintf("max_runtime %q is not a Go duration (%v); write hours, such as \"72h\"", s, err))
			return o, registry, false
		}
		o.MaxRuntime = dur
	}
	if h := m.HPA; h != nil {
		o.HPA = &manifests.HPA{Deployment: h.Deployment.ValueString(), MinReplicas: int32(h.MinReplicas.ValueInt64()),
			MaxReplicas: int32(h.MaxReplicas.ValueInt64()), TargetPercent: int(h.TargetPercent.ValueInt64())}
	}
	if im := m.Images; im != nil {
		o.Images = manifests.Images{DevicePlugin: im.DevicePlugin.ValueString(), DCGMExporter: im.DCGMExporter.ValueString(),
			NCCLTests: im.NCCLTests.ValueString(), HPCG: im.HPCG.ValueString(), Reaper: im.Reaper.ValueString(), PyTorch: im.PyTorch.ValueString()}
	}
	return o, registry, true
}

// setImages records the registry, its pinned images and every image the manifests use: the one
// set in images, or the pinned one in the registry.
func (m *kubernetesManifestsModel) setImages(registry string) diag.Diagnostics {
	def := manifests.ImagesIn(registry)
	m.ImageRegistry = types.StringValue(registry)
	var diags diag.Diagnostics
	m.PinnedImages, diags = pinnedImagesValue(registry)
	pick := func(v types.String, dflt string) types.String {
		if v.IsNull() || v.IsUnknown() || v.ValueString() == "" {
			return types.StringValue(dflt)
		}
		return v
	}
	im := m.Images
	if im == nil {
		im = &manifestsImages{DevicePlugin: types.StringNull(), DCGMExporter: types.StringNull(), NCCLTests: types.StringNull(), HPCG: types.StringNull(), Reaper: types.StringNull(), PyTorch: types.StringNull()}
	}
	m.Images = &manifestsImages{
		DevicePlugin: pick(im.DevicePlugin, def.DevicePlugin), DCGMExporter: pick(im.DCGMExporter, def.DCGMExporter),
		NCCLTests: pick(im.NCCLTests, def.NCCLTests), HPCG: pick(im.HPCG, def.HPCG), Reaper: pick(im.Reaper, def.Reaper),
		PyTorch: pick(im.PyTorch, def.PyTorch),
	}
	return diags
}

// setDocuments records the rendered documents one by one.
func (m *kubernetesManifestsModel) setDocuments(docs []manifests.Document) {
	m.Documents = make([]manifestsDocument, 0, len(docs))
	for _, doc := range docs {
		m.Documents = append(m.Documents, manifestsDocument{
			APIVersion: types.StringValue(doc.APIVersion), Kind: types.StringValue(doc.Kind),
			Namespace: types.StringValue(doc.Namespace), Name: types.StringValue(doc.Name), YAML: types.StringValue(doc.YAML),
		})
	}
}

// formatHours writes whole-hour durations as "72h" rather than time.Duration's "72h0m0s".
func formatHours(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", int64(d/time.Hour))
	}
	return d.String()
}
