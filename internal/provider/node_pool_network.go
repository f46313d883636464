package provider

import (
	"context"
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
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
	// Egress is the network's egress mode (nat, none, existing; "" for a network made before
	// egress existed, taken as having a route out).
	Egress string
}

type deploymentSetUse struct {
	ID        string
	Instances int
}

// loadPoolNetwork reads a network by id: security group (settings ride on its tags), vSwitches,
// deployment sets and HPC cluster. A handful of calls, once per create or update.
func loadPoolNetwork(ctx context.Context, c *cloud.Client, id string) (poolNetwork, error) {
	rec, err := lookupNetwork(ctx, c, id, "")
	if err != nil {
		return poolNetwork{}, err
	}
	n := poolNetwork{
		ID:              id,
		Name:            rec.Name,
		VPCID:           rec.VPCID,
		SecurityGroupID: id,
		ERDMA:           rec.Options.ERDMA,
		Egress:          rec.Options.Egress,
		VSwitchIDs:      map[string]string{},
	}
	for _, sw := range rec.VSwitches {
		n.VSwitchIDs[sw.ZoneID] = sw.ID
		n.Zones = append(n.Zones, sw.ZoneID)
	}
	placement, sets, err := networkPlacement(ctx, c, id)
	if err != nil {
		return poolNetwork{}, fmt.Errorf("reading the placement groups of network %s: %w", id, err)
	}
	n.Placement = placement
	for _, ds := range sets {
		n.DeploymentSets = append(n.DeploymentSets, deploymentSetUse{ID: ds.ID, Instances: ds.Instances})
	}
	hpc, err := networkHPC(ctx, c, id)
	if err != nil {
		return poolNetwork{}, fmt.Errorf("reading the HPC cluster of network %s: %w", id, err)
	}
	if hpc != nil {
		n.HPCClusterID = hpc.ID
	}
	return n, nil
}
