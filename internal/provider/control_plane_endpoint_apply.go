package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/network"
)

// loadEndpointNetwork reads the network and picks the vSwitch: vswitchID when given (it must be one
// of the network's), otherwise the network's first (by zone).
func loadEndpointNetwork(ctx context.Context, c *cloud.Client, networkID, vswitchID string) (network.EndpointNetwork, error) {
	n, err := network.Lookup(ctx, c, networkID, "")
	if err != nil {
		return network.EndpointNetwork{}, err
	}
	out := network.EndpointNetwork{ID: n.ID}
	var ids []string
	for _, sw := range n.VSwitches {
		out.CIDRs = append(out.CIDRs, sw.CIDRBlock)
		ids = append(ids, sw.ID)
	}
	switch {
	case vswitchID == "":
		out.VSwitchID = n.VSwitches[0].ID
	case slices.Contains(ids, vswitchID):
		out.VSwitchID = vswitchID
	default:
		return out, &vswitchError{networkID: networkID, vswitchID: vswitchID, have: ids}
	}
	return out, nil
}

// vswitchError: vswitch_id is not one of the network's vSwitches.
type vswitchError struct {
	networkID, vswitchID string
	have                 []string
}

func (e *vswitchError) Error() string {
	return fmt.Sprintf("vswitch_id = %q is not a vSwitch of network %s, whose vSwitches are %s: the load balancer must sit in "+
		"the network its API servers are in. Use one of those, or leave vswitch_id out for the first.", e.vswitchID, e.networkID, strings.Join(e.have, ", "))
}
