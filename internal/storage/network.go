package storage

import (
	"context"
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
)

// Network is where a file system's mount target goes.
type Network struct{ VpcID, VSwitchID, ZoneID string }

// ResolveNetwork finds the VPC, vSwitch and zone from vswitchID when given, else from the
// gpucluster_rdma_network networkID (network.Lookup): the first of its vSwitches by zone is used.
// vpcID, when given, must be the vSwitch's or the network's.
func ResolveNetwork(ctx context.Context, c *cloud.Client, networkID, vpcID, vswitchID string) (Network, error) {
	if vswitchID != "" {
		sw, err := c.FindVSwitch(ctx, vswitchID)
		if err != nil {
			return Network{}, fmt.Errorf("vswitch_id %s: %w", vswitchID, err)
		}
		if vpcID != "" && sw.VPCID != vpcID {
			return Network{}, fmt.Errorf("vSwitch %s is in VPC %s, not in vpc_id %s: fix vpc_id or leave it out", vswitchID, sw.VPCID, vpcID)
		}
		return Network{VpcID: sw.VPCID, VSwitchID: sw.ID, ZoneID: sw.ZoneID}, nil
	}
	if networkID == "" {
		return Network{}, fmt.Errorf("no network_id and no vswitch_id: a file system needs a vSwitch for its mount target")
	}
	n, err := network.Lookup(ctx, c, networkID, vpcID)
	if err != nil {
		return Network{}, err
	}
	sw := n.VSwitches[0]
	return Network{VpcID: n.VPCID, VSwitchID: sw.ID, ZoneID: sw.ZoneID}, nil
}
