package manifests

import (
	"fmt"
	"math"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// MPI jobs run under the Kubeflow MPI Operator (MPIJob, kubeflow.org/v2beta1): a launcher pod
// runs mpirun, which reaches one worker pod per node over SSH (the operator generates the keys
// and the hostfile). Kueue admits each MPIJob whole (see queues.go).
//
// The MPIJob fields rendered here are the minimal structs below, written after
// pkg/apis/kubeflow/v2beta1/types.go at MPIOperatorVersion, rather than the operator's Go API: the
// module proxy serves that version (though not the module's version list), but importing it would
// bring its dependencies into the provider's build. The tests check the rendered objects against
// the MPIJob CRD's schema kept in testdata, and internal/controllertest runs the real operator
// (built by scripts/build-controllers.sh) on them.

// MPI images are pinned in internal/images with the rest. The job images have not been run on a
// GPU pool by this project's tests (which have no GPU); they are the vendors' published builds,
// and each can be replaced through MPIOptions.Images (the data source's mpi.images).
const (
	// MPIOperatorVersion is the MPI Operator release; its CRD must be applied from the same
	// release (https://github.com/kubeflow/mpi-operator/blob/v0.8.0/manifests/base/kubeflow.org_mpijobs.yaml),
	// and internal/images pins the operator image of the same release.
	MPIOperatorVersion = "v0.8.0"
)

// MPI names.
const (
	MPIOperatorNamespace = "mpi-operator"
	MPIOperatorName      = "mpi-operator"
	// MolecularDynamicsJobName, CFDJobName, HorovodJobName and ScalingJobName name the rendered MPIJobs.
	MolecularDynamicsJobName = "md-lammps"
	CFDJobName               = "cfd-openfoam"
	HorovodJobName           = "horovod-synthetic"
	ScalingJobName           = "md-scaling-efficiency"
)

// ScalingTargetPercent is the molecular-dynamics scenario's parallel-efficiency target (its
// catalog row, MinParallelEfficiency): the scaling job reports against it.
func ScalingTargetPercent() int {
	sc, _ := catalog.LookupScenario(catalog.ScenarioMolecularDynamics) // a catalog constant; TestScalingEfficiencyScript checks the 90
	return int(math.Round(sc.MinParallelEfficiency * 100))
}

// MPIImages are the images of the MPI operator and the job templates.
type MPIImages struct {
	Operator, LAMMPS, OpenFOAM, Horovod string
}

// DefaultMPIImages returns the pinned images from their upstream registries.
func DefaultMPIImages() MPIImages { return MPIImagesIn("") }

// MPIImagesIn returns the pinned images in registry (see Options.ImageRegistry).
func MPIImagesIn(registry string) MPIImages {
	return MPIImages{Operator: images.RefIn(images.MPIOperator, registry), LAMMPS: images.RefIn(images.LAMMPS, registry),
		OpenFOAM: images.RefIn(images.OpenFOAM, registry), Horovod: images.RefIn(images.Horovod, registry)}
}

// MPIOptions describe the pools, the teams and the job templates.
type MPIOptions struct {
	// Pools are the GPU node pools; at least one.
	Pools []Pool
	// Teams share the pools through Kueue; empty means one team DefaultTeam with every GPU.
	Teams map[string]Team
	// JobTeam is the team the job templates are submitted as (its namespace and queue); default
	// the first team by name.
	JobTeam string
	// JobPool is the pool the job templates run on; default the job team's pool.
	JobPool string
	// MinParallelEfficiencyPercent fails the scaling validation below it; 0 reports only.
	MinParallelEfficiencyPercent float64
	Images                       MPIImages
}

// MPIRender is the MPI objects by purpose, each group in apply order.
type MPIRender struct {
	// Operator is the MPI Operator (namespace, RBAC, Deployment), without its CRD.
	Operator []Document
	// Queues is Kueue's configuration: manager ConfigMap, ResourceFlavors, team namespaces (with
	// the idle reaper's Role in each and its list of them), ClusterQueues and LocalQueues.
	Queues []Document
	// MolecularDynamics, CFD and Horovod are one MPIJob (with its input ConfigMap, if any) each.
	MolecularDynamics, CFD, Horovod []Document
	// Scaling is the molecular-dynamics scaling-efficiency validation.
	Scaling []Document
	// Ranks, SlotsPerWorker and Workers are the templates' sizes: Ranks = Workers x SlotsPerWorker.
	Ranks, SlotsPerWorker, Workers int
	// Teams are the teams after defaults.
	Teams map[string]Team
}

// MPIJob v2beta1, the fields rendered here.
type (
	mpiJob struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              mpiJobSpec `json:"spec"`
	}
	mpiJobSpec struct {
		SlotsPerWorker         *int32                     `json:"slotsPerWorker"`
		RunPolicy              mpiRunPolicy               `json:"runPolicy"`
		MPIImplementation      string                     `json:"mpiImplementation"`
		LauncherCreationPolicy string                     `json:"launcherCreationPolicy"`
		MPIReplicaSpecs        map[string]*mpiReplicaSpec `json:"mpiReplicaSpecs"`
	}
	mpiRunPolicy struct {
		CleanPodPolicy          string `json:"cleanPodPolicy"`
		TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
		ActiveDeadlineSeconds   *int64 `json:"activeDeadlineSeconds,omitempty"`
		BackoffLimit            *int32 `json:"backoffLimit,omitempty"`
		Suspend                 *bool  `json:"suspend,omitempty"`
	}
	mpiReplicaSpec struct {
		Replicas      *int32                 `json:"replicas"`
		RestartPolicy string                 `json:"restartPolicy"`
		Template      corev1.PodTemplateSpec `json:"template"`
	}
)

// withMPIDefaults validates the MPI options and fills their defaults.
func withMPIDefaults(o Options, m MPIOptions) (MPIOptions, error) {
	if len(m.Pools) == 0 {
		return m, planerr.Input("mpi.pools", "", "is empty", "name at least one GPU node pool, such as { md-gpu = { node_count = 2, gpus_per_node = 8 } }")
	}
	m.Pools = slices.Clone(m.Pools)
	slices.SortFunc(m.Pools, func(a, b Pool) int { return strings.Compare(a.Name, b.Name) })
	for i, p := range m.Pools {
		field := planerr.Key("mpi.pools", p.Name)
		if errs := validation.IsValidLabelValue(p.Name); p.Name == "" || len(errs) > 0 {
			return m, planerr.Input("mpi.pools", p.Name, "is not a pool name (the "+PoolLabel+" label value)", "use the gpucluster_node_pool's name")
		}
		if i > 0 && m.Pools[i-1].Name == p.Name {
			return m, planerr.Input("mpi.pools", p.Name, "is named twice", "name each pool once")
		}
		if p.Nodes < 1 {
			return m, planerr.Input(planerr.Join(field, "node_count"), fmt.Sprint(p.Nodes), "is below 1", "give the pool's node count")
		}
		if p.GPUsPerNode < 1 || p.GPUsPerNode > 16 {
			return m, planerr.Input(planerr.Join(field, "gpus_per_node"), fmt.Sprint(p.GPUsPerNode), "is not between 1 and 16", "give the GPU count of the pool's instance type")
		}
	}
	teams, err := withTeamDefaults(o, m.Pools, m.Teams)
	if err != nil {
		return m, err
	}
	m.Teams = teams
	if m.JobTeam == "" {
		m.JobTeam = slices.Sorted(func(yield func(string) bool) {
			for name := range teams {
				if !yield(name) {
					return
				}
			}
		})[0]
	}
	if _, ok := teams[m.JobTeam]; !ok {
		return m, planerr.Input("mpi.job_team", m.JobTeam, "is not one of the teams", "use a key of teams")
	}
	if m.JobPool == "" {
		m.JobPool = teams[m.JobTeam].Pool
	}
	if !slices.ContainsFunc(m.Pools, func(p Pool) bool { return p.Name == m.JobPool }) {
		return m, planerr.Input("mpi.job_pool", m.JobPool, "is not one of the pools", "use one of "+strings.Join(poolNames(m.Pools), ", "))
	}
	if m.MinParallelEfficiencyPercent < 0 || m.MinParallelEfficiencyPercent > 100 {
		return m, planerr.Input("mpi.min_parallel_efficiency_percent", fmt.Sprint(m.MinParallelEfficiencyPercent), "is not a percentage",
			fmt.Sprintf("use 0 to report only, or a threshold such as %d (the scenario's target)", ScalingTargetPercent()))
	}
	if err := images.CheckRegistry("image_registry", o.ImageRegistry); err != nil {
		return m, err
	}
	d := MPIImagesIn(o.ImageRegistry)
	for _, img := range []struct {
		field string
		v     *string
		def   string
	}{{"mpi.images.operator", &m.Images.Operator, d.Operator}, {"mpi.images.lammps", &m.Images.LAMMPS, d.LAMMPS},
		{"mpi.images.openfoam", &m.Images.OpenFOAM, d.OpenFOAM}, {"mpi.images.horovod", &m.Images.Horovod, d.Horovod}} {
		if *img.v == "" {
			*img.v = img.def
		}
		if !imageRE.MatchString(*img.v) {
			return m, planerr.Input(img.field, *img.v, "is not an image reference", "use registry/repository:tag, such as "+img.def)
		}
	}
	return m, nil
}

// RenderMPI renders the MPI Operator, the team queues, the scenario MPIJob templates and the
// scaling validation.
func RenderMPI(o Options, m MPIOptions) (MPIRender, error) {
	o, _, err := withDefaults(o)
	if err != nil {
		return MPIRender{}, err
	}
	m, err = withMPIDefaults(o, m)
	if err != nil {
		return MPIRender{}, err
	}
	pool := m.Pools[slices.IndexFunc(m.Pools, func(p Pool) bool { return p.Name == m.JobPool })]
	team := m.Teams[m.JobTeam]
	out := MPIRender{Ranks: pool.GPUs(), SlotsPerWorker: pool.GPUsPerNode, Workers: pool.Nodes, Teams: m.Teams}
	if out.Operator, err = documents(mpiOperator(m)); err != nil {
		return out, err
	}
	q, err := queues(o, m.Pools, m.Teams)
	if err != nil {
		return out, err
	}
	if out.Queues, err = documents(q); err != nil {
		return out, err
	}
	j := mpiJobContext{o: o, m: m, pool: pool, namespace: team.Namespace, queue: m.JobTeam}
	for _, g := range []struct {
		dst  *[]Document
		objs []object
	}{{&out.MolecularDynamics, j.molecularDynamics()}, {&out.CFD, j.cfd()}, {&out.Horovod, j.horovod()}, {&out.Scaling, j.scaling()}} {
		if *g.dst, err = documents(g.objs); err != nil {
			return out, err
		}
	}
	return out, nil
}

// mpiOperator is deploy/v2beta1/mpi-operator.yaml at MPIOperatorVersion less the CRD and the
// Kubeflow dashboard's aggregated roles: namespace, service account, the operator's ClusterRole
// and binding, and the Deployment.
func mpiOperator(m MPIOptions) []object {
	name, ns := MPIOperatorName, MPIOperatorNamespace
	labels := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/component": "mpijob"}
	all := []string{"*"}
	role := &rbacv1.ClusterRole{
		TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRole"), ObjectMeta: meta(name, "", labels),
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services"}, Verbs: []string{"create", "list", "watch", "update"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "list", "watch", "delete", "update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"endpoints"}, Verbs: []string{"create", "get", "update"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "list", "update", "watch"}},
			{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"create", "get"}},
			{APIGroups: []string{"kubeflow.org"}, Resources: []string{"mpijobs", "mpijobs/finalizers", "mpijobs/status"}, Verbs: all},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: all},
			{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	return []object{
		&corev1.Namespace{TypeMeta: tm("v1", "Namespace"), ObjectMeta: meta(ns, "", labels)},
		&corev1.ServiceAccount{TypeMeta: tm("v1", "ServiceAccount"), ObjectMeta: meta(name, ns, labels)},
		role,
		&rbacv1.ClusterRoleBinding{
			TypeMeta: tm("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ObjectMeta: meta(name, "", labels),
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		},
		&appsv1.Deployment{
			TypeMeta: tm("apps/v1", "Deployment"), ObjectMeta: meta(name, ns, labels),
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName: name,
						// Every node of the clusters the modules form is tainted (the control plane's
						// node-role taint, the GPU workers' nvidia.com/gpu), and the release's pod
						// tolerates none: it would stay Pending and no MPIJob would start. It runs
						// beside the other controllers, on the control plane.
						Tolerations: []corev1.Toleration{{Key: controlPlaneLabel, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
						Containers: []corev1.Container{{
							Name: name, Image: m.Images.Operator,
							Args: []string{"-alsologtostderr", "--lock-namespace=" + ns},
							// The release runs it with no security context; it needs no capability
							// (it only talks to the API server), so it gets none. Its user stays the
							// image's.
							SecurityContext: &corev1.SecurityContext{
								AllowPrivilegeEscalation: ptr(false),
								Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							},
						}},
					},
				},
			},
		},
	}
}

// mpiJobContext is what every MPIJob template shares: the pool it runs on and the team it is
// submitted as.
type mpiJobContext struct {
	o         Options
	m         MPIOptions
	pool      Pool
	namespace string
	queue     string
}

// WorkerHost is the DNS name the MPI Operator gives worker i of an MPIJob (the hostfile's names,
// pkg/controller/mpi_job_controller.go newConfigMap at MPIOperatorVersion).
func WorkerHost(job, namespace string, i int) string {
	return fmt.Sprintf("%s-worker-%d.%s.%s.svc", job, i, job, namespace)
}

// hostList is mpirun's -H list: every worker with its slots.
func (j mpiJobContext) hostList(job string, nodes int) string {
	hosts := make([]string, nodes)
	for i := range hosts {
		hosts[i] = fmt.Sprintf("%s:%d", WorkerHost(job, j.namespace, i), j.pool.GPUsPerNode)
	}
	return strings.Join(hosts, ",")
}

// OpenMPITransport is the mpirun options that choose OpenMPI's transport between nodes. With
// eRDMA: the UCX PML over the eRDMA device (RC verbs), so MPI messages bypass the kernel; without:
// the ob1 PML with the TCP BTL over the pod's eth0. Either way the choice is explicit, so a job
// never quietly runs on a transport the network does not have.
func OpenMPITransport(erdma bool) []string {
	if erdma {
		return []string{"--mca", "pml", "ucx", "--mca", "osc", "ucx", "--mca", "btl", "^openib,tcp",
			"-x", "UCX_NET_DEVICES=" + netplan.ERDMADevice + ":1", "-x", "UCX_TLS=rc,sm,self,cuda_copy,cuda_ipc"}
	}
	return []string{"--mca", "pml", "ob1", "--mca", "btl", "tcp,vader,self",
		"--mca", "btl_tcp_if_include", netplan.SocketInterface, "--mca", "oob_tcp_if_include", netplan.SocketInterface}
}

// mpirun builds the launcher's mpirun command line: np ranks placed by mapBy over the first
// nodes workers, the transport, the environment forwarded to every rank, then the program.
func (j mpiJobContext) mpirun(job string, nodes, np int, mapBy string, env []string, program ...string) []string {
	args := []string{"mpirun", "--allow-run-as-root", "-np", fmt.Sprint(np), "-H", j.hostList(job, nodes),
		"--bind-to", "none", "--map-by", mapBy}
	args = append(args, OpenMPITransport(j.o.ERDMA)...)
	for _, e := range append(ncclEnv(j.o), rdmaEnv(j.o)...) {
		args = append(args, "-x", e.Name)
	}
	for _, e := range env {
		args = append(args, "-x", e)
	}
	return append(args, program...)
}

// mpirunAll runs one rank per GPU of the job's nodes.
func (j mpiJobContext) mpirunAll(job string, env []string, program ...string) []string {
	return j.mpirun(job, j.pool.Nodes, j.pool.GPUs(), "slot", env, program...)
}

// shellJoin quotes a command line for /bin/bash -c; the arguments here are names, numbers and
// options, so single quotes are enough.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t\n'\"$;&|<>*?^(){}[]\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// poolAffinity requires the pool's nodes: the GPU-worker role and the pool label.
func poolAffinity(pool string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: PoolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{pool}}},
		}}},
	}}
}

// job builds an MPIJob: a launcher without GPUs that runs script, and one worker per node with
// the node's GPUs (slotsPerWorker = GPUs per node, so ranks = nodes x GPUs per node).
func (j mpiJobContext) job(name, image string, nodes int, script string, extra []corev1.Volume, mounts []corev1.VolumeMount) *mpiJob {
	labels := map[string]string{QueueNameLabel: j.queue, ReapLabel: "true"}
	m := meta(name, j.namespace, labels)
	env := append(ncclEnv(j.o), rdmaEnv(j.o)...)
	volumes := append([]corev1.Volume{{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}}}, extra...)
	workerMounts := append([]corev1.VolumeMount{{Name: "dshm", MountPath: "/dev/shm"}}, mounts...)
	pod := func(role string, gpus int, command []string) corev1.PodTemplateSpec {
		spec := corev1.PodSpec{
			Tolerations: []corev1.Toleration{gpuToleration()},
			Affinity:    poolAffinity(j.pool.Name),
			Containers: []corev1.Container{{
				Name: role, Image: image, Command: command, Env: env,
				VolumeMounts: workerMounts,
			}},
			Volumes: volumes,
		}
		labels := map[string]string{"app.kubernetes.io/name": name, ReapLabel: "true"}
		if gpus > 0 {
			spec.Containers[0].Resources = gpuLimits(gpus)
			// One worker per node: each gets the node's NVLink domain and eRDMA device. Only
			// workers carry the group label: a launcher carrying it would keep a worker off the
			// launcher's node, and a pool with as many nodes as workers could never place them all.
			labels[ReplicaGroupLabel] = name
			spec.Affinity.PodAntiAffinity = antiAffinity(name).PodAntiAffinity
			// eRDMA verbs need /dev/infiniband and locked memory (see rdmaSecurityContext).
			if j.o.ERDMA {
				spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr(true)}
			}
		}
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
	}
	return &mpiJob{
		TypeMeta: tm("kubeflow.org/v2beta1", "MPIJob"), ObjectMeta: m,
		Spec: mpiJobSpec{
			SlotsPerWorker: ptr(int32(j.pool.GPUsPerNode)),
			RunPolicy: mpiRunPolicy{
				CleanPodPolicy: "Running", TTLSecondsAfterFinished: ptr(int32(86400)),
				// The reaper reclaims Jobs and bare pods; an MPIJob's workers belong to the
				// MPIJob, which would recreate them, so the MPIJob ends itself at MaxRuntime.
				ActiveDeadlineSeconds: ptr(int64(j.o.MaxRuntime.Seconds())),
				BackoffLimit:          ptr(int32(0)),
				// Created suspended: Kueue unsuspends it once every pod fits the team's quota.
				// Without Kueue it stays suspended rather than starting partly placed.
				Suspend: ptr(true),
			},
			MPIImplementation: "OpenMPI",
			// The launcher starts when every worker is ready, so mpirun does not race sshd.
			LauncherCreationPolicy: "WaitForWorkersReady",
			MPIReplicaSpecs: map[string]*mpiReplicaSpec{
				"Launcher": {Replicas: ptr(int32(1)), RestartPolicy: "OnFailure", Template: pod("launcher", 0, []string{"/bin/bash", "-c", script})},
				// No command: the operator runs sshd in workers, which the image must have.
				"Worker": {Replicas: ptr(int32(nodes)), RestartPolicy: "Never", Template: pod("worker", j.pool.GPUsPerNode, nil)},
			},
		},
	}
}

// LAMMPSInput is LAMMPS's Lennard-Jones melt benchmark (bench/in.lj), scaled by -var x/y/z and
// run for -var steps steps.
const LAMMPSInput = `# 3d Lennard-Jones melt (LAMMPS bench/in.lj)
variable x index 1
variable y index 1
variable z index 1
variable steps index 100
variable xx equal 20*$x
variable yy equal 20*$y
variable zz equal 20*$z
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 ${xx} 0 ${yy} 0 ${zz}
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nve
run ${steps}
`

// lammpsArgs runs LAMMPS with Kokkos on the GPUs (one rank per GPU, GPU-aware MPI).
func (j mpiJobContext) lammpsArgs(size int, steps int) []string {
	return []string{"lmp", "-k", "on", "g", fmt.Sprint(j.pool.GPUsPerNode), "-sf", "kk", "-pk", "kokkos", "cuda/aware", "on", "neigh", "full", "comm", "device",
		"-var", "x", fmt.Sprint(size), "-var", "y", fmt.Sprint(size), "-var", "z", fmt.Sprint(size), "-var", "steps", fmt.Sprint(steps),
		"-in", "/opt/lammps/in.lj"}
}

func inputConfigMap(name, namespace, key, content string) (*corev1.ConfigMap, corev1.Volume, corev1.VolumeMount) {
	cm := &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(name, namespace, nil), Data: map[string]string{key: content}}
	vol := corev1.Volume{Name: "input", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}
	return cm, vol, corev1.VolumeMount{Name: "input", MountPath: "/opt/lammps", ReadOnly: true}
}

// molecularDynamics is LAMMPS across every GPU of the pool: the template to replace the input of.
func (j mpiJobContext) molecularDynamics() []object {
	name := MolecularDynamicsJobName
	cm, vol, mount := inputConfigMap(name+"-input", j.namespace, "in.lj", LAMMPSInput)
	script := "set -eu\n" + shellJoin(j.mpirunAll(name, nil, j.lammpsArgs(8, 1000)...)) + "\n"
	return []object{cm, j.job(name, j.m.Images.LAMMPS, j.pool.Nodes, script, []corev1.Volume{vol}, []corev1.VolumeMount{mount})}
}

// cfd is OpenFOAM's pitzDaily case decomposed over every rank. Without a shared file system each
// node prepares the same decomposed case in /tmp first (one process per node), then every rank
// reads its own processor directory.
func (j mpiJobContext) cfd() []object {
	name := CFDJobName
	ranks := j.pool.GPUs()
	// The decomposition is written whole rather than edited: a tutorial's own decomposeParDict
	// may use a method (simple, hierarchical) whose coefficients fit another rank count; scotch
	// needs none.
	prepare := fmt.Sprintf(`. "$FOAM_BASHRC" && rm -rf /tmp/case && cp -r "$FOAM_TUTORIALS/incompressible/simpleFoam/pitzDaily" /tmp/case && cd /tmp/case && `+
		`printf 'FoamFile { version 2.0; format ascii; class dictionary; object decomposeParDict; }\nnumberOfSubdomains %d;\nmethod scotch;\n' > system/decomposeParDict && `+
		`blockMesh >log.blockMesh && decomposePar -force >log.decomposePar`, ranks)
	// One process per node for the preparation, not one per slot.
	perNode := j.mpirun(name, j.pool.Nodes, j.pool.Nodes, "ppr:1:node", []string{"FOAM_BASHRC"}, "bash", "-c", prepare)
	solve := j.mpirunAll(name, []string{"FOAM_BASHRC"}, "bash", "-c", `. "$FOAM_BASHRC" && exec simpleFoam -parallel -case /tmp/case`)
	script := "set -eu\nexport FOAM_BASHRC=/usr/lib/openfoam/openfoam2406/etc/bashrc\n" + shellJoin(perNode) + "\n" + shellJoin(solve) + "\n"
	return []object{j.job(name, j.m.Images.OpenFOAM, j.pool.Nodes, script, nil, nil)}
}

// horovod is the brief's Horovod launch, mpirun -np N -H host:slots,..., running Horovod's
// PyTorch synthetic benchmark (NCCL all-reduce between the ranks).
func (j mpiJobContext) horovod() []object {
	name := HorovodJobName
	script := "set -eu\n" + shellJoin(j.mpirunAll(name, nil, "python", "/horovod/examples/pytorch/pytorch_synthetic_benchmark.py", "--batch-size", "64")) + "\n"
	return []object{j.job(name, j.m.Images.Horovod, j.pool.Nodes, script, nil, nil)}
}
