package provider

import (
	"context"
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

// loadPoolNetwork reads a network by id: security group (settings ride on its tags), vSwitches,
// deployment sets and HPC cluster. A handful of calls, once per create or update.
func loadPoolNetwork(ctx context.Context, c *cloud.Client, id string) (nodepool.Network, error) {
	rec, err := network.Lookup(ctx, c, id, "")
	if err != nil {
		return nodepool.Network{}, err
	}
	n := nodepool.Network{
		ID:              id,
		Name:            rec.Name,
		VPCID:           rec.VPCID,
		SecurityGroupID: id,
		ERDMA:           rec.Options.ERDMA,
		Egress:          rec.Options.Egress,
		VSwitchIDs:      map[string]string{},
		VSwitchCIDRs:    map[string]string{},
		FreeAddresses:   map[string]int{},
	}
	for _, sw := range rec.VSwitches {
		n.VSwitchIDs[sw.ZoneID] = sw.ID
		n.VSwitchCIDRs[sw.ID] = sw.CIDRBlock
		n.FreeAddresses[sw.ID] = sw.FreeAddresses
		n.Zones = append(n.Zones, sw.ZoneID)
	}
	placement, sets, err := network.Placement(ctx, c, id)
	if err != nil {
		return nodepool.Network{}, fmt.Errorf("reading the placement groups of network %s: %w", id, err)
	}
	n.Placement = placement
	for _, ds := range sets {
		n.DeploymentSets = append(n.DeploymentSets, nodepool.DeploymentSetUse{ID: ds.ID, Instances: ds.Instances})
	}
	hpc, err := network.HPC(ctx, c, id)
	if err != nil {
		return nodepool.Network{}, fmt.Errorf("reading the HPC cluster of network %s: %w", id, err)
	}
	if hpc != nil {
		n.HPCClusterID = hpc.ID
	}
	return n, nil
}
