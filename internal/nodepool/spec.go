// Package nodepool is the node pool's multi-step cloud workflows: growing a fixed pool across
// zones and instance types (grow.go), bringing it to a new plan with rolling waves
// (reconcile.go), adopting what an interrupted apply left (adopt.go), deleting it (delete.go),
// keeping a control plane's load balancer equal to its nodes (backends.go), and an autoscaling
// pool's scaling group (scaling_group.go, scaling_roll.go). Everything here takes a resolved Spec
// and a *cloud.Client: no Terraform types, so each workflow is tested against the in-process
// emulator (internal/cloud/cloudtest) without the CLI. internal/provider turns the plan into a
// Spec and the outcomes into state and diagnostics.
package nodepool

import (
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/upload"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// Spec is a node pool's configuration resolved against the catalog and its network: what every
// RunInstances call, and an autoscaling pool's scaling group, is built from.
type Spec struct {
	PoolID      string
	Name        string
	Scenario    string
	Network     Network
	Types       []string // planned type first, then the catalog's next candidates
	Fallback    bool
	Zones       []string
	Size        int
	MinSize     int
	ImageID     string
	RAMRole     string // the nodes' instance RAM role, "" for none
	SystemDisk  Disk
	DataDisks   []Disk
	Spot        string
	SpotLimit   float64
	AutoRelease time.Duration
	UserData    string
	// Bundle is the node bootstrap bundle UserData's stub fetches (bootstrap_bundle), nil when
	// the user data carries the bootstrap itself: the provider uploads it before any node is
	// asked for.
	Bundle     *upload.Prepared
	UserTags   map[string]string
	Labels     map[string]string
	Taints     []string
	Role       string
	ERDMA      bool
	HPCCluster string
	// ClusterUpgrade is a control-plane pool's bootstrap.KubeadmUpgradeScript for its nodes'
	// release, run before its nodes roll (cluster_upgrade.go); "" for none.
	ClusterUpgrade string
	// LoadBalancerID is a control plane's endpoint load balancer ("" for none).
	LoadBalancerID string
	MaxUnavail     int
	// JoinTimeout is how long a roll's wave waits for its new nodes to join before the next
	// wave goes (join_wait.go); 0 does not wait (a pool without the provider's bootstrap).
	JoinTimeout time.Duration
	// DrainTimeout is how long a node about to be stopped by a roll or a shrink may take to
	// drain itself through the Eviction API (drain_first.go); 0 does not drain.
	DrainTimeout time.Duration
	SpecHash     string
	// Autoscale is set for an autoscaling pool (scaling_group.go); Size is then its max_size and
	// MinSize its min_size.
	Autoscale *Autoscale
	// Acceptance is the pool's acceptance gate (acceptance.go); nil for none.
	Acceptance *Gate
}

// Disk is a system or data disk of every node.
type Disk struct {
	Category string
	Level    string
	SizeGiB  int
}

func (d Disk) cloudDisk() cloud.Disk {
	return cloud.Disk{Category: d.Category, PerformanceLevel: d.Level, SizeGiB: d.SizeGiB}
}

// Autoscale is the autoscaling part of a resolved pool.
type Autoscale struct {
	Min, Max int
	Mix      cloud.SpotMix
	// Budget is the most the pool may cost per hour at Max nodes (0: no limit).
	Budget float64
}

// Network is what a node pool takes from its gpucluster_rdma_network, read from the cloud
// objects the network created (its id is its security group's id).
type Network struct {
	ID              string
	Name            string
	VPCID           string
	SecurityGroupID string
	ERDMA           bool
	// Zones in id order, each with its vSwitch.
	Zones      []string
	VSwitchIDs map[string]string
	// VSwitchCIDRs and FreeAddresses are each vSwitch's block and free private addresses
	// (DescribeVSwitches AvailableIpAddressCount) by vSwitch id, as read with the network: the
	// pool's plan check holds its new nodes to them.
	VSwitchCIDRs  map[string]string
	FreeAddresses map[string]int
	// Placement is none, low_latency or spread; DeploymentSets lists the placement groups in
	// their numbered order with how many instances each holds already.
	Placement      string
	DeploymentSets []DeploymentSetUse
	HPCClusterID   string
	// Egress is the network's egress mode (nat, none, existing; "" for a network made before
	// egress existed, taken as having a route out).
	Egress string
}

// DeploymentSetUse is one placement group of the network and how many instances it holds.
type DeploymentSetUse struct {
	ID        string
	Instances int
}

// SpotForPrice is the spot strategy to price the pool's nodes with ("" for pay-as-you-go).
func (s Spec) SpotForPrice() string {
	if s.Spot == "NoSpot" {
		return ""
	}
	return s.Spot
}

// InstanceIDs are the ids of the instances, in their order.
func InstanceIDs(in []cloud.Instance) []string {
	out := make([]string, 0, len(in))
	for _, i := range in {
		out = append(out, i.ID)
	}
	return out
}
