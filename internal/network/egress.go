package network

// Egress of a gpucluster_rdma_network in mode "nat": an enhanced NAT gateway in one of the
// network's vSwitches, an EIP bound to it and one SNAT entry per vSwitch. Everything is found
// by the network's tags, so an interrupted apply is picked up where it stopped.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// EgressSpec is what building a network's egress needs.
type EgressSpec struct {
	NetworkID, Name, VPCID string
	UserTags               map[string]string
	ChargeType             string
	BandwidthMbps          int
}

// EgressState is a network's egress as the cloud has it; empty ids for what does not exist.
type EgressState struct {
	NATGatewayID, SnatTableID string
	EIPID, EIPAddress         string
	ChargeType                string
	BandwidthMbps             int
	// SnatEntries maps vSwitch id to SNAT entry id, for the network's vSwitches.
	SnatEntries map[string]string
}

// EgressTags are the tags of the network's NAT gateway and EIP: the user's plus the reserved ones
// with the network's id, which is how read and adoption find them.
func EgressTags(name, networkID string, user map[string]string) map[string]string {
	return tagging.Merge(user, SystemTags(name, networkID))
}

// egressFilter is the tag filter that finds a network's NAT gateway and EIP.
func egressFilter(networkID string) map[string]string {
	return map[string]string{tagging.ManagedBy: tagging.ManagedByVal, tagging.NetworkID: networkID}
}

// RetagEgress moves the NAT gateway's and EIP's tags from the network's old name and tags to
// the new ones. It returns the failed step.
func RetagEgress(ctx context.Context, c *cloud.Client, networkID, vpcID string, from, to map[string]string) (string, error) {
	st, err := ReadEgress(ctx, c, networkID, vpcID, nil)
	if err != nil {
		return "reading the egress", err
	}
	if st.NATGatewayID != "" {
		if err := c.SyncTags(ctx, cloud.KindNATGateway, []string{st.NATGatewayID}, from, to); err != nil {
			return "tagging NAT gateway " + st.NATGatewayID, err
		}
	}
	if st.EIPID != "" {
		if err := c.SyncTags(ctx, cloud.KindEIP, []string{st.EIPID}, from, to); err != nil {
			return "tagging EIP " + st.EIPID, err
		}
	}
	return "", nil
}

// EnsureEgress builds whatever of the egress is missing, in order: NAT gateway, EIP (with the
// planned bandwidth), the binding, one SNAT entry per vSwitch. What exists (found by tags, or
// answered to a repeated ClientToken) is adopted, so an interrupted apply picks up where it
// stopped. It returns the failed step with the error.
func EnsureEgress(ctx context.Context, c *cloud.Client, s EgressSpec, vswitches []cloud.VSwitch) (string, error) {
	if len(vswitches) == 0 {
		return "NAT gateway", fmt.Errorf("network %s has no vSwitch to put a NAT gateway in", s.NetworkID)
	}
	tags := EgressTags(s.Name, s.NetworkID, s.UserTags)
	nat, err := ensureNATGateway(ctx, c, s, vswitches[0].ID, tags)
	if err != nil {
		return "NAT gateway", err
	}
	eip, err := ensureEIP(ctx, c, s, tags)
	if err != nil {
		return "EIP", err
	}
	if err := c.AssociateEIP(ctx, eip.ID, nat.ID, cloud.EIPInstanceNAT); err != nil {
		return "binding the EIP to the NAT gateway", err
	}
	entries, err := c.FindSNATEntries(ctx, nat.SnatTableID)
	if err != nil {
		return "listing SNAT entries", err
	}
	have := map[string]bool{}
	for _, e := range entries {
		if e.Status != cloud.SNATEntryStatusDeleting {
			have[e.SourceVSwitchID] = true
			continue
		}
		// An entry deleted outside Terraform is listed while it goes; the service refuses a new
		// entry for the same vSwitch until then.
		if err := c.WaitSNATEntryGone(ctx, nat.SnatTableID, e.ID); err != nil {
			return "SNAT entry for vSwitch " + e.SourceVSwitchID, err
		}
	}
	for _, sw := range vswitches {
		if have[sw.ID] {
			continue
		}
		name := "gpucluster-" + s.NetworkID + "-" + sw.ZoneID
		id, err := cloud.CreateOrAdopt("SNAT entry for "+sw.ID, []string{"CreateSnatEntry", c.Region(), nat.SnatTableID, sw.ID, eip.Address, name},
			func(token string) (string, error) {
				return c.CreateSNATEntry(ctx, cloud.SNATEntryInput{SnatTableID: nat.SnatTableID, SourceVSwitchID: sw.ID,
					SnatIPs: []string{eip.Address}, Name: name, ClientToken: token})
			},
			func(id string) error { _, err := c.FindSNATEntry(ctx, nat.SnatTableID, id); return err })
		if err != nil {
			return "SNAT entry for vSwitch " + sw.ID, err
		}
		if _, err := c.WaitSNATEntryAvailable(ctx, nat.SnatTableID, id); err != nil {
			return "SNAT entry for vSwitch " + sw.ID, err
		}
	}
	return "", nil
}

func ensureNATGateway(ctx context.Context, c *cloud.Client, s EgressSpec, vswitchID string, tags map[string]string) (*cloud.NATGateway, error) {
	found, err := c.FindNATGateways(ctx, s.VPCID, egressFilter(s.NetworkID))
	if err != nil {
		return nil, err
	}
	id := ""
	if len(found) > 0 {
		id = found[0].ID
	} else {
		name := "gpucluster-" + s.NetworkID
		desc := "Egress of gpucluster network " + s.Name
		id, err = cloud.CreateOrAdopt("NAT gateway", tagging.TokenParts(tags, "CreateNatGateway", c.Region(), s.VPCID, vswitchID, name),
			func(token string) (string, error) {
				id, _, err := c.CreateNATGateway(ctx, cloud.NATGatewayInput{VPCID: s.VPCID, VSwitchID: vswitchID, Name: name,
					Description: desc, Tags: tags, ClientToken: token})
				return id, err
			},
			func(id string) error { _, err := c.FindNATGateway(ctx, id); return err })
		if err != nil {
			return nil, err
		}
	}
	return c.WaitNATGatewayAvailable(ctx, id)
}

// ensureEIP finds or allocates the network's EIP and brings its bandwidth to the plan. An EIP
// of another billing (the plan changed it) is the caller's to remove first.
func ensureEIP(ctx context.Context, c *cloud.Client, s EgressSpec, tags map[string]string) (*cloud.EIP, error) {
	found, err := c.FindEIPsByTags(ctx, egressFilter(s.NetworkID))
	if err != nil {
		return nil, err
	}
	if len(found) > 0 {
		e := found[0]
		if e.BandwidthMbps != s.BandwidthMbps {
			if err := c.SetEIPBandwidth(ctx, e.ID, s.BandwidthMbps); err != nil {
				return nil, err
			}
		}
		return &e, nil
	}
	name := "gpucluster-" + s.NetworkID
	desc := "Egress of gpucluster network " + s.Name
	parts := tagging.TokenParts(tags, "AllocateEipAddress", c.Region(), name, s.ChargeType, fmt.Sprint(s.BandwidthMbps))
	id, err := cloud.CreateOrAdopt("EIP", parts, func(token string) (string, error) {
		id, _, err := c.AllocateEIP(ctx, cloud.EIPInput{BandwidthMbps: s.BandwidthMbps, InternetChargeType: s.ChargeType,
			Name: name, Description: desc, Tags: tags, ClientToken: token})
		if id != "" && cloud.IsNotFound(err) {
			// The token named an EIP released since (egress removed, then built again): its
			// tagging fails, and CreateOrAdopt's look moves on to the next token.
			return id, nil
		}
		return id, err
	}, func(id string) error { _, err := c.FindEIP(ctx, id); return err })
	if err != nil {
		return nil, err
	}
	return c.FindEIP(ctx, id)
}

// RemoveEgress deletes a network's egress in dependency order: SNAT entries, the EIP's binding
// and the EIP, then the NAT gateway. It finds them by tags, plus the ids the state holds (in
// case a tag was removed by hand). Not found counts as done. It returns the failed step.
func RemoveEgress(ctx context.Context, c *cloud.Client, networkID, vpcID string, known EgressState) (string, error) {
	nats := map[string]string{} // NAT gateway id -> SNAT table id
	if vpcID != "" {
		found, err := c.FindNATGateways(ctx, vpcID, egressFilter(networkID))
		if err != nil && !cloud.IsNotFound(err) {
			return "listing NAT gateways", err
		}
		for _, n := range found {
			nats[n.ID] = n.SnatTableID
		}
	}
	if id := known.NATGatewayID; id != "" && nats[id] == "" {
		n, err := c.FindNATGateway(ctx, id)
		switch {
		case err == nil:
			nats[id] = n.SnatTableID
		case !cloud.IsNotFound(err):
			return "NAT gateway " + id, err
		}
	}
	eips := map[string]bool{}
	found, err := c.FindEIPsByTags(ctx, egressFilter(networkID))
	if err != nil {
		return "listing EIPs", err
	}
	for _, e := range found {
		eips[e.ID] = true
	}
	if known.EIPID != "" {
		eips[known.EIPID] = true
	}
	for _, natID := range slices.Sorted(maps.Keys(nats)) {
		table := nats[natID]
		entries, err := c.FindSNATEntries(ctx, table)
		if err != nil && !cloud.IsNotFound(err) {
			return "listing SNAT entries of " + table, err
		}
		for _, e := range entries {
			if err := c.DeleteSNATEntry(ctx, table, e.ID); err != nil {
				return "SNAT entry " + e.ID, err
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(eips)) {
		if err := c.UnassociateEIP(ctx, id); err != nil && !cloud.IsNotFound(err) {
			return "unbinding EIP " + id, err
		}
		if err := c.ReleaseEIP(ctx, id); err != nil {
			return "EIP " + id, err
		}
	}
	for _, natID := range slices.Sorted(maps.Keys(nats)) {
		if err := c.DeleteNATGateway(ctx, natID, false); err != nil {
			return "NAT gateway " + natID, err
		}
	}
	return "", nil
}

// ReadEgress reads a network's egress from the cloud: its NAT gateway and EIP by tags, and the
// SNAT entries of the network's vSwitches.
func ReadEgress(ctx context.Context, c *cloud.Client, networkID, vpcID string, vswitches []cloud.VSwitch) (EgressState, error) {
	out := EgressState{SnatEntries: map[string]string{}}
	nats, err := c.FindNATGateways(ctx, vpcID, egressFilter(networkID))
	if err != nil {
		return out, err
	}
	eips, err := c.FindEIPsByTags(ctx, egressFilter(networkID))
	if err != nil {
		return out, err
	}
	if len(eips) > 0 {
		e := eips[0]
		out.EIPID, out.EIPAddress, out.ChargeType, out.BandwidthMbps = e.ID, e.Address, e.InternetChargeType, e.BandwidthMbps
	}
	if len(nats) == 0 {
		return out, nil
	}
	out.NATGatewayID, out.SnatTableID = nats[0].ID, nats[0].SnatTableID
	entries, err := c.FindSNATEntries(ctx, out.SnatTableID)
	if err != nil {
		return out, err
	}
	ours := map[string]bool{}
	for _, sw := range vswitches {
		ours[sw.ID] = true
	}
	// Oldest entry per vSwitch (ids sort by creation in the service and the emulator alike).
	sort.Slice(entries, func(i, j int) bool { return entries[i].ID < entries[j].ID })
	for _, e := range entries {
		if e.Status == cloud.SNATEntryStatusDeleting {
			continue // being deleted: no longer translates, so not part of the egress
		}
		if ours[e.SourceVSwitchID] && out.SnatEntries[e.SourceVSwitchID] == "" && (out.EIPAddress == "" || slices.Contains(e.SnatIPs, out.EIPAddress)) {
			out.SnatEntries[e.SourceVSwitchID] = e.ID
		}
	}
	return out, nil
}
