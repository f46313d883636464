package network

// The cloud side of gpucluster_rdma_network: what create, update and delete do to the network's
// objects, one kind of object per function. internal/provider's resource_rdma_network.go holds
// the Terraform glue.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// SecurityGroupTags is everything the network's security group carries: the user's tags, the
// reserved ones and the settings.
func SecurityGroupTags(in Inputs, opts Options) map[string]string {
	return tagging.Merge(in.Tags, SystemTags(in.Name, ""), map[string]string{tagging.Options: opts.Encode()})
}

// CreateVPC creates the network's VPC with a ClientToken from the request, adopting one an
// interrupted apply left.
func CreateVPC(ctx context.Context, c *cloud.Client, in Inputs) (string, error) {
	tags := tagging.Merge(in.Tags, SystemTags(in.Name, ""))
	desc := "VPC of gpucluster network " + in.Name
	parts := tagging.TokenParts(tags, "CreateVpc", c.Region(), in.Name, in.CIDRBlock, desc)
	return cloud.CreateOrAdopt("VPC", parts, func(token string) (string, error) {
		return c.CreateVPC(ctx, cloud.VPCInput{Name: in.Name, CIDRBlock: in.CIDRBlock, Description: desc, Tags: tags, ClientToken: token})
	}, func(id string) error { _, err := c.FindVPC(ctx, id); return err })
}

func CreateSecurityGroup(ctx context.Context, c *cloud.Client, vpcID string, in Inputs, opts Options) (string, error) {
	tags := SecurityGroupTags(in, opts)
	desc := "Cluster security group of gpucluster network " + in.Name
	parts := tagging.TokenParts(tags, "CreateSecurityGroup", c.Region(), vpcID, in.Name, desc)
	return cloud.CreateOrAdopt("security group", parts, func(token string) (string, error) {
		return c.CreateSecurityGroup(ctx, cloud.SecurityGroupInput{VPCID: vpcID, Name: in.Name, Description: desc, Tags: tags, ClientToken: token})
	}, func(id string) error { _, err := c.FindSecurityGroup(ctx, id); return err })
}

func createVSwitch(ctx context.Context, c *cloud.Client, vpcID, networkID, zone, cidr string, in Inputs) (string, error) {
	tags := tagging.Merge(in.Tags, SystemTags(in.Name, networkID))
	name := VSwitchName(in.Name, zone)
	parts := tagging.TokenParts(tags, "CreateVSwitch", c.Region(), vpcID, zone, cidr, name)
	id, err := cloud.CreateOrAdopt("vSwitch", parts, func(token string) (string, error) {
		return c.CreateVSwitch(ctx, cloud.VSwitchInput{VPCID: vpcID, ZoneID: zone, CIDRBlock: cidr, Name: name, Tags: tags, ClientToken: token})
	}, func(id string) error { _, err := c.FindVSwitch(ctx, id); return err })
	if err != nil {
		return "", err
	}
	if _, err := c.WaitVSwitchAvailable(ctx, id); err != nil {
		return "", err
	}
	return id, nil
}

// --- security group rules ---

// ActualRules reads the ingress rules of the security group, with their ids. Rules a
// gpucluster_control_plane_endpoint owns are left out: they are not the network's to show,
// restore or revoke.
func ActualRules(ctx context.Context, c *cloud.Client, sgID string) ([]netplan.Rule, map[string]string, error) {
	perms, err := c.SecurityGroupIngress(ctx, sgID)
	if err != nil {
		return nil, nil, err
	}
	rules := make([]netplan.Rule, 0, len(perms))
	ids := map[string]string{}
	for _, p := range perms {
		r := RuleFromCloud(p)
		if netplan.EndpointRuleOwner(r) != "" {
			continue
		}
		rules = append(rules, r)
		ids[r.Key()] = p.RuleID
	}
	netplan.SortRules(rules)
	return rules, ids, nil
}

// ReconcileRules makes the group's ingress rules the desired set: it authorises what is missing
// first and revokes what is extra second, so access in both sets never drops.
func ReconcileRules(ctx context.Context, c *cloud.Client, sgID string, desired []netplan.Rule) error {
	actual, ids, err := ActualRules(ctx, c, sgID)
	if err != nil {
		return fmt.Errorf("reading the rules: %w", err)
	}
	add, remove := netplan.DiffRules(desired, actual)
	grant := make([]cloud.IngressRule, 0, len(add))
	for _, r := range add {
		grant = append(grant, RuleToCloud(r))
	}
	if err := c.AuthorizeIngress(ctx, sgID, grant); err != nil {
		return err
	}
	var ruleIDs []string
	for _, r := range remove {
		if id := ids[r.Key()]; id != "" {
			ruleIDs = append(ruleIDs, id)
		}
	}
	return c.RevokeIngress(ctx, sgID, ruleIDs)
}

// --- deployment sets and the HPC cluster ---

// ReconcilePlacement makes the network's deployment sets n sets of the placement's strategy,
// numbered 0..n-1: sets of another strategy or beyond n are deleted, missing ones created.
func ReconcilePlacement(ctx context.Context, c *cloud.Client, networkID, name, placement string, n int) ([]string, error) {
	have, err := placementSets(ctx, c, networkID)
	if err != nil {
		return nil, fmt.Errorf("listing deployment sets: %w", err)
	}
	strategy := netplan.Strategy(placement)
	for i, ds := range have {
		if i >= n || ds.Strategy != strategy {
			if err := c.DeleteDeploymentSet(ctx, ds.ID); err != nil {
				return nil, err
			}
			delete(have, i)
		}
	}
	ids := make([]string, n)
	for i := 0; i < n; i++ {
		if ds, ok := have[i]; ok {
			ids[i] = ds.ID
			continue
		}
		dsName := DeploymentSetPrefix(networkID) + strconv.Itoa(i)
		desc := fmt.Sprintf("placement group %d of gpucluster network %s", i, name)
		id, err := cloud.CreateOrAdopt("deployment set "+dsName, []string{"CreateDeploymentSet", c.Region(), dsName, strategy, desc},
			func(token string) (string, error) {
				return c.CreateDeploymentSet(ctx, cloud.DeploymentSetInput{Name: dsName, Description: desc, Strategy: strategy, ClientToken: token})
			},
			func(id string) error { _, err := c.FindDeploymentSet(ctx, id); return err })
		if err != nil {
			return nil, fmt.Errorf("creating deployment set %s: %w", dsName, err)
		}
		ids[i] = id
	}
	return ids, nil
}

// ReconcileHPC creates the network's HPC cluster when wanted and deletes it when not; it returns
// the cluster's id or "".
func ReconcileHPC(ctx context.Context, c *cloud.Client, networkID, name string, want bool) (string, error) {
	hpcName := HPCClusterName(networkID)
	h, err := HPC(ctx, c, networkID)
	if err != nil {
		return "", fmt.Errorf("looking for HPC cluster %s: %w", hpcName, err)
	}
	if !want {
		if h != nil {
			return "", c.DeleteHpcCluster(ctx, h.ID)
		}
		return "", nil
	}
	if h != nil {
		return h.ID, nil
	}
	desc := "HPC cluster of gpucluster network " + name
	id, err := cloud.CreateOrAdopt("HPC cluster "+hpcName, []string{"CreateHpcCluster", c.Region(), hpcName, desc},
		func(token string) (string, error) {
			return c.CreateHpcCluster(ctx, cloud.HPCClusterInput{Name: hpcName, Description: desc, ClientToken: token})
		},
		func(id string) error { _, err := c.FindHpcCluster(ctx, id); return err })
	if err != nil {
		return "", fmt.Errorf("creating HPC cluster %s: %w", hpcName, err)
	}
	return id, nil
}

// --- update ---

// Change is an update of a network from prior to the planned inputs.
type Change struct {
	ID, VPCID string
	OwnsVPC   bool
	In        Inputs
	// PriorName and PriorTags are the name and user tags in the state; the VPC's and the
	// vSwitches' tags are moved only when one of them changed.
	PriorName   string
	PriorTags   map[string]string
	NameChanged bool
	TagsChanged bool
}

// ApplyNamesAndTags renames the security group, the VPC (when the network owns it) and the
// vSwitches, and brings their tags to the plan. It returns the failed step with the error.
func ApplyNamesAndTags(ctx context.Context, c *cloud.Client, ch Change) (string, error) {
	g, err := c.FindSecurityGroup(ctx, ch.ID)
	if err != nil {
		return "", err
	}
	vswitches, err := VSwitches(ctx, c, ch.VPCID, ch.ID)
	if err != nil {
		return "listing vSwitches", err
	}
	in := ch.In
	if g.Name != in.Name {
		if err := c.RenameSecurityGroup(ctx, ch.ID, in.Name); err != nil {
			return "renaming the security group", err
		}
	}
	if ch.OwnsVPC && ch.NameChanged {
		if err := c.RenameVPC(ctx, ch.VPCID, in.Name); err != nil {
			return "renaming VPC " + ch.VPCID, err
		}
	}
	for _, sw := range vswitches {
		if want := VSwitchName(in.Name, sw.ZoneID); sw.Name != want {
			if err := c.RenameVSwitch(ctx, sw.ID, want); err != nil {
				return "renaming vSwitch " + sw.ID, err
			}
		}
	}

	// The security group's tags are read from the cloud (they carry the settings too); the
	// VPC's and the vSwitches' tags are moved only when the name or the user tags changed.
	opts := Options{CIDRBlock: in.CIDRBlock, ERDMA: in.ERDMA, AllowPublicSSH: in.AllowPublicSSH, OwnsVPC: ch.OwnsVPC, Egress: in.Egress.Mode}
	if err := c.SyncTags(ctx, cloud.KindSecurityGroup, []string{ch.ID}, g.Tags, SecurityGroupTags(in, opts)); err != nil {
		return "tagging the security group", err
	}
	if !ch.NameChanged && !ch.TagsChanged {
		return "", nil
	}
	if ch.OwnsVPC {
		err := c.SyncTags(ctx, cloud.KindVPC, []string{ch.VPCID},
			tagging.Merge(ch.PriorTags, SystemTags(ch.PriorName, "")), tagging.Merge(in.Tags, SystemTags(in.Name, "")))
		if err != nil {
			return "tagging VPC " + ch.VPCID, err
		}
	}
	ids := make([]string, 0, len(vswitches))
	for _, sw := range vswitches {
		ids = append(ids, sw.ID)
	}
	err = c.SyncTags(ctx, cloud.KindVSwitch, ids,
		tagging.Merge(ch.PriorTags, SystemTags(ch.PriorName, ch.ID)), tagging.Merge(in.Tags, SystemTags(in.Name, ch.ID)))
	if err != nil {
		return "tagging vSwitches", err
	}
	return "", nil
}

// --- delete ---

// Removal is what deleting a network needs from its state.
type Removal struct {
	ID, Name, VPCID string
	OwnsVPC         bool
	HPCClusterID    string
	// Egress holds the ids of the egress the state knows; what carries the network's tags is
	// found and removed too.
	Egress EgressState
	// VSwitchIDs are the vSwitches in the state; the ones tagged with the network's id are
	// deleted too.
	VSwitchIDs []string
}

// Delete removes a network in dependency order: the egress (SNAT entries, EIP, NAT
// gateway), what holds instances (HPC cluster,
// deployment sets), then the security group, the vSwitches, and the VPC last. Each step treats
// not found as done and waits out DependencyViolation while members drain, within ctx. It
// returns the failed step with the error.
func Delete(ctx context.Context, c *cloud.Client, rm Removal) (string, error) {
	// The NAT gateway sits in a vSwitch: the egress goes before anything else.
	if step, err := RemoveEgress(ctx, c, rm.ID, rm.VPCID, rm.Egress); err != nil {
		return "egress: " + step, err
	}
	if _, err := ReconcileHPC(ctx, c, rm.ID, rm.Name, false); err != nil {
		return "HPC cluster", err
	}
	if rm.HPCClusterID != "" {
		if err := c.DeleteHpcCluster(ctx, rm.HPCClusterID); err != nil {
			return "HPC cluster", err
		}
	}
	if _, err := ReconcilePlacement(ctx, c, rm.ID, rm.Name, netplan.PlacementNone, 0); err != nil {
		return "placement groups", err
	}
	if err := c.DeleteSecurityGroup(ctx, rm.ID); err != nil {
		return "security group", err
	}
	vswitchIDs := map[string]bool{}
	for _, id := range rm.VSwitchIDs {
		vswitchIDs[id] = true
	}
	if rm.VPCID != "" {
		found, err := VSwitches(ctx, c, rm.VPCID, rm.ID)
		if err != nil && !cloud.IsNotFound(err) {
			return "listing vSwitches of VPC " + rm.VPCID, err
		}
		for _, sw := range found {
			vswitchIDs[sw.ID] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(vswitchIDs)) {
		if err := c.DeleteVSwitch(ctx, id); err != nil {
			return "vSwitch " + id, err
		}
	}
	if rm.OwnsVPC && rm.VPCID != "" {
		if err := c.DeleteVPC(ctx, rm.VPCID); err != nil {
			return "VPC " + rm.VPCID, err
		}
	}
	return "", nil
}

// BuildMembers creates, after the VPC and the security group, the rest of a new network in
// order: one vSwitch per zone, the egress, the rules, the placement groups and the HPC cluster.
// It returns the failed step with the error.
func BuildMembers(ctx context.Context, c *cloud.Client, vpcID, sgID string, in Inputs) (string, error) {
	// 3. One vSwitch per zone.
	for _, zone := range in.Zones {
		if _, err := createVSwitch(ctx, c, vpcID, sgID, zone, in.VSwitchCIDRs[zone], in); err != nil {
			return "vSwitch in " + zone, err
		}
	}
	// 4. Egress: NAT gateway, EIP, one SNAT entry per vSwitch.
	if in.Egress.Mode == EgressModeNAT {
		vswitches, err := VSwitches(ctx, c, vpcID, sgID)
		if err != nil {
			return "listing vSwitches for egress", err
		}
		if step, err := EnsureEgress(ctx, c, EgressSpecOf(sgID, vpcID, in), vswitches); err != nil {
			return "egress: " + step, err
		}
	}
	// 5. Rules: members, admins, deny cross-segment.
	if err := ReconcileRules(ctx, c, sgID, netplan.DesiredRules(sgID, in.AdminCIDRs)); err != nil {
		return "security group rules", err
	}
	// 6. Placement groups and the HPC cluster.
	if _, err := ReconcilePlacement(ctx, c, sgID, in.Name, in.Placement, in.PlacementGroups); err != nil {
		return "placement groups", err
	}
	if _, err := ReconcileHPC(ctx, c, sgID, in.Name, in.HPCCluster); err != nil {
		return "HPC cluster", err
	}
	return "", nil
}

// Inputs is a planned model as plain Go values.
type Inputs struct {
	Name            string
	CIDRBlock       string
	Zones           []string
	VPCID           string
	VSwitchCIDRs    map[string]string
	AdminCIDRs      []string
	AllowPublicSSH  bool
	Placement       string
	PlacementGroups int
	ERDMA           bool
	HPCCluster      bool
	Tags            map[string]string
	Egress          EgressInputs
}

// EgressInputs is the planned egress: the mode, and the EIP's billing and bandwidth for nat.
type EgressInputs struct {
	Mode          string
	ChargeType    string
	BandwidthMbps int
}

func VSwitchName(network, zone string) string { return network + "-" + zone }

// EgressSpecOf is what building the egress of a network needs, from its inputs.
func EgressSpecOf(networkID, vpcID string, in Inputs) EgressSpec {
	return EgressSpec{NetworkID: networkID, Name: in.Name, VPCID: vpcID, UserTags: in.Tags,
		ChargeType: in.Egress.ChargeType, BandwidthMbps: in.Egress.BandwidthMbps}
}

// EgressModeNAT is the egress mode whose NAT gateway, EIP and SNAT entries this package builds.
const EgressModeNAT = "nat"
