package provider

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// The `mpi` attribute of gpucluster_kubernetes_manifests: MPI jobs, gang scheduling and team
// queues (internal/manifests RenderMPI). Inputs and rendered YAML live in one nested attribute so
// that the data source's other attributes stay as they were when mpi is unset.

func mpiManifestsAttribute() schema.Attribute {
	img := manifests.DefaultMPIImages()
	image := func(what, dflt string) schema.Attribute {
		return schema.StringAttribute{Optional: true, MarkdownDescription: what + " image. Default `" + dflt + "`."}
	}
	out := func(desc string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	target := manifests.ScalingTargetPercent()
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "Multi-node MPI: the Kubeflow MPI Operator (" + manifests.MPIOperatorVersion + "), team queues with gang admission " +
			"(Kueue " + manifests.KueueVersion + "), MPIJob templates for molecular dynamics (LAMMPS), CFD (OpenFOAM) and Horovod, and a " +
			"scaling-efficiency validation. Unset: none of these are rendered. See the guide Running MPI jobs.",
		Attributes: map[string]schema.Attribute{
			"pools": schema.MapNestedAttribute{
				Required: true,
				MarkdownDescription: "GPU node pools by name: the `" + manifests.PoolLabel + "` label of their nodes (the `gpucluster_node_pool`'s " +
					"`name`). Each gets a Kueue ResourceFlavor; job templates require their pool's nodes.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"node_count":    schema.Int64Attribute{Required: true, MarkdownDescription: "Nodes in the pool.", Validators: []validator.Int64{int64validator.AtLeast(1)}},
					"gpus_per_node": schema.Int64Attribute{Required: true, MarkdownDescription: "GPUs per node.", Validators: []validator.Int64{int64validator.Between(1, 16)}},
				}},
			},
			"teams": schema.MapNestedAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Research teams by name, such as `{ chem = { gpus = 32 }, cfd = { gpus = 16 } }`: each gets a namespace, a " +
					"LocalQueue and a ClusterQueue with `gpus` as its guaranteed `nvidia.com/gpu` quota in the cohort `" + manifests.TeamsCohort +
					"`, so a team borrows GPUs others leave idle and gets its own back by preemption. The quotas on a pool may add up to at most " +
					"its nodes x GPUs per node. Unset: one team `" + manifests.DefaultTeam + "` with every GPU of every pool, in `workload_namespace`. " +
					"Read back with the defaults filled in.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"gpus":      schema.Int64Attribute{Required: true, MarkdownDescription: "GPUs the team is guaranteed; 0 to only borrow.", Validators: []validator.Int64{int64validator.AtLeast(0)}},
					"namespace": schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "The team's namespace. Default: the team's name."},
					"pool":      schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "The pool the quota is on. Default: the first pool by name."},
				}},
			},
			"job_team": schema.StringAttribute{Optional: true, MarkdownDescription: "The team the job templates are submitted as (namespace and queue). Default: the first team by name."},
			"job_pool": schema.StringAttribute{Optional: true, MarkdownDescription: "The pool the job templates run on, one worker per node. Default: the job team's pool."},
			"min_parallel_efficiency_percent": schema.Float64Attribute{Optional: true,
				MarkdownDescription: fmt.Sprintf("Fail the scaling validation when the parallel efficiency on every node of the pool, against one "+
					"node, is below this. Default 0: report only, against the scenario's %d%% target.", target),
				Validators: []validator.Float64{float64validator.Between(0, 100)}},
			"images": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Images; OpenMPI in the job images must be 4.x and workers must have `/usr/sbin/sshd` (the operator starts it).",
				Attributes: map[string]schema.Attribute{
					"operator": image("MPI Operator", img.Operator),
					"lammps":   image("LAMMPS with Kokkos CUDA (`lmp`)", img.LAMMPS),
					"openfoam": image("OpenFOAM", img.OpenFOAM),
					"horovod":  image("Horovod with PyTorch", img.Horovod),
				},
			},
			"operator_yaml": out("The MPI Operator: namespace, service account, ClusterRole and binding, Deployment. Apply its CRD from the " +
				"same release first (`manifests/base/kubeflow.org_mpijobs.yaml` at " + manifests.MPIOperatorVersion + ")."),
			"queues_yaml": out("Kueue's configuration, to apply after Kueue's release manifest (" + manifests.KueueVersion + "): the manager " +
				"ConfigMap `" + manifests.KueueConfigMapName + "` (waitForPodsReady, MPIJob integration; restart the manager after applying), a " +
				"ResourceFlavor per pool, and per team a namespace, ClusterQueue and LocalQueue."),
			"molecular_dynamics_yaml": out("MPIJob `" + manifests.MolecularDynamicsJobName + "` running LAMMPS on every GPU of the job pool, with its input ConfigMap."),
			"cfd_yaml":                out("MPIJob `" + manifests.CFDJobName + "` running OpenFOAM's simpleFoam decomposed over every GPU's rank."),
			"horovod_yaml":            out("MPIJob `" + manifests.HorovodJobName + "`: `mpirun -np N -H host:slots,...` of Horovod's PyTorch synthetic benchmark."),
			"validation_scaling_yaml": out(fmt.Sprintf("MPIJob `%s`: the same LAMMPS input on one node and on every node; the launcher's log "+
				"reports the parallel efficiency against %d%%.", manifests.ScalingJobName, target)),
			"ranks":            schema.Int64Attribute{Computed: true, MarkdownDescription: "MPI ranks of each job template: `workers` x `slots_per_worker`."},
			"workers":          schema.Int64Attribute{Computed: true, MarkdownDescription: "Worker pods, one per node of the job pool."},
			"slots_per_worker": schema.Int64Attribute{Computed: true, MarkdownDescription: "Ranks per worker: the pool's GPUs per node."},
		},
	}
}

type manifestsMPI struct {
	Pools          map[string]manifestsMPIPool `tfsdk:"pools"`
	Teams          map[string]manifestsMPITeam `tfsdk:"teams"`
	JobTeam        types.String                `tfsdk:"job_team"`
	JobPool        types.String                `tfsdk:"job_pool"`
	MinEfficiency  types.Float64               `tfsdk:"min_parallel_efficiency_percent"`
	Images         *manifestsMPIImages         `tfsdk:"images"`
	OperatorYAML   types.String                `tfsdk:"operator_yaml"`
	QueuesYAML     types.String                `tfsdk:"queues_yaml"`
	MDYAML         types.String                `tfsdk:"molecular_dynamics_yaml"`
	CFDYAML        types.String                `tfsdk:"cfd_yaml"`
	HorovodYAML    types.String                `tfsdk:"horovod_yaml"`
	ScalingYAML    types.String                `tfsdk:"validation_scaling_yaml"`
	Ranks          types.Int64                 `tfsdk:"ranks"`
	Workers        types.Int64                 `tfsdk:"workers"`
	SlotsPerWorker types.Int64                 `tfsdk:"slots_per_worker"`
}

type manifestsMPIPool struct {
	NodeCount   types.Int64 `tfsdk:"node_count"`
	GPUsPerNode types.Int64 `tfsdk:"gpus_per_node"`
}

type manifestsMPITeam struct {
	GPUs      types.Int64  `tfsdk:"gpus"`
	Namespace types.String `tfsdk:"namespace"`
	Pool      types.String `tfsdk:"pool"`
}

type manifestsMPIImages struct {
	Operator types.String `tfsdk:"operator"`
	LAMMPS   types.String `tfsdk:"lammps"`
	OpenFOAM types.String `tfsdk:"openfoam"`
	Horovod  types.String `tfsdk:"horovod"`
}

// renderMPI fills the mpi attribute's outputs; nil when mpi is unset.
func renderMPI(o manifests.Options, m *manifestsMPI) error {
	if m == nil {
		return nil
	}
	in := m.queueOptions()
	in.JobTeam, in.JobPool, in.MinParallelEfficiencyPercent = m.JobTeam.ValueString(), m.JobPool.ValueString(), m.MinEfficiency.ValueFloat64()
	if im := m.Images; im != nil {
		in.Images = manifests.MPIImages{Operator: im.Operator.ValueString(), LAMMPS: im.LAMMPS.ValueString(), OpenFOAM: im.OpenFOAM.ValueString(), Horovod: im.Horovod.ValueString()}
	}
	r, err := manifests.RenderMPI(o, in)
	if err != nil {
		return err
	}
	m.OperatorYAML = types.StringValue(manifests.Join(r.Operator))
	m.QueuesYAML = types.StringValue(manifests.Join(r.Queues))
	m.MDYAML = types.StringValue(manifests.Join(r.MolecularDynamics))
	m.CFDYAML = types.StringValue(manifests.Join(r.CFD))
	m.HorovodYAML = types.StringValue(manifests.Join(r.Horovod))
	m.ScalingYAML = types.StringValue(manifests.Join(r.Scaling))
	m.Teams = make(map[string]manifestsMPITeam, len(r.Teams))
	for name, t := range r.Teams {
		m.Teams[name] = manifestsMPITeam{GPUs: types.Int64Value(int64(t.GPUs)), Namespace: types.StringValue(t.Namespace), Pool: types.StringValue(t.Pool)}
	}
	m.Ranks, m.Workers, m.SlotsPerWorker = types.Int64Value(int64(r.Ranks)), types.Int64Value(int64(r.Workers)), types.Int64Value(int64(r.SlotsPerWorker))
	return nil
}

// queueOptions are the pools and teams: what Kueue's queues are rendered from.
func (m *manifestsMPI) queueOptions() manifests.MPIOptions {
	var in manifests.MPIOptions
	for _, name := range slices.Sorted(maps.Keys(m.Pools)) {
		p := m.Pools[name]
		in.Pools = append(in.Pools, manifests.Pool{Name: name, Nodes: int(p.NodeCount.ValueInt64()), GPUsPerNode: int(p.GPUsPerNode.ValueInt64())})
	}
	if len(m.Teams) > 0 {
		in.Teams = map[string]manifests.Team{}
		for name, t := range m.Teams {
			in.Teams[name] = manifests.Team{GPUs: int(t.GPUs.ValueInt64()), Namespace: t.Namespace.ValueString(), Pool: t.Pool.ValueString()}
		}
	}
	return in
}

// kueueAddon is the Kueue add-on's queues when addons_kueue is true: those of mpi, which must be
// set then.
func kueueAddon(m *kubernetesManifestsModel) (*manifests.MPIOptions, error) {
	if !m.AddonsKueue.ValueBool() {
		return nil, nil
	}
	if m.MPI == nil {
		return nil, planerr.Input("addons_kueue", "true", "needs mpi: Kueue's queues are rendered from mpi.pools and mpi.teams",
			"set mpi = { pools = { <pool name> = { node_count = 2, gpus_per_node = 8 } } }, or addons_kueue = false")
	}
	in := m.MPI.queueOptions()
	return &in, nil
}
