package ecs

import (
	"slices"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// What the Server reads and does to ECS outside an RPC call: its node view, its resource listing
// and its janitor. The Server calls these under its state lock with a call that carries the
// state, the Env and the time, and no request.

// InstanceView is one instance; Status is the one DescribeInstances answers (Running, ...).
type InstanceView struct {
	ID, Region, Zone, Type string
	Status                 string
	HostName               string
	VpcID, VSwitchID       string
	PrivateIP              string
	PublicIP               string // assigned at launch (InternetMaxBandwidthOut > 0); EIPs are in View.EIPs
	SecurityGroupIDs       []string
	// VCPUs, MemoryGiB and GPUs are the instance type's, from the emulator's catalog.
	VCPUs     int
	MemoryGiB float64
	GPUs      int
	// UserData is Base64, as RunInstances took it and DescribeUserData answers it.
	UserData string
	// ImageID is the image the instance runs from (DescribeInstances ImageId): a public image's
	// id, or a custom image's, whose ImageView says what it was made of.
	ImageID string
	// RamRole is the instance RAM role (RunInstances RamRoleName), "" for none: the role whose
	// keys the instance's metadata service hands out.
	RamRole string
	// GPUFaults are the faults injected into its GPUs (POST /_emulator/gpu_faults), by GPU index:
	// what its hardware does, for a model of the guest to report.
	GPUFaults []GPUFault
	// ShutdownSignalled: a normal StopInstances asked the guest to shut down and the guest
	// delays it (DelayGuestShutdown); the instance stays Stopping until the guest powers off.
	ShutdownSignalled bool
}

// SecurityView is one security group. InnerAccessAccept is the vendor's InnerAccessPolicy
// "Accept": members of the group reach each other whatever the rules say.
type SecurityView struct {
	ID, VpcID         string
	InnerAccessAccept bool
	Rules             []SecurityRuleView
}

// SecurityRuleView is one rule, as DescribeSecurityGroupAttribute spells it: Direction ingress
// or egress; Protocol TCP, UDP, ICMP, GRE or ALL; PortRange "from/to" ("-1/-1" for all); the
// peer as a CIDR block or a security group id; Policy accept or drop; Priority 1 (first) to 100.
type SecurityRuleView struct {
	Direction, Protocol, PortRange string
	CIDR, GroupID                  string
	Policy                         string
	Priority                       int
}

// Views copies the instances DescribeInstances would show, in creation order, and every
// security group by id: what a node sees of ECS. Nothing in them points back into the state.
func Views(cc *core.Call) ([]InstanceView, map[string]SecurityView) {
	c := newCall(cc)
	var out []InstanceView
	for _, in := range c.st.order {
		if c.visible(in) {
			out = append(out, c.view(in))
		}
	}
	sgs := map[string]SecurityView{}
	for id, g := range c.st.SGs {
		sv := SecurityView{ID: g.ID, VpcID: g.VpcID, InnerAccessAccept: true} // the emulator answers InnerAccessPolicy Accept
		for _, r := range g.Rules {
			sv.Rules = append(sv.Rules, SecurityRuleView{Direction: r.Direction, Protocol: r.Protocol, PortRange: r.PortRange,
				CIDR: r.Cidr, GroupID: r.Group, Policy: r.Policy, Priority: r.Priority})
		}
		sgs[id] = sv
	}
	return out, sgs
}

// view copies one instance.
func (c *call) view(in *instance) InstanceView {
	iv := InstanceView{ID: in.ID, Region: in.Region, Zone: in.Zone, Type: in.Type, Status: c.status(in), HostName: in.HostName,
		VpcID: in.VpcID, VSwitchID: in.VSwitchID, PrivateIP: in.IP, PublicIP: in.PublicIP, SecurityGroupIDs: append([]string(nil), in.SGs...),
		UserData: in.UserData, ImageID: in.Image, RamRole: in.RamRole, GPUFaults: slices.Clone(in.GPUFaults)}
	iv.ShutdownSignalled = in.Phase == phaseShutdown && iv.Status == "Stopping"
	if it := instanceTypes[in.Type]; it != nil {
		iv.VCPUs, iv.MemoryGiB, iv.GPUs = it.VCPU, it.MemGiB, it.GPUs
	}
	return iv
}

// InstanceOf copies the live instance id, visible to DescribeInstances or not yet: what the
// instance itself knows of itself (its metadata service answers from it). ok is false for an
// id that names no live instance.
func InstanceOf(cc *core.Call, id string) (InstanceView, bool) {
	c := newCall(cc)
	in := c.st.Instances[id]
	if in == nil {
		return InstanceView{}, false
	}
	return c.view(in), true
}

// Resources are the ECS lists of /_emulator/resources: instances in creation order, the rest in
// no particular order.
type Resources struct {
	Instances, SecurityGroups, DeploymentSets, HpcClusters []map[string]any
}

// ListResources lists every live ECS record for /_emulator/resources.
func ListResources(cc *core.Call) Resources {
	c := newCall(cc)
	var r Resources
	for _, in := range c.st.order {
		r.Instances = append(r.Instances, map[string]any{
			"id": in.ID, "region": in.Region, "zone": in.Zone, "instance_type": in.Type,
			"status": c.status(in), "name": in.Name, "vpc_id": in.VpcID, "vswitch_id": in.VSwitchID,
			"security_group_ids": in.SGs, "tags": core.TagMap(in.Tags), "spot_strategy": in.Spot,
			"deployment_set_id": in.DeploySet, "hpc_cluster_id": in.Hpc,
		})
	}
	for _, g := range c.st.SGs {
		r.SecurityGroups = append(r.SecurityGroups, map[string]any{"id": g.ID, "region": g.Region, "vpc_id": g.VpcID,
			"name": g.Name, "rules": len(g.Rules), "tags": core.TagMap(g.Tags)})
	}
	for _, d := range c.st.DSets {
		r.DeploymentSets = append(r.DeploymentSets, map[string]any{"id": d.ID, "region": d.Region, "name": d.Name,
			"strategy": d.Strategy, "instances": c.st.refs[d.ID]})
	}
	for _, h := range c.st.Hpcs {
		r.HpcClusters = append(r.HpcClusters, map[string]any{"id": h.ID, "region": h.Region, "name": h.Name})
	}
	return r
}

// HasExpired says whether an instance's AutoReleaseTime has passed at now: the janitor looks
// under the read lock and takes the write lock (ReleaseExpired) only when one has.
func (d *Store) HasExpired(now time.Time) bool {
	for _, in := range d.order {
		if in.AutoRelease != 0 && in.AutoRelease <= now.Unix() {
			return true
		}
	}
	return false
}

// ReleaseExpired releases every instance whose AutoReleaseTime has passed at the call's time.
func ReleaseExpired(cc *core.Call) {
	c := newCall(cc)
	var expired []*instance
	for _, in := range c.st.order {
		if in.AutoRelease != 0 && in.AutoRelease <= c.Now.Unix() {
			expired = append(expired, in)
		}
	}
	for _, in := range expired {
		c.release(in)
	}
}

// SetCapacity, SetUnavailable and SetNoSpot replace a stock table (see stock.go). Caller holds
// the write lock.
func (d *Store) SetCapacity(t map[string]map[string]int)       { d.Capacity = t }
func (d *Store) SetUnavailable(t map[string]map[string]string) { d.Unavailable = t }
func (d *Store) SetNoSpot(types []string)                      { d.NoSpot = types }

// PowerOffFromGuest is an instance's own operating system shutting it down (`poweroff` inside
// the guest, as an image builder does once it has baked, or the end of a shutdown a normal
// StopInstances signalled): ECS shows it Stopping, then Stopped, as after StopInstances. A model
// beside the emulator (the node agent) calls it for the guest; an instance that is neither
// Running nor shutting down is left as it is. Reports whether it was powered off.
func PowerOffFromGuest(cc *core.Call, id string) bool {
	c := newCall(cc)
	in := c.st.Instances[id]
	if in == nil || (c.status(in) != "Running" && !(in.Phase == phaseShutdown && c.status(in) == "Stopping")) {
		return false
	}
	in.Phase, in.PhaseAt = phaseStopping, c.Now.UnixNano()
	return true
}

// DelayGuestShutdown records that the instance's guest delays a normal shutdown by up to d (0:
// not at all): a model of the guest calls it, as the kubelet of a node with graceful node
// shutdown takes a systemd inhibitor lock of shutdownGracePeriod when it starts
// (https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/#graceful-node-shutdown).
// Reports whether the instance exists.
func DelayGuestShutdown(cc *core.Call, id string, d time.Duration) bool {
	c := newCall(cc)
	in := c.st.Instances[id]
	if in == nil {
		return false
	}
	in.ShutdownDelay = int64(d)
	return true
}
