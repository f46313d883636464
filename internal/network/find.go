package network

// How every resource finds a gpucluster_rdma_network from its id. The network keeps no state of
// its own in the cloud beyond its objects: its id is its security group's id, the settings that
// have no cloud object ride on the group's gpucluster:options tag, its vSwitches carry
// gpucluster:network-id = <id>, and its deployment sets and HPC cluster (which take no tags)
// are named after the id.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// Options are the settings that have no cloud object of their own; they ride on the
// security group's gpucluster:options tag so import can rebuild them exactly.
type Options struct {
	CIDRBlock      string
	ERDMA          bool
	AllowPublicSSH bool
	OwnsVPC        bool
	// Egress is the egress mode (nat, none or existing), which node pools read to refuse a
	// bootstrap that needs the internet on a network without a way out. "" on a network made
	// before the provider had egress.
	Egress string
}

func (o Options) Encode() string {
	s := fmt.Sprintf("cidr=%s,erdma=%t,public_ssh=%t,own_vpc=%t", o.CIDRBlock, o.ERDMA, o.AllowPublicSSH, o.OwnsVPC)
	if o.Egress != "" {
		s += ",egress=" + o.Egress
	}
	return s
}

func DecodeOptions(s string) (Options, bool) {
	var o Options
	seen := 0
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		b, _ := strconv.ParseBool(v)
		switch k {
		case "cidr":
			o.CIDRBlock = v
		case "erdma":
			o.ERDMA = b
		case "public_ssh":
			o.AllowPublicSSH = b
		case "own_vpc":
			o.OwnsVPC = b
		case "egress":
			o.Egress = v
			continue // optional: not counted
		default:
			continue
		}
		seen++
	}
	return o, seen == 4
}

// Deployment sets and HPC clusters take no tags: their names carry the network id instead, and
// the network id never changes.
func DeploymentSetPrefix(networkID string) string { return "gpucluster-" + networkID + "-pg-" }

func HPCClusterName(networkID string) string { return "gpucluster-" + networkID }

// Record is a network as its security group and vSwitches record it.
type Record struct {
	ID    string
	Name  string
	VPCID string
	// Options are decoded from the security group's tag; OptionsOK is false when the tag is
	// missing or malformed.
	Options   Options
	OptionsOK bool
	// VSwitches tagged with the network's id, sorted by zone.
	VSwitches []cloud.VSwitch
}

// Lookup reads a network by id for a resource that uses it: its security group and its
// vSwitches (two calls). vpcID, when given, must be the network's VPC. A network that does not
// exist, or has no vSwitch, is an error that says what to fix.
func Lookup(ctx context.Context, c *cloud.Client, id, vpcID string) (Record, error) {
	g, err := c.FindSecurityGroup(ctx, id)
	if cloud.IsNotFound(err) {
		return Record{}, fmt.Errorf("network %s does not exist (no security group with that id): create the gpucluster_rdma_network first, or fix network_id", id)
	}
	if err != nil {
		return Record{}, fmt.Errorf("reading network %s: %w", id, err)
	}
	if vpcID != "" && g.VPCID != vpcID {
		return Record{}, fmt.Errorf("network %s is in VPC %s, not in vpc_id %s: fix vpc_id or leave it out", id, g.VPCID, vpcID)
	}
	opts, ok := DecodeOptions(g.Tags[tagging.Options])
	n := Record{ID: id, Name: g.Tags[tagging.Network], VPCID: g.VPCID, Options: opts, OptionsOK: ok}
	n.VSwitches, err = VSwitches(ctx, c, g.VPCID, id)
	if err != nil {
		return Record{}, fmt.Errorf("reading the vSwitches of network %s: %w", id, err)
	}
	if len(n.VSwitches) == 0 {
		return Record{}, fmt.Errorf("network %s has no vSwitch tagged %s=%s: it was not created by gpucluster_rdma_network, or is half deleted", id, tagging.NetworkID, id)
	}
	return n, nil
}

// VSwitches lists the vSwitches of the network in its VPC, sorted by zone.
func VSwitches(ctx context.Context, c *cloud.Client, vpcID, networkID string) ([]cloud.VSwitch, error) {
	list, err := c.FindVSwitches(ctx, vpcID, map[string]string{tagging.NetworkID: networkID})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].ZoneID < list[j].ZoneID })
	return list, nil
}

// placementSets reads the network's deployment sets, indexed by the number in their name.
func placementSets(ctx context.Context, c *cloud.Client, networkID string) (map[int]cloud.DeploymentSet, error) {
	prefix := DeploymentSetPrefix(networkID)
	list, err := c.FindDeploymentSetsByPrefix(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := map[int]cloud.DeploymentSet{}
	for _, ds := range list {
		i, err := strconv.Atoi(strings.TrimPrefix(ds.Name, prefix))
		if err != nil || i < 0 {
			continue
		}
		out[i] = ds
	}
	return out, nil
}

// Placement reads the network's placement groups in their numbered order, stopping at
// the first gap (the groups after it count as missing, and an apply fills them in), and the
// placement their strategy implies: none without groups.
func Placement(ctx context.Context, c *cloud.Client, networkID string) (string, []cloud.DeploymentSet, error) {
	sets, err := placementSets(ctx, c, networkID)
	if err != nil {
		return "", nil, err
	}
	placement := netplan.PlacementNone
	var out []cloud.DeploymentSet
	for i := 0; i < len(sets); i++ {
		ds, ok := sets[i]
		if !ok {
			break
		}
		placement = netplan.PlacementFromStrategy(ds.Strategy)
		out = append(out, ds)
	}
	return placement, out, nil
}

// HPC returns the network's HPC cluster, or nil when it has none.
func HPC(ctx context.Context, c *cloud.Client, networkID string) (*cloud.HPCCluster, error) {
	h, err := c.FindHpcClusterByName(ctx, HPCClusterName(networkID))
	if cloud.IsNotFound(err) {
		return nil, nil
	}
	return h, err
}
