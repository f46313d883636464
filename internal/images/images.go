// Package images pins every container image the project deploys on a cluster: the add-ons the
// init control-plane node applies (CNI, GPU device plugin, monitoring stack, reaper) and the
// validation jobs. One table, so a version is raised in one place and the "What runs on the
// cluster after apply" guide, generated from it, cannot drift from what is deployed.
//
// Why each version is in the comment next to its row. Each row names its tag (what a user
// compares with the vendor's release notes) and, where a public source documents it, the digest of
// the tag's multi-arch index, so a node runs exactly the image this table was written against even
// if the tag is moved, and a copy in another registry is the same image (registry.go: one registry
// setting maps every row into the user's registry by one rule).
package images

import (
	"fmt"
	"slices"
	"strings"
)

// Names of the images, the keys of the table.
const (
	Flannel           = "flannel"
	FlannelCNIPlugin  = "flannel-cni-plugin"
	DevicePlugin      = "nvidia-device-plugin"
	DCGMExporter      = "dcgm-exporter"
	Prometheus        = "prometheus"
	Alertmanager      = "alertmanager"
	Grafana           = "grafana"
	NodeExporter      = "node-exporter"
	PrometheusAdapter = "prometheus-adapter"
	Reaper            = "reaper"
	NCCLTests         = "nccl-tests"
	HPCG              = "hpcg"
	PyTorch           = "pytorch"
	ClusterAutoscaler = "cluster-autoscaler"
	// Pause is the sandbox (pod infrastructure) image containerd runs for every pod. It is set in
	// containerd's configuration by the node bootstrap, not applied by any manifest.
	Pause = "pause"
	// The MPI Operator and the MPI job templates' images (internal/manifests RenderMPI).
	MPIOperator = "mpi-operator"
	LAMMPS      = "lammps"
	OpenFOAM    = "openfoam"
	Horovod     = "horovod"
	// Kueue's manager, in the Kueue add-on (internal/manifests AddonKueue).
	Kueue = "kueue"
	// The project's own GPU health agent (cmd/gpucluster-gpu-health-agent), in its add-on
	// (internal/manifests AddonGPUHealthAgent).
	GPUHealthAgent = "gpu-health-agent"
)

// What puts an image on the cluster (Image.By).
const (
	// ByAddons: the add-on manifests of internal/manifests (Addons, Render), the zero value.
	ByAddons = ""
	// ByBootstrap: the node bootstrap (internal/bootstrap): the CNI and containerd's configuration.
	ByBootstrap = "bootstrap"
	// ByMPI: the MPI Operator and job templates (internal/manifests RenderMPI).
	ByMPI = "mpi"
)

// Image is one pinned container image.
type Image struct {
	// Name is the table key (one of the constants above).
	Name string
	// Registry is the host the image is pulled from.
	Registry string
	// Repository is the path inside the registry.
	Repository string
	// Tag is the pinned version.
	Tag string
	// Digest is the sha256 digest of the tag's multi-arch image index ("sha256:<64 hex>"), empty
	// where no public source documents one (TestDigestsStillMissing lists those).
	Digest string
	// DigestSource is where the digest is published: a repository and path, or a URL.
	DigestSource string
	// Purpose says in one sentence what the image does on the cluster (for the guide).
	Purpose string
	// By is what renders the image: ByAddons, ByBootstrap or ByMPI.
	By string
}

// Ref is the upstream reference a pod spec names: registry/repository:tag@digest, or
// registry/repository:tag for a row without a digest. With both, the container runtime pulls by
// the digest and the tag is there for people.
func (i Image) Ref() string {
	return i.refAt(i.Registry + "/" + i.Repository)
}

// Upstream is registry/repository, without tag or digest: the name a sync copies from.
func (i Image) Upstream() string { return i.Registry + "/" + i.Repository }

func (i Image) refAt(name string) string {
	ref := fmt.Sprintf("%s:%s", name, i.Tag)
	if i.Digest != "" {
		ref += "@" + i.Digest
	}
	return ref
}

// TagRef is registry/repository:tag, without the digest: what a sync tool copies.
func (i Image) TagRef() string { return fmt.Sprintf("%s/%s:%s", i.Registry, i.Repository, i.Tag) }

// Short is the last element of the repository path, the name the image has in a mirror registry
// (MirrorName): "flannel-io/flannel" -> "flannel", "nvidia/k8s/dcgm-exporter" -> "dcgm-exporter".
func (i Image) Short() string {
	return i.Repository[strings.LastIndex(i.Repository, "/")+1:]
}

// table is every image, in the order the guide lists them.
var table = []Image{
	// v0.27.4 with the CNI plugin build its release manifest names (v1.8.0-flannel1), as listed in
	// https://github.com/flannel-io/flannel/releases/tag/v0.27.4 (kube-flannel.yml). The VXLAN
	// backend needs nothing from the VPC (no route entry per node), and flannel leaves the hosts'
	// eRDMA devices alone, so NCCL over eRDMA in host-network pods is unaffected.
	{Name: Flannel, By: ByBootstrap, Registry: "ghcr.io", Repository: "flannel-io/flannel", Tag: "v0.27.4",
		Digest:       "sha256:2ff3c5cb44d0e27b09f27816372084c98fa12486518ca95cb4a970f4a1a464c4",
		DigestSource: "github.com/randomcoww/homelab locals.tf (container_images.flannel, v0.27.4)",
		Purpose:      "Pod network (CNI): a VXLAN overlay over the VPC for the pod CIDR the network reserves."},
	//
	// The CNI plugin is v1.9.0-flannel1, not the v1.8.0-flannel1 of v0.27.4's manifest: no public
	// source pins a digest for v1.8.0-flannel1, and v1.9.0-flannel1's is published where it runs
	// with flannel v0.27.4. The init container only copies the flannel CNI binary to
	// /opt/cni/bin; the binary reads the subnet file flanneld writes, unchanged between the two.
	{Name: FlannelCNIPlugin, By: ByBootstrap, Registry: "ghcr.io", Repository: "flannel-io/flannel-cni-plugin", Tag: "v1.9.0-flannel1",
		Digest:       "sha256:c6a08fe5bcb23b19c2fc7c1e47b95a967cc924224ebedf94e8623f27b6c258fa",
		DigestSource: "github.com/randomcoww/homelab locals.tf (container_images.flannel_cni_plugin, v1.9.0-flannel1)",
		Purpose:      "Installs the flannel CNI binary on each node (init container of the flannel DaemonSet)."},
	// v0.17.0: the release the manifests were written against; it takes the DEVICE_LIST_STRATEGY
	// and FAIL_ON_INIT_ERROR settings the DaemonSet sets.
	{Name: DevicePlugin, Registry: "nvcr.io", Repository: "nvidia/k8s-device-plugin", Tag: "v0.17.0",
		Digest:       "sha256:7089559ce6153018806857f5049085bae15b3bf6f1c8bd19d8b12f707d087dea",
		DigestSource: "github.com/kubernetes/minikube pkg/minikube/assets/addons.go (nvidia-device-plugin addon, registry nvcr.io)",
		Purpose:      "Advertises each node's GPUs to the kubelet as nvidia.com/gpu, so pods can request them."},
	// DCGM 3.3.9 / exporter 3.6.1: Kubernetes mode (DCGM_EXPORTER_KUBERNETES) labels each GPU's
	// series with the pod and namespace holding it, which the alert rules and the adapter select on.
	// The digest is the one a GPU Operator node's kubelet reports for this tag (the node status in
	// the source also lists k8s-device-plugin:v0.17.0 with the digest of the row above).
	{Name: DCGMExporter, Registry: "nvcr.io", Repository: "nvidia/k8s/dcgm-exporter", Tag: "3.3.9-3.6.1-ubuntu22.04",
		Digest:       "sha256:3d4e0dfa5fc4d7d12689d29fc6b56cd6c610750e8d187a393882e341fbba6c12",
		DigestSource: "github.com/edgexr/edge-cloud-platform pkg/k8smgmt/cluster_test.go (kubectl get nodes sample: node status images, dcgm-exporter:3.3.9-3.6.1-ubuntu22.04)",
		Purpose:      "Exports GPU utilisation, memory, temperature and XID errors per GPU and per pod."},
	// 2.x (not 3.x): the rules are checked by promtool 2.x in the tests, and 2.55 is the last 2.x
	// feature release.
	{Name: Prometheus, Registry: "quay.io", Repository: "prometheus/prometheus", Tag: "v2.55.1",
		Digest:       "sha256:2659f4c2ebb718e7695cb9b25ffa7d6be64db013daba13e05c875451cf51b0d3",
		DigestSource: "github.com/open-telemetry/opentelemetry-ebpf-instrumentation internal/test/integration/dockerutil_test.go (imgPrometheus)",
		Purpose:      "Scrapes dcgm-exporter and node-exporter and evaluates the scenario's GPU alert rules."},
	// 0.27: reads the routing config amtool checks in the tests (same schema since 0.25). The
	// quay.io digest below is also the one pinned for docker.io/prom/alertmanager:v0.27.0 in many
	// repositories: the Prometheus project pushes the same index to both registries.
	{Name: Alertmanager, Registry: "quay.io", Repository: "prometheus/alertmanager", Tag: "v0.27.0",
		Digest:       "sha256:e13b6ed5cb929eeaee733479dce55e10eb3bc2e9c4586c705a4e8da41e5eacf5",
		DigestSource: "github.com/softwarefactory-project/sf-infra playbooks/host_vars/prometheus.monitoring.softwarefactory-project.io.dhall at ddfdb901 (container_images.alertmanager, quay.io, 0.27.0)",
		Purpose:      "Routes the GPU alerts with the scenario's routing (grouping, receivers, inhibition)."},
	// 11.3: reads the dashboard's schemaVersion 39 and file provisioning unchanged.
	{Name: Grafana, Registry: "docker.io", Repository: "grafana/grafana", Tag: "11.3.0",
		Digest:       "sha256:a0f881232a6fb71a0554a47d0fe2203b6888fe77f4cefb7ea62bed7eb54e13c3",
		DigestSource: "github.com/auxves/infra hosts/tide/services/grafana/default.nix at d856477 (Renovate: grafana/grafana 11.3.0)",
		Purpose:      "Shows the scenario's GPU dashboard, provisioned from a ConfigMap; anonymous viewers only."},
	// 1.8.2: the stable release when this table was written. The digest is also pinned for
	// docker.io/prom/node-exporter:v1.8.2 elsewhere (the same index in both registries).
	{Name: NodeExporter, Registry: "quay.io", Repository: "prometheus/node-exporter", Tag: "v1.8.2",
		Digest:       "sha256:4032c6d5bfd752342c3e631c2f1de93ba6b86c41db6b167b9a35372c139e7706",
		DigestSource: "github.com/auxves/infra hosts/tide/services/prometheus/default.nix at 4bd73eb (Renovate: quay.io/prometheus/node-exporter v1.8.2)",
		Purpose:      "Exports each node's CPU, memory, disk and network metrics."},
	// 0.12.0: serves custom.metrics.k8s.io/v1beta2 and external.metrics.k8s.io/v1beta1, which the
	// autoscaling/v2 HPA reads.
	{Name: PrometheusAdapter, Registry: "registry.k8s.io", Repository: "prometheus-adapter/prometheus-adapter", Tag: "v0.12.0",
		Purpose: "Serves gpu_utilization (per pod) and gpu_pool_utilization to the GPU autoscaler."},
	// The reaper is a standard-library Python script mounted from a ConfigMap: any small python3
	// image runs it; 3.12 has datetime.fromisoformat with offsets. 3.12-alpine is a moving tag: the
	// digest is the index it named when 3.12.14 was current (python:3.12.14-alpine is pinned to the
	// same digest elsewhere), and the node pulls that index whatever the tag names now.
	{Name: Reaper, Registry: "docker.io", Repository: "library/python", Tag: "3.12-alpine",
		Digest:       "sha256:4c47124a8391cb7a9f571164147d154777cf012a4ece5f86097130d7a4478111",
		DigestSource: "github.com/Griggum/hue-gaming Dockerfile (FROM python:3.12-alpine@..., multi-arch for linux/arm64)",
		Purpose:      "Runs the idle-workload reaper, which reclaims opted-in jobs past their maximum runtime."},
	// CUDA 12.2 and NCCL 2.19.3, built by CoreWeave with all_reduce_perf and friends.
	{Name: NCCLTests, Registry: "ghcr.io", Repository: "coreweave/nccl-tests", Tag: "12.2.2-cudnn8-devel-ubuntu22.04-nccl2.19.3-1-868dc3d",
		Purpose: "Runs all_reduce_perf on every node (NVLink/PCIe bus bandwidth) and the training pod template."},
	// NVIDIA's HPCG build for the simulation scenarios (memory-bandwidth-bound like MD and CFD).
	{Name: HPCG, Registry: "nvcr.io", Repository: "nvidia/hpc-benchmarks", Tag: "24.03",
		Purpose: "Runs HPCG on every node of a simulation pool."},
	// 24.03: torchrun, torch with CUDA 12 and NCCL; the same release as the HPCG image.
	{Name: PyTorch, Registry: "nvcr.io", Repository: "nvidia/pytorch", Tag: "24.03-py3",
		Purpose: "Runs the all-reduce across the pool's nodes (the fabric between them)."},
	// 1.36.1 (https://github.com/kubernetes/autoscaler/releases/tag/cluster-autoscaler-1.36.1), the
	// newest release when this row was written: no 1.37 release of the autoscaler existed yet.
	// The autoscaler is released once per Kubernetes minor and supports that minor; on an older
	// cluster, set the manifests' cluster_autoscaler.image to the release of the cluster's minor.
	// The image holds every cloud provider, alicloud included.
	{Name: ClusterAutoscaler, Registry: "registry.k8s.io", Repository: "autoscaling/cluster-autoscaler", Tag: "v1.36.1",
		Digest:       "sha256:461388d03eb5b55db58941ee7a81d9a619dd15302b01cbab9f5a9946715994b4",
		DigestSource: "github.com/steven-cutting/knarr docs/decisions/0003-tool-manager.md (Cluster Autoscaler image pins, v1.36.1)",
		Purpose:      "Sizes each autoscaling node pool's Auto Scaling group between its bounds (alicloud provider): adds nodes for pending pods, removes idle GPU nodes."},
	// 3.10: the pause image kubeadm pulls from Kubernetes 1.31 (its constants.PauseVersion); the
	// node bootstrap sets it as containerd's sandbox image, replacing containerd 1.7's default
	// pause:3.8, so the image containerd starts every pod with is the one kubeadm pre-pulled.
	{Name: Pause, By: ByBootstrap, Registry: "registry.k8s.io", Repository: "pause", Tag: "3.10",
		Digest:       "sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a",
		DigestSource: "github.com/cilium/alpine-curl Dockerfile (FROM registry.k8s.io/pause:3.10@...)",
		Purpose:      "The sandbox container containerd starts first in every pod (holds the pod's network namespace)."},
	// The MPI Operator of deploy/v2beta1/mpi-operator.yaml at internal/manifests
	// MPIOperatorVersion (v0.8.0); its CRD must come from the same release.
	{Name: MPIOperator, By: ByMPI, Registry: "docker.io", Repository: "mpioperator/mpi-operator", Tag: "0.8.0",
		Purpose: "Runs MPIJobs: starts the launcher and one worker pod per node and gives them SSH keys and a hostfile."},
	// NVIDIA's NGC LAMMPS build (Kokkos CUDA, `lmp`), for the molecular-dynamics job template.
	{Name: LAMMPS, By: ByMPI, Registry: "nvcr.io", Repository: "hpc/lammps", Tag: "patch_15Jun2023",
		Purpose: "Runs the molecular-dynamics MPIJob template and its scaling-efficiency validation (LAMMPS)."},
	// OpenCFD's OpenFOAM (with OpenMPI) for the CFD job template.
	{Name: OpenFOAM, By: ByMPI, Registry: "docker.io", Repository: "opencfd/openfoam-default", Tag: "2406",
		Digest:       "sha256:dd5aa20630a55722663bf83ba0cb74870cba130081303e32e3865007fa2aa35a",
		DigestSource: "github.com/holyglory/XFoilFOAM scripts/deploy/reconstruct-opencfd-2406-image.sh (BASE_IMAGE, opencfd/openfoam-default:2406)",
		Purpose:      "Runs the CFD MPIJob template (OpenFOAM)."},
	// Horovod with PyTorch, NCCL and OpenMPI for the synthetic Horovod job template.
	{Name: Horovod, By: ByMPI, Registry: "docker.io", Repository: "horovod/horovod", Tag: "0.28.1",
		Purpose: "Runs the Horovod synthetic-benchmark MPIJob template."},
	// Kueue at manifests.KueueVersion: the image the release's manifests.yaml names
	// (https://github.com/kubernetes-sigs/kueue/releases/tag/v0.17.0).
	{Name: Kueue, By: ByMPI, Registry: "registry.k8s.io", Repository: "kueue/kueue", Tag: "v0.17.0",
		Purpose: "Runs Kueue's manager: admits MPIJobs and Jobs whole against the teams' GPU quotas (gang admission) and serves Kueue's webhooks."},
	// The project's own image, built from cmd/gpucluster-gpu-health-agent/Dockerfile (distroless
	// static, the agent's one binary). The project's CI does not build it: the GPU health guide
	// says how to build and push it to the registry the add-ons pull from. Its digest is known only
	// once it is pushed.
	{Name: GPUHealthAgent, Registry: "ghcr.io", Repository: "gpucluster/gpu-health-agent", Tag: "0.1.0",
		Purpose: "Watches each GPU node's XIDs and row remaps from dcgm-exporter: taints a node with a failing GPU, evicts its GPU pods and asks its pool for a new instance."},
}

// All returns every pinned image, in the guide's order.
func All() []Image { return slices.Clone(table) }

// Get returns the image called name; it panics on a name not in the table, which is a programming
// error caught by any test that renders.
func Get(name string) Image {
	for _, i := range table {
		if i.Name == name {
			return i
		}
	}
	panic("images: no image named " + name)
}

// Ref is Get(name).Ref().
func Ref(name string) string { return Get(name).Ref() }

// Refs returns the set of every pinned reference.
func Refs() map[string]bool {
	m := make(map[string]bool, len(table))
	for _, i := range table {
		m[i.Ref()] = true
	}
	return m
}
