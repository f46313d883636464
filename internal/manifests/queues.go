package manifests

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Gang scheduling and team queues are Kueue's (kueue.x-k8s.io). Kueue admits a workload whole or
// not at all against a ClusterQueue's quota, and with waitForPodsReady it also evicts and requeues
// a workload whose pods are not all running within a timeout, so a 16-rank MPIJob never holds 9
// nodes while it waits for 7 more. It keeps the default kube-scheduler, supports the MPI
// Operator's MPIJob natively (integration kubeflow.org/mpijob) and models teams, quotas and
// borrowing (ClusterQueues in one cohort) directly. Volcano does gang scheduling too but replaces
// the scheduler for the jobs it handles and expresses team shares as queue weights rather than
// GPU counts.
//
// The objects are written as Kueue v1beta2 (the storage version since Kueue v0.15; v1beta1 is
// deprecated there). Their Go types are not imported: the module sigs.k8s.io/kueue brings
// controller-runtime and much of Kubernetes into the provider's build. The minimal structs below
// carry only the fields rendered here; tools/manifestcheck decodes the rendered objects strictly
// into Kueue's own types.
const (
	// KueueVersion is the Kueue release the objects and the manager configuration are written for.
	KueueVersion = "v0.17.0"
	// KueueAPIVersion is the API version of ResourceFlavor, ClusterQueue and LocalQueue.
	KueueAPIVersion = "kueue.x-k8s.io/v1beta2"
	// KueueNamespace is where Kueue's release manifest installs the manager.
	KueueNamespace = "kueue-system"
	// KueueConfigMapName is the manager's configuration in the release manifest; the rendered one
	// replaces it.
	KueueConfigMapName = "kueue-manager-config"
	// QueueNameLabel submits a job to the LocalQueue it names.
	QueueNameLabel = "kueue.x-k8s.io/queue-name"
	// TeamsCohort is the cohort every team's ClusterQueue belongs to: unused quota of one team is
	// lent to the others and reclaimed (by preemption) when its owner needs it.
	TeamsCohort = "gpucluster-teams"
	// PoolLabel is the node label naming a node's pool (set by gpucluster_node_pool).
	PoolLabel = "gpucluster.io/pool"
	// DefaultTeam is the team created when no teams are given: all the pools' GPUs, in the
	// workload namespace.
	DefaultTeam = "default"
	// PodsReadyTimeout is how long Kueue waits for every pod of an admitted workload to run before
	// it evicts and requeues the whole workload. Long enough to pull a multi-GB HPC image.
	PodsReadyTimeout = "15m"
)

// Pool is one GPU node pool MPI jobs and team queues use; its name is the pool's PoolLabel value.
type Pool struct {
	Name        string
	Nodes       int
	GPUsPerNode int
}

// GPUs is the pool's GPU count.
func (p Pool) GPUs() int { return p.Nodes * p.GPUsPerNode }

// Team is one research team: a guaranteed GPU quota on one pool, a namespace whose LocalQueue
// submits to the team's ClusterQueue, and borrowing of other teams' unused GPUs.
type Team struct {
	GPUs int
	// Namespace defaults to the team's name.
	Namespace string
	// Pool is where the quota is; it defaults to the first pool by name.
	Pool string
	// everyPool is the default team's quota: each pool's GPUs on that pool.
	everyPool bool
}

// Kueue v1beta2 objects, only the fields rendered here (see the package comment above).
type (
	resourceFlavor struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              resourceFlavorSpec `json:"spec"`
	}
	resourceFlavorSpec struct {
		NodeLabels  map[string]string   `json:"nodeLabels,omitempty"`
		Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	}
	clusterQueue struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              clusterQueueSpec `json:"spec"`
	}
	clusterQueueSpec struct {
		CohortName        string                `json:"cohortName"`
		NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
		QueueingStrategy  string                `json:"queueingStrategy"`
		ResourceGroups    []resourceGroup       `json:"resourceGroups"`
		Preemption        *queuePreemption      `json:"preemption"`
	}
	resourceGroup struct {
		CoveredResources []corev1.ResourceName `json:"coveredResources"`
		Flavors          []flavorQuotas        `json:"flavors"`
	}
	flavorQuotas struct {
		Name      string          `json:"name"`
		Resources []resourceQuota `json:"resources"`
	}
	resourceQuota struct {
		Name         corev1.ResourceName `json:"name"`
		NominalQuota resource.Quantity   `json:"nominalQuota"`
	}
	queuePreemption struct {
		ReclaimWithinCohort string `json:"reclaimWithinCohort"`
		WithinClusterQueue  string `json:"withinClusterQueue"`
	}
	localQueue struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              localQueueSpec `json:"spec"`
	}
	localQueueSpec struct {
		ClusterQueue string `json:"clusterQueue"`
	}
)

// withTeamDefaults checks pools and teams and fills the teams' defaults. The quota check is the
// one that matters: Kueue accepts nominal quotas that add up to more GPUs than the pool has, and
// then admits jobs that can never all be placed, which is the partial placement the queues are
// meant to prevent.
func withTeamDefaults(o Options, pools []Pool, teams map[string]Team) (map[string]Team, error) {
	if len(teams) == 0 {
		total := 0
		for _, p := range pools {
			total += p.GPUs()
		}
		return map[string]Team{DefaultTeam: {GPUs: total, Namespace: o.WorkloadNamespace, Pool: pools[0].Name, everyPool: true}}, nil
	}
	byPool := map[string]int{}
	out := make(map[string]Team, len(teams))
	for _, name := range slices.Sorted(maps.Keys(teams)) {
		t := teams[name]
		field := planerr.Key("mpi.teams", name)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			return nil, planerr.Input("mpi.teams", name, "is not a team name: "+strings.Join(errs, "; "), "use lower case letters, digits and '-', such as chem")
		}
		if t.GPUs < 0 {
			return nil, planerr.Input(planerr.Join(field, "gpus"), fmt.Sprint(t.GPUs), "is negative", "give the GPUs the team is guaranteed, or 0 to only borrow")
		}
		if t.Namespace == "" {
			t.Namespace = name
		}
		if errs := validation.IsDNS1123Label(t.Namespace); len(errs) > 0 {
			return nil, planerr.Input(planerr.Join(field, "namespace"), t.Namespace, "is not a namespace name: "+strings.Join(errs, "; "), "use lower case letters, digits and '-'")
		}
		if t.Pool == "" {
			t.Pool = pools[0].Name
		}
		if !slices.ContainsFunc(pools, func(p Pool) bool { return p.Name == t.Pool }) {
			return nil, planerr.Input(planerr.Join(field, "pool"), t.Pool, "is not one of the pools", "use one of "+strings.Join(poolNames(pools), ", "))
		}
		byPool[t.Pool] += t.GPUs
		out[name] = t
	}
	for _, p := range pools {
		if sum := byPool[p.Name]; sum > p.GPUs() {
			return nil, planerr.Input("mpi.teams", teamQuotaList(out, p.Name),
				fmt.Sprintf("guarantees %d GPUs on pool %s, which has %d (%d nodes x %d GPUs)", sum, p.Name, p.GPUs(), p.Nodes, p.GPUsPerNode),
				fmt.Sprintf("lower the teams' gpus to a sum of at most %d, or add nodes to the pool; a team may borrow beyond its quota when others leave GPUs unused", p.GPUs()))
		}
	}
	return out, nil
}

func poolNames(pools []Pool) []string {
	out := make([]string, len(pools))
	for i, p := range pools {
		out[i] = p.Name
	}
	return out
}

// teamQuotaList writes the teams of one pool as "chem=32, cfd=16" for an error message.
func teamQuotaList(teams map[string]Team, pool string) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(teams)) {
		if teams[name].Pool == pool {
			parts = append(parts, fmt.Sprintf("%s=%d", name, teams[name].GPUs))
		}
	}
	return strings.Join(parts, ", ")
}

// queues is Kueue's configuration for the pools and teams: the manager configuration (gang
// admission with waitForPodsReady), a ResourceFlavor per pool, and per team a namespace, a
// ClusterQueue and a LocalQueue; and the idle reaper's access to the team namespaces.
func queues(o Options, pools []Pool, teams map[string]Team) ([]object, error) {
	cfg, err := kueueConfigMap()
	if err != nil {
		return nil, err
	}
	objs := []object{cfg}
	for _, p := range pools {
		objs = append(objs, &resourceFlavor{
			TypeMeta: tm(KueueAPIVersion, "ResourceFlavor"), ObjectMeta: meta(p.Name, "", nil),
			// Kueue adds the flavor's node labels and tolerations to the pods it admits on it.
			Spec: resourceFlavorSpec{NodeLabels: map[string]string{PoolLabel: p.Name}, Tolerations: []corev1.Toleration{gpuToleration()}},
		})
	}
	names := slices.Sorted(maps.Keys(teams))
	var teamNamespaces []string
	for _, ns := range slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for _, name := range names {
			if !yield(teams[name].Namespace) {
				return
			}
		}
	})) {
		if ns == o.WorkloadNamespace || ns == "default" || strings.HasPrefix(ns, "kube-") {
			continue // the workload namespace is already in Render's output
		}
		objs = append(objs, &corev1.Namespace{TypeMeta: tm("v1", "Namespace"), ObjectMeta: meta(ns, "", nil)})
		teamNamespaces = append(teamNamespaces, ns)
	}
	// The idle reaper reclaims opted-in jobs in every team namespace too (the MPIJob templates
	// carry ReapLabel): its Role there and the list of namespaces its CronJob visits.
	for _, ns := range teamNamespaces {
		objs = append(objs, reaperAccess(o.Namespace, ns)...)
	}
	if len(teamNamespaces) > 0 {
		objs = append(objs, &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(ReaperNamespacesName, o.Namespace, nil),
			Data: map[string]string{ReaperNamespacesKey: strings.Join(teamNamespaces, " ")}})
	}
	for _, name := range names {
		t := teams[name]
		// The team's own pool first: Kueue tries flavors in order, so a team's jobs land where
		// its quota is and go elsewhere only by borrowing.
		flavors := []flavorQuotas{flavorQuota(t.Pool, t.GPUs)}
		for _, p := range pools {
			switch {
			case t.everyPool && p.Name == t.Pool:
				flavors[0] = flavorQuota(p.Name, p.GPUs())
			case t.everyPool:
				flavors = append(flavors, flavorQuota(p.Name, p.GPUs()))
			case p.Name != t.Pool:
				flavors = append(flavors, flavorQuota(p.Name, 0))
			}
		}
		objs = append(objs, &clusterQueue{
			TypeMeta: tm(KueueAPIVersion, "ClusterQueue"), ObjectMeta: meta(name, "", nil),
			Spec: clusterQueueSpec{
				CohortName: TeamsCohort,
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					"kubernetes.io/metadata.name": t.Namespace,
				}},
				// A gang that does not fit yet does not block smaller jobs behind it.
				QueueingStrategy: "BestEffortFIFO",
				ResourceGroups:   []resourceGroup{{CoveredResources: []corev1.ResourceName{GPUResource}, Flavors: flavors}},
				// A team gets its quota back from borrowers by preemption; within a team,
				// higher-priority jobs may preempt lower ones.
				Preemption: &queuePreemption{ReclaimWithinCohort: "Any", WithinClusterQueue: "LowerPriority"},
			},
		}, &localQueue{
			TypeMeta: tm(KueueAPIVersion, "LocalQueue"), ObjectMeta: meta(name, t.Namespace, nil),
			Spec: localQueueSpec{ClusterQueue: name},
		})
	}
	return objs, nil
}

func flavorQuota(pool string, gpus int) flavorQuotas {
	return flavorQuotas{Name: pool, Resources: []resourceQuota{{Name: GPUResource, NominalQuota: resource.MustParse(fmt.Sprint(gpus))}}}
}

// KueueConfiguration is Kueue's manager configuration (config.kueue.x-k8s.io/v1beta2
// Configuration), the fields set here.
type KueueConfiguration struct {
	APIVersion                 string                `json:"apiVersion"`
	Kind                       string                `json:"kind"`
	Health                     map[string]string     `json:"health"`
	Metrics                    map[string]string     `json:"metrics"`
	Webhook                    map[string]int        `json:"webhook"`
	LeaderElection             map[string]any        `json:"leaderElection"`
	WaitForPodsReady           KueueWaitForPodsReady `json:"waitForPodsReady"`
	Integrations               map[string][]string   `json:"integrations"`
	Resources                  map[string][]string   `json:"resources"`
	ManageJobsWithoutQueueName bool                  `json:"manageJobsWithoutQueueName"`
}

// KueueWaitForPodsReady makes admission all-or-nothing on the nodes, not only on the quota.
type KueueWaitForPodsReady struct {
	Timeout        string `json:"timeout"`
	BlockAdmission bool   `json:"blockAdmission"`
}

// kueueManagerConfig is the release manifest's configuration with gang admission on. Health,
// metrics, webhook and leader election keep the release's values (config/components/manager/
// controller_manager_config.yaml at KueueVersion); the manager reads only this file, so they
// must be repeated.
func kueueManagerConfig() KueueConfiguration {
	return KueueConfiguration{
		APIVersion: "config.kueue.x-k8s.io/v1beta2", Kind: "Configuration",
		Health:         map[string]string{"healthProbeBindAddress": ":8081"},
		Metrics:        map[string]string{"bindAddress": ":8443"},
		Webhook:        map[string]int{"port": 9443},
		LeaderElection: map[string]any{"leaderElect": true, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
		// blockAdmission: while one gang's pods are starting, admit no other; two half-started
		// gangs on a full pool would otherwise wait on each other until the timeout.
		WaitForPodsReady: KueueWaitForPodsReady{Timeout: PodsReadyTimeout, BlockAdmission: true},
		Integrations:     map[string][]string{"frameworks": {"batch/job", "kubeflow.org/mpijob"}},
		// Quotas are GPUs only: pods that also request cpu or memory are still admitted (a
		// ClusterQueue does not admit a workload that requests a resource it does not cover).
		Resources: map[string][]string{"excludeResourcePrefixes": {"cpu", "memory", "ephemeral-storage"}},
		// Jobs without a queue label run as before (validation Jobs, the reaper).
		ManageJobsWithoutQueueName: false,
	}
}

func kueueConfigMap() (object, error) {
	b, err := yaml.Marshal(kueueManagerConfig())
	if err != nil {
		return nil, err
	}
	m := meta(KueueConfigMapName, KueueNamespace, nil)
	// The release manifest's labels on its ConfigMap (config/default/kustomization.yaml), so this
	// object replaces that one and selects the same.
	m.Labels["control-plane"] = "controller-manager"
	m.Labels["app.kubernetes.io/name"] = "kueue"
	return &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: m,
		Data: map[string]string{"controller_manager_config.yaml": string(b)}}, nil
}
