package provider

import (
	"context"
	"fmt"
	"sort"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
)

// poolNetwork is what a node pool takes from its gpucluster_rdma_network, read from the cloud
// objects the network created (its id is its security group's id; see resource_rdma_network.go).
type poolNetwork struct {
	ID              string
	Name            string
	VPCID           string
	SecurityGroupID string
	ERDMA           bool
	// Zones in id order, each with its vSwitch.
	Zones      []string
	VSwitchIDs map[string]string
	// Placement is none, low_latency or spread; DeploymentSets lists the placement groups in
	// their numbered order with how many instances each holds already.
	Placement      string
	DeploymentSets []deploymentSetUse
	HPCClusterID   string
}

type deploymentSetUse struct {
	ID        string
	Instances int
}

// loadPoolNetwork reads a network by id: security group (settings ride on its tags), vSwitches,
// deployment sets and HPC cluster. A handful of calls, once per create or update.
func loadPoolNetwork(ctx context.Context, c *cloud.Client, id string) (poolNetwork, error) {
	g, err := c.FindSecurityGroup(ctx, id)
	if err != nil {
		if cloud.IsNotFound(err) {
			return poolNetwork{}, fmt.Errorf("network %s does not exist (its security group is gone): create the gpucluster_rdma_network first, or fix network_id", id)
		}
		return poolNetwork{}, fmt.Errorf("reading network %s: %w", id, err)
	}
	tags := sgTags(g)
	opts, _ := decodeOptions(tags[tagOptions])
	n := poolNetwork{
		ID:              id,
		Name:            tags[tagNetwork],
		VPCID:           g.VpcId,
		SecurityGroupID: id,
		ERDMA:           opts.ERDMA,
		VSwitchIDs:      map[string]string{},
		Placement:       netplan.PlacementNone,
	}
	switches, err := c.FindVSwitches(ctx, g.VpcId, map[string]string{tagNetworkID: id})
	if err != nil {
		return poolNetwork{}, fmt.Errorf("reading the vSwitches of network %s: %w", id, err)
	}
	for _, sw := range switches {
		n.VSwitchIDs[sw.ZoneId] = sw.VSwitchId
		n.Zones = append(n.Zones, sw.ZoneId)
	}
	sort.Strings(n.Zones)
	if len(n.Zones) == 0 {
		return poolNetwork{}, fmt.Errorf("network %s has no vSwitch tagged %s=%s: it was not created by gpucluster_rdma_network, or is half deleted", id, tagNetworkID, id)
	}

	sets, err := placementSets(ctx, c, id)
	if err != nil {
		return poolNetwork{}, fmt.Errorf("reading the placement groups of network %s: %w", id, err)
	}
	for i := 0; i < len(sets); i++ {
		ds, ok := sets[i]
		if !ok {
			break
		}
		n.Placement = netplan.PlacementFromStrategy(ds.Strategy)
		n.DeploymentSets = append(n.DeploymentSets, deploymentSetUse{ID: ds.DeploymentSetId, Instances: ds.InstanceAmount})
	}
	if hpc, err := c.FindHpcClusterByName(ctx, hpcClusterName(id)); err == nil && hpc != nil {
		n.HPCClusterID = hpc.HpcClusterId
	} else if err != nil && !cloud.IsNotFound(err) {
		return poolNetwork{}, fmt.Errorf("reading the HPC cluster of network %s: %w", id, err)
	}
	return n, nil
}
