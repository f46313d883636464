package slb

// Classic Load Balancer (SLB API 2014-05-15): instances, backend servers,
// health status, deletion protection and tags. Listeners are in
// listeners.go. Semantics and codes follow
//   https://www.alibabacloud.com/help/en/slb/classic-load-balancer/developer-reference/api-slb-2014-05-15-createloadbalancer
//   https://alibabacloud.com/help/en/slb/api-deleteloadbalancer-2
//   https://alibabacloud.com/help/en/slb/classic-load-balancer/developer-reference/api-slb-2014-05-15-setloadbalancerdeleteprotection
//   https://www.alibabacloud.com/help/en/slb/classic-load-balancer/developer-reference/api-slb-2014-05-15-addbackendservers
//   https://help.aliyun.com/document_detail/27632.html (AddBackendServers: BackendServers JSON, Weight 0-100)
//   https://api.alibabacloud.com/document/Slb/2014-05-15/errorCode (common error codes)
// The vendor documents DeleteLoadBalancer's refusal under deletion protection
// as OperationDenied.DeleteProtectionIsOn. Instances are active as soon as
// CreateLoadBalancer answers; deleting one takes its listeners and tags along.

import (
	"cmp"
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"

	slbsdk "github.com/aliyun/alibaba-cloud-sdk-go/services/slb"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	emuvpc "github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/vpc"
)

// Version is the SLB API version the emulator serves.
const Version = "2014-05-15"

// SLB actions on one load balancer (by LoadBalancerId) do not require RegionId in the vendor's
// model, so they are RegionOptional; creating, listing and tagging do.
func init() {
	core.Register(Version, "CreateLoadBalancer", core.Route{Fn: createLoadBalancer, Write: true, Idem: true})
	core.Register(Version, "DescribeLoadBalancers", core.Route{Fn: describeLoadBalancers})
	core.Register(Version, "DescribeLoadBalancerAttribute", core.Route{Fn: describeLoadBalancerAttribute, RegionOptional: true})
	core.Register(Version, "DeleteLoadBalancer", core.Route{Fn: deleteLoadBalancer, Write: true, RegionOptional: true})
	core.Register(Version, "SetLoadBalancerDeleteProtection", core.Route{Fn: setLoadBalancerDeleteProtection, Write: true})
	core.Register(Version, "SetLoadBalancerName", core.Route{Fn: setLoadBalancerName, Write: true, RegionOptional: true})
	core.Register(Version, "AddBackendServers", core.Route{Fn: addBackendServers, Write: true, RegionOptional: true})
	core.Register(Version, "RemoveBackendServers", core.Route{Fn: removeBackendServers, Write: true, RegionOptional: true})
	core.Register(Version, "DescribeHealthStatus", core.Route{Fn: describeHealthStatus, RegionOptional: true})
	core.Register(Version, "TagResources", core.Route{Fn: slbTagResources, Write: true})
	core.Register(Version, "UntagResources", core.Route{Fn: slbUntagResources, Write: true})
	core.Register(Version, "ListTagResources", core.Route{Fn: slbListTagResources})
}

// slbSpecs are the performance-guaranteed specifications on sale.
var slbSpecs = []string{"slb.s1.small", "slb.s2.small", "slb.s2.medium", "slb.s3.small", "slb.s3.medium",
	"slb.s3.large", "slb.s3.xlarge", "slb.s3.xxlarge"}

// Limits the vendor documents for one call and one instance.
const (
	slbMaxBackendsPerCall = 20
	slbMaxListeners       = 50
)

func slbErrNotFound(id string) *core.Error {
	return core.Errf(404, "InvalidLoadBalancerId.NotFound", "The specified Load Balancer %q does not exist.", id)
}

func createLoadBalancer(c *core.Call) (any, *core.Error) {
	addrType := strings.ToLower(cmp.Or(c.P["AddressType"], "internet"))
	if e := core.OneOf("AddressType", addrType, "internet", "intranet"); e != nil {
		return nil, e
	}
	if e := core.OneOf("PayType", cmp.Or(c.P["PayType"], "PayOnDemand"), "PayOnDemand"); e != nil {
		return nil, e
	}
	charge := cmp.Or(c.P["InstanceChargeType"], "PayBySpec")
	if e := core.OneOf("InstanceChargeType", charge, "PayBySpec", "PayByCLCU"); e != nil {
		return nil, e
	}
	spec := c.P["LoadBalancerSpec"]
	switch {
	case charge == "PayByCLCU" && spec != "":
		return nil, core.ErrInvalid("LoadBalancerSpec", "pay-by-CLCU instances take no specification")
	case charge == "PayBySpec" && spec == "":
		spec = slbSpecs[0]
	}
	if spec != "" {
		if e := core.OneOf("LoadBalancerSpec", spec, slbSpecs...); e != nil {
			return nil, e
		}
	}
	netCharge := strings.ToLower(cmp.Or(c.P["InternetChargeType"], "paybytraffic"))
	if e := core.OneOf("InternetChargeType", netCharge, "paybytraffic", "paybybandwidth"); e != nil {
		return nil, e
	}
	protect := cmp.Or(c.P["DeleteProtection"], "off")
	if e := core.OneOf("DeleteProtection", protect, "on", "off"); e != nil {
		return nil, e
	}
	tags, e := c.P.Tags("Tag")
	if e != nil {
		return nil, e
	}
	d := StoreIn(c.Stores)
	lb := &LoadBalancer{Region: c.Region, Name: c.P["LoadBalancerName"], AddressType: addrType, Spec: spec, ChargeType: charge,
		NetCharge: netCharge, DeleteProtection: protect == "on", Created: c.Now.UnixNano(), Tags: tags}
	if addrType == "intranet" {
		if e := slbPlaceInVpc(c, lb); e != nil {
			return nil, e
		}
	} else {
		if c.P["VSwitchId"] != "" || c.P["VpcId"] != "" {
			return nil, core.Errf(400, "NetworkConflict", "there are network conflicts in specified parameter: an internet-facing instance takes no VpcId or VSwitchId.")
		}
		if netCharge == "paybybandwidth" {
			bw, e := c.P.Int("Bandwidth", 1)
			if e != nil || bw < 1 || bw > 5120 {
				return nil, core.Errf(400, "InvalidParameter", "The specified Bandwidth is invalid: %q must be 1-5120 Mbit/s.", c.P["Bandwidth"])
			}
			lb.Bandwidth = bw
		}
		lb.MasterZone = cmp.Or(c.P["MasterZoneId"], c.Region+"-a")
		lb.Address = emuvpc.PublicAddress(c.Env.NextSeq())
	}
	lb.SlaveZone = c.P["SlaveZoneId"]
	if lb.Name == "" {
		lb.Name = "auto_named_slb"
	}
	lb.ID = c.Env.NewID("lb")
	d.LoadBalancers[lb.ID] = lb
	return &slbsdk.CreateLoadBalancerResponse{RequestId: c.ReqID, LoadBalancerId: lb.ID, LoadBalancerName: lb.Name,
		Address: lb.Address, VpcId: lb.VpcID, VSwitchId: lb.VSwitchID, NetworkType: slbNetworkType(lb),
		AddressIPVersion: "ipv4", ResourceGroupId: core.DefaultResourceGroup}, nil
}

// slbPlaceInVpc puts an internal-facing instance in its vSwitch: the VPC
// follows from the vSwitch, the zone too, and the address is the one asked
// for (inside the vSwitch, not used by another instance) or the next free one.
func slbPlaceInVpc(c *core.Call, lb *LoadBalancer) *core.Error {
	if c.P["VSwitchId"] == "" {
		return core.ErrMissing("VSwitchId")
	}
	sw, e := vSwitchParam(c)
	if e != nil {
		return e
	}
	if v := c.P["VpcId"]; v != "" && v != sw.VpcID {
		return core.Errf(400, "NetworkConflict", "there are network conflicts in specified parameter: vSwitch %s is in VPC %s, not %s.", sw.ID, sw.VpcID, v)
	}
	if v := emuvpc.StoreIn(c.Stores).Vpcs[sw.VpcID]; v != nil && c.Env.AsyncStatus(v.Created, c.Now, "Pending", "Available") != "Available" {
		return core.Errf(400, "VpcStatusError", "the specified vpc status is creating: VPC %s.", v.ID)
	}
	if z := c.P["MasterZoneId"]; z != "" && z != sw.Zone {
		return core.ErrInvalid("MasterZoneId", "vSwitch %s is in zone %s", sw.ID, sw.Zone)
	}
	lb.VpcID, lb.VSwitchID, lb.MasterZone = sw.VpcID, sw.ID, sw.Zone
	addr := c.P["Address"]
	if addr == "" {
		lb.Address = sw.NextAddress()
		return nil
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil || !netip.MustParsePrefix(sw.CIDR).Contains(ip) {
		return core.Errf(400, "InvalidParameter", "The Ip is not Supported: %q is not an address of vSwitch %s (%s).", addr, sw.ID, sw.CIDR)
	}
	for _, other := range StoreIn(c.Stores).LoadBalancers {
		if other.VSwitchID == sw.ID && other.Address == addr {
			return core.Errf(400, "InvalidParameter", "The vpc Ip is exist: load balancer %s already uses %s.", other.ID, addr)
		}
	}
	lb.Address = addr
	return nil
}

func slbNetworkType(lb *LoadBalancer) string {
	if lb.VpcID != "" {
		return "vpc"
	}
	return "classic"
}

func findSLB(c *core.Call) (*LoadBalancer, *core.Error) {
	id, e := c.P.Required("LoadBalancerId")
	if e != nil {
		return nil, e
	}
	lb := StoreIn(c.Stores).LoadBalancers[id]
	if lb == nil || lb.Region != c.Region {
		return nil, slbErrNotFound(id)
	}
	return lb, nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func slbTagList(ts []core.Tag) []slbsdk.Tag {
	out := make([]slbsdk.Tag, 0, len(ts))
	for _, t := range ts {
		out = append(out, slbsdk.Tag{TagKey: t.K, TagValue: t.V})
	}
	return out
}

func describeLoadBalancers(c *core.Call) (any, *core.Error) {
	q, e := core.ReadListQuery(c.P, "LoadBalancerId", 100)
	if e != nil {
		return nil, e
	}
	var list []*LoadBalancer
	for _, lb := range StoreIn(c.Stores).LoadBalancers {
		if lb.Region != c.Region || !core.MatchParam(c.P, "LoadBalancerName", lb.Name) ||
			!core.MatchParam(c.P, "VpcId", lb.VpcID) || !core.MatchParam(c.P, "VSwitchId", lb.VSwitchID) ||
			!core.MatchParam(c.P, "AddressType", lb.AddressType) || !core.MatchParam(c.P, "Address", lb.Address) ||
			!core.MatchParam(c.P, "NetworkType", slbNetworkType(lb)) || !core.MatchParam(c.P, "LoadBalancerStatus", "active") ||
			(c.P["ServerId"] != "" && lb.backend(c.P["ServerId"]) < 0) || !q.Match(lb.ID, lb.Tags) {
			continue
		}
		list = append(list, lb)
	}
	page := core.PageOf(q, list, func(x *LoadBalancer) string { return x.ID })
	resp := &slbsdk.DescribeLoadBalancersResponse{RequestId: c.ReqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.LoadBalancers.LoadBalancer = []slbsdk.LoadBalancer{}
	for _, lb := range page {
		out := slbsdk.LoadBalancer{LoadBalancerId: lb.ID, LoadBalancerName: lb.Name, LoadBalancerStatus: "active",
			Address: lb.Address, AddressType: lb.AddressType, AddressIPVersion: "ipv4", RegionId: lb.Region,
			RegionIdAlias: lb.Region, VSwitchId: lb.VSwitchID, VpcId: lb.VpcID, NetworkType: slbNetworkType(lb),
			MasterZoneId: lb.MasterZone, SlaveZoneId: lb.SlaveZone, InternetChargeType: lb.NetCharge,
			InternetChargeTypeAlias: lb.NetCharge, Bandwidth: lb.Bandwidth, LoadBalancerSpec: lb.Spec,
			InstanceChargeType: lb.ChargeType, PayType: "PayOnDemand", CreateTime: core.FormatTime(lb.Created),
			CreateTimeStamp: lb.Created / 1e6, ResourceGroupId: core.DefaultResourceGroup,
			DeleteProtection: onOff(lb.DeleteProtection), ModificationProtectionStatus: "NonProtection"}
		out.Tags.Tag = slbTagList(lb.Tags)
		resp.LoadBalancers.LoadBalancer = append(resp.LoadBalancers.LoadBalancer, out)
	}
	return resp, nil
}

func describeLoadBalancerAttribute(c *core.Call) (any, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, e
	}
	resp := &slbsdk.DescribeLoadBalancerAttributeResponse{RequestId: c.ReqID, LoadBalancerId: lb.ID,
		LoadBalancerName: lb.Name, LoadBalancerStatus: "active", Address: lb.Address, AddressType: lb.AddressType,
		AddressIPVersion: "ipv4", RegionId: lb.Region, RegionIdAlias: lb.Region, VSwitchId: lb.VSwitchID, VpcId: lb.VpcID,
		NetworkType: slbNetworkType(lb), MasterZoneId: lb.MasterZone, SlaveZoneId: lb.SlaveZone,
		InternetChargeType: lb.NetCharge, Bandwidth: lb.Bandwidth, LoadBalancerSpec: lb.Spec,
		InstanceChargeType: lb.ChargeType, PayType: "PayOnDemand", CreateTime: core.FormatTime(lb.Created),
		CreateTimeStamp: lb.Created / 1e6, ResourceGroupId: core.DefaultResourceGroup,
		DeleteProtection: onOff(lb.DeleteProtection), ModificationProtectionStatus: "NonProtection"}
	resp.ListenerPorts.ListenerPort = []int{}
	resp.ListenerPortsAndProtocol.ListenerPortAndProtocol = []slbsdk.ListenerPortAndProtocol{}
	resp.ListenerPortsAndProtocal.ListenerPortAndProtocal = []slbsdk.ListenerPortAndProtocal{}
	for _, l := range lb.Listeners {
		resp.ListenerPorts.ListenerPort = append(resp.ListenerPorts.ListenerPort, l.Port)
		resp.ListenerPortsAndProtocol.ListenerPortAndProtocol = append(resp.ListenerPortsAndProtocol.ListenerPortAndProtocol,
			slbsdk.ListenerPortAndProtocol{ListenerPort: l.Port, ListenerProtocol: "tcp", Description: l.Desc})
		resp.ListenerPortsAndProtocal.ListenerPortAndProtocal = append(resp.ListenerPortsAndProtocal.ListenerPortAndProtocal,
			slbsdk.ListenerPortAndProtocal{ListenerPort: l.Port, ListenerProtocal: "tcp"})
	}
	resp.BackendServers.BackendServer = []slbsdk.BackendServerInDescribeLoadBalancerAttribute{}
	for _, b := range lb.Backends {
		ip := backendIP(c, b.ServerID)
		resp.BackendServers.BackendServer = append(resp.BackendServers.BackendServer,
			slbsdk.BackendServerInDescribeLoadBalancerAttribute{ServerId: b.ServerID, Weight: b.Weight, Type: b.Type,
				Description: b.Desc, ServerIp: ip})
	}
	resp.Tags.Tag = slbTagList(lb.Tags)
	resp.Labels.Label = []string{}
	return resp, nil
}

// backendIP is a backend server's private address; "" once the instance is gone.
func backendIP(c *core.Call, id string) string {
	in, _ := core.ECS().Instance(c, id)
	return in.IP
}

// vSwitchParam finds the vSwitch VSwitchId names in the call's region.
func vSwitchParam(c *core.Call) (*emuvpc.VSwitch, *core.Error) {
	id, e := c.P.Required("VSwitchId")
	if e != nil {
		return nil, e
	}
	sw := emuvpc.StoreIn(c.Stores).VSwitchIn(c.Region, id)
	if sw == nil {
		return nil, core.ErrNotFound("InvalidVSwitchId.NotFound", id)
	}
	return sw, nil
}

func deleteLoadBalancer(c *core.Call) (any, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, e
	}
	if lb.DeleteProtection {
		return nil, core.Errf(400, "OperationDenied.DeleteProtectionIsOn", "The loadbalancer %s can't be deleted due to DeleteProtection is enabled.", lb.ID)
	}
	delete(StoreIn(c.Stores).LoadBalancers, lb.ID)
	return &slbsdk.DeleteLoadBalancerResponse{RequestId: c.ReqID}, nil
}

func setLoadBalancerDeleteProtection(c *core.Call) (any, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, e
	}
	v, e := c.P.Required("DeleteProtection")
	if e != nil {
		return nil, e
	}
	if e := core.OneOf("DeleteProtection", v, "on", "off"); e != nil {
		return nil, e
	}
	lb.DeleteProtection = v == "on"
	return &slbsdk.SetLoadBalancerDeleteProtectionResponse{RequestId: c.ReqID}, nil
}

func setLoadBalancerName(c *core.Call) (any, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, e
	}
	name, e := c.P.Required("LoadBalancerName")
	if e != nil {
		return nil, e
	}
	if len(name) > 80 {
		return nil, core.Errf(400, "InvalidParameter", "The Lb Name is Not supported: %q is longer than 80 characters.", name)
	}
	lb.Name = name
	return &slbsdk.SetLoadBalancerNameResponse{RequestId: c.ReqID}, nil
}

// backend is the index of a server in the backend list, or -1.
func (lb *LoadBalancer) backend(id string) int {
	for i, b := range lb.Backends {
		if b.ServerID == id {
			return i
		}
	}
	return -1
}

// backendServersParam decodes BackendServers, a JSON list whose Weight the
// vendor's own examples send as a string ("100") and others as a number.
func backendServersParam(c *core.Call) ([]Backend, *core.Error) {
	raw, e := c.P.Required("BackendServers")
	if e != nil {
		return nil, e
	}
	var in []struct {
		ServerId    string
		Weight      json.RawMessage
		Type        string
		Description string
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return nil, core.Errf(400, "BackendServersMalformed", "the specified parameter BackendServers is unavailable: %v.", err)
	}
	if len(in) > slbMaxBackendsPerCall {
		return nil, core.Errf(400, "TooManyBackendServers", "The total number of input real servers exceeds max supported number: %d (got %d).", slbMaxBackendsPerCall, len(in))
	}
	var out []Backend
	seen := map[string]bool{}
	for _, b := range in {
		if b.ServerId == "" {
			return nil, core.Errf(400, "InvalidParameter", "The VmName is empty: every backend server needs a ServerId.")
		}
		w := 100
		if s := strings.Trim(string(b.Weight), `"`); s != "" && s != "null" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n > 100 {
				return nil, core.Errf(400, "InvalidWeight.Malformed", "A specified weight is not valid: %s (0-100).", s)
			}
			w = n
		}
		typ := cmp.Or(b.Type, "ecs")
		if typ != "ecs" {
			return nil, core.Errf(400, "BackendServer.InvalidType", "The specified Type %q is invalid: the emulator models ecs backends.", typ)
		}
		if seen[b.ServerId] { // the vendor keeps the first of identical servers
			continue
		}
		seen[b.ServerId] = true
		out = append(out, Backend{ServerID: b.ServerId, Weight: w, Type: typ, Desc: b.Description})
	}
	return out, nil
}

func addBackendServers(c *core.Call) (any, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, e
	}
	add, e := backendServersParam(c)
	if e != nil {
		return nil, e
	}
	for _, b := range add {
		in, ok := core.ECS().Instance(c, b.ServerID)
		if !ok || in.Region != c.Region {
			return nil, core.Errf(404, "InvalidServerId.NotFound", "The specified ServerId %q does not exist.", b.ServerID)
		}
		if st := in.Status; st != "Running" {
			return nil, core.Errf(400, "ObtainIpFail", "The specified BackendServers is invalid; some of the specified backend servers do not exist or are not running: %s is %s.", b.ServerID, st)
		}
		if lb.VpcID == "" || in.VpcID != lb.VpcID {
			return nil, core.Errf(400, "NetworkConflict", "there are network conflicts in specified parameter: instance %s is in VPC %s, load balancer %s in %q.", b.ServerID, in.VpcID, lb.ID, lb.VpcID)
		}
		if lb.backend(b.ServerID) >= 0 {
			return nil, core.Errf(400, "InvalidParameter", "The resource already exists: %s is already a backend server of %s.", b.ServerID, lb.ID)
		}
	}
	lb.Backends = append(lb.Backends, add...)
	resp := &slbsdk.AddBackendServersResponse{RequestId: c.ReqID, LoadBalancerId: lb.ID}
	resp.BackendServers.BackendServer = []slbsdk.BackendServer{}
	for _, b := range lb.Backends {
		resp.BackendServers.BackendServer = append(resp.BackendServers.BackendServer, slbsdk.BackendServer{ServerId: b.ServerID,
			Weight: strconv.Itoa(b.Weight), Type: b.Type, Description: b.Desc})
	}
	return resp, nil
}

// removeBackendServers removes the listed servers; a server that is not (or
// no longer, as after its release) a backend is passed over.
func removeBackendServers(c *core.Call) (any, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, e
	}
	rm, e := backendServersParam(c)
	if e != nil {
		return nil, e
	}
	for _, b := range rm {
		if i := lb.backend(b.ServerID); i >= 0 {
			lb.Backends = append(lb.Backends[:i:i], lb.Backends[i+1:]...)
		}
	}
	resp := &slbsdk.RemoveBackendServersResponse{RequestId: c.ReqID, LoadBalancerId: lb.ID}
	resp.BackendServers.BackendServer = []slbsdk.BackendServerInRemoveBackendServers{}
	for _, b := range lb.Backends {
		resp.BackendServers.BackendServer = append(resp.BackendServers.BackendServer, slbsdk.BackendServerInRemoveBackendServers{
			ServerId: b.ServerID, Weight: b.Weight, Type: b.Type, Description: b.Desc})
	}
	return resp, nil
}

// describeHealthStatus reports every backend of every listener (or of
// ListenerPort): normal when the listener runs and the instance is Running
// with a weight, abnormal when the instance is not Running, unavailable when
// the listener is stopped or does not check health.
func describeHealthStatus(c *core.Call) (any, *core.Error) {
	lb, e := findSLB(c)
	if e != nil {
		return nil, e
	}
	listeners := lb.Listeners
	if c.P["ListenerPort"] != "" {
		l, e := findListener(c, lb)
		if e != nil {
			return nil, e
		}
		listeners = []*Listener{l}
	}
	resp := &slbsdk.DescribeHealthStatusResponse{RequestId: c.ReqID}
	resp.BackendServers.BackendServer = []slbsdk.BackendServer{}
	for _, l := range listeners {
		for _, b := range lb.Backends {
			health := "unavailable"
			if in, ok := core.ECS().Instance(c, b.ServerID); l.Running && l.HealthCheck == "on" {
				health = "abnormal"
				if ok && in.Status == "Running" {
					health = "normal"
				}
			}
			ip := backendIP(c, b.ServerID)
			resp.BackendServers.BackendServer = append(resp.BackendServers.BackendServer, slbsdk.BackendServer{
				ServerId: b.ServerID, ServerIp: ip, Port: l.BackendPort, ListenerPort: l.Port, Protocol: "tcp",
				ServerHealthStatus: health})
		}
	}
	return resp, nil
}

// slbTags is the SLB tag API. The emulator models load balancer instances;
// the vendor's other types are accepted as names whose ids never exist here.
var slbTags = &core.TagAPI[*core.Call]{Product: "SLB", Kinds: map[string]*core.TagKind[*core.Call]{
	"instance":               {Find: findSLBTags, All: allSLBTags},
	"certificate":            {},
	"acl":                    {},
	"vservergroup":           {},
	"masterslaveservergroup": {},
}}

func findSLBTags(c *core.Call, id string) *core.TagTarget {
	lb := StoreIn(c.Stores).LoadBalancers[id]
	if lb == nil || lb.Region != c.Region {
		return nil
	}
	return &core.TagTarget{ID: lb.ID, Tags: lb.Tags, Set: func(t []core.Tag) { lb.Tags = t }}
}

func allSLBTags(c *core.Call, filters []core.Tag) []core.TagTarget {
	return core.TaggedTargets(c, core.SortedKeys(StoreIn(c.Stores).LoadBalancers), filters, findSLBTags)
}

func slbTagResources(c *core.Call) (any, *core.Error) {
	if e := slbTags.Tag(c); e != nil {
		return nil, e
	}
	return &slbsdk.TagResourcesResponse{RequestId: c.ReqID}, nil
}

func slbUntagResources(c *core.Call) (any, *core.Error) {
	if e := slbTags.Untag(c); e != nil {
		return nil, e
	}
	return &slbsdk.UntagResourcesResponse{RequestId: c.ReqID}, nil
}

func slbListTagResources(c *core.Call) (any, *core.Error) {
	rows, next, e := slbTags.List(c, core.TagListPageSize, false)
	if e != nil {
		return nil, e
	}
	resp := &slbsdk.ListTagResourcesResponse{RequestId: c.ReqID, NextToken: next}
	resp.TagResources.TagResource = make([]slbsdk.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			slbsdk.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}
