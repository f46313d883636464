package emulator

// Classic Load Balancer (SLB API 2014-05-15): instances, backend servers,
// health status, deletion protection and tags. Listeners are in
// slb_listeners.go. Semantics and codes follow
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
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/slb"
)

// SLB actions on one load balancer (by LoadBalancerId) do not require RegionId in the vendor's
// model, so they are regionOptional; creating, listing and tagging do.
func init() {
	register(versionSLB, "CreateLoadBalancer", route{fn: createLoadBalancer, write: true, idem: true})
	register(versionSLB, "DescribeLoadBalancers", route{fn: describeLoadBalancers})
	register(versionSLB, "DescribeLoadBalancerAttribute", route{fn: describeLoadBalancerAttribute, regionOptional: true})
	register(versionSLB, "DeleteLoadBalancer", route{fn: deleteLoadBalancer, write: true, regionOptional: true})
	register(versionSLB, "SetLoadBalancerDeleteProtection", route{fn: setLoadBalancerDeleteProtection, write: true})
	register(versionSLB, "SetLoadBalancerName", route{fn: setLoadBalancerName, write: true, regionOptional: true})
	register(versionSLB, "AddBackendServers", route{fn: addBackendServers, write: true, regionOptional: true})
	register(versionSLB, "RemoveBackendServers", route{fn: removeBackendServers, write: true, regionOptional: true})
	register(versionSLB, "DescribeHealthStatus", route{fn: describeHealthStatus, regionOptional: true})
	register(versionSLB, "TagResources", route{fn: slbTagResources, write: true})
	register(versionSLB, "UntagResources", route{fn: slbUntagResources, write: true})
	register(versionSLB, "ListTagResources", route{fn: slbListTagResources})
}

// slbSpecs are the performance-guaranteed specifications on sale.
var slbSpecs = []string{"slb.s1.small", "slb.s2.small", "slb.s2.medium", "slb.s3.small", "slb.s3.medium",
	"slb.s3.large", "slb.s3.xlarge", "slb.s3.xxlarge"}

// Limits the vendor documents for one call and one instance.
const (
	slbMaxBackendsPerCall = 20
	slbMaxListeners       = 50
)

func slbErrNotFound(id string) *apiError {
	return errf(404, "InvalidLoadBalancerId.NotFound", "The specified Load Balancer %q does not exist.", id)
}

func createLoadBalancer(c *call) (any, *apiError) {
	addrType := strings.ToLower(orDefault(c.p["AddressType"], "internet"))
	if e := oneOf("AddressType", addrType, "internet", "intranet"); e != nil {
		return nil, e
	}
	if e := oneOf("PayType", orDefault(c.p["PayType"], "PayOnDemand"), "PayOnDemand"); e != nil {
		return nil, e
	}
	charge := orDefault(c.p["InstanceChargeType"], "PayBySpec")
	if e := oneOf("InstanceChargeType", charge, "PayBySpec", "PayByCLCU"); e != nil {
		return nil, e
	}
	spec := c.p["LoadBalancerSpec"]
	switch {
	case charge == "PayByCLCU" && spec != "":
		return nil, errInvalid("LoadBalancerSpec", "pay-by-CLCU instances take no specification")
	case charge == "PayBySpec" && spec == "":
		spec = slbSpecs[0]
	}
	if spec != "" {
		if e := oneOf("LoadBalancerSpec", spec, slbSpecs...); e != nil {
			return nil, e
		}
	}
	netCharge := strings.ToLower(orDefault(c.p["InternetChargeType"], "paybytraffic"))
	if e := oneOf("InternetChargeType", netCharge, "paybytraffic", "paybybandwidth"); e != nil {
		return nil, e
	}
	protect := orDefault(c.p["DeleteProtection"], "off")
	if e := oneOf("DeleteProtection", protect, "on", "off"); e != nil {
		return nil, e
	}
	tags, e := c.p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	d := c.s.db
	lb := &loadBalancer{Region: c.region, Name: c.p["LoadBalancerName"], AddressType: addrType, Spec: spec, ChargeType: charge,
		NetCharge: netCharge, DeleteProtection: protect == "on", Created: c.now.UnixNano(), Tags: tags}
	if addrType == "intranet" {
		if e := c.slbPlaceInVpc(lb); e != nil {
			return nil, e
		}
	} else {
		if c.p["VSwitchId"] != "" || c.p["VpcId"] != "" {
			return nil, errf(400, "NetworkConflict", "there are network conflicts in specified parameter: an internet-facing instance takes no VpcId or VSwitchId.")
		}
		if netCharge == "paybybandwidth" {
			bw, e := c.p.Int("Bandwidth", 1)
			if e != nil || bw < 1 || bw > 5120 {
				return nil, errf(400, "InvalidParameter", "The specified Bandwidth is invalid: %q must be 1-5120 Mbit/s.", c.p["Bandwidth"])
			}
			lb.Bandwidth = bw
		}
		lb.MasterZone = orDefault(c.p["MasterZoneId"], c.region+"-a")
		d.Seq++
		lb.Address = eipAddress(d.Seq)
	}
	lb.SlaveZone = c.p["SlaveZoneId"]
	if lb.Name == "" {
		lb.Name = "auto_named_slb"
	}
	lb.ID = d.newID("lb")
	d.SLBs[lb.ID] = lb
	return &slb.CreateLoadBalancerResponse{RequestId: c.reqID, LoadBalancerId: lb.ID, LoadBalancerName: lb.Name,
		Address: lb.Address, VpcId: lb.VpcID, VSwitchId: lb.VSwitchID, NetworkType: slbNetworkType(lb),
		AddressIPVersion: "ipv4", ResourceGroupId: defaultResourceGroup}, nil
}

// slbPlaceInVpc puts an internal-facing instance in its vSwitch: the VPC
// follows from the vSwitch, the zone too, and the address is the one asked
// for (inside the vSwitch, not used by another instance) or the next free one.
func (c *call) slbPlaceInVpc(lb *loadBalancer) *apiError {
	if c.p["VSwitchId"] == "" {
		return errMissing("VSwitchId")
	}
	sw, e := c.findVSwitch()
	if e != nil {
		return e
	}
	if v := c.p["VpcId"]; v != "" && v != sw.VpcID {
		return errf(400, "NetworkConflict", "there are network conflicts in specified parameter: vSwitch %s is in VPC %s, not %s.", sw.ID, sw.VpcID, v)
	}
	if v := c.s.db.network().Vpcs[sw.VpcID]; v != nil && c.s.asyncStatus(v.Created, c.now, "Pending", "Available") != "Available" {
		return errf(400, "VpcStatusError", "the specified vpc status is creating: VPC %s.", v.ID)
	}
	if z := c.p["MasterZoneId"]; z != "" && z != sw.Zone {
		return errInvalid("MasterZoneId", "vSwitch %s is in zone %s", sw.ID, sw.Zone)
	}
	lb.VpcID, lb.VSwitchID, lb.MasterZone = sw.VpcID, sw.ID, sw.Zone
	addr := c.p["Address"]
	if addr == "" {
		lb.Address = allocIP(sw)
		return nil
	}
	ip, err := netip.ParseAddr(addr)
	if err != nil || !netip.MustParsePrefix(sw.CIDR).Contains(ip) {
		return errf(400, "InvalidParameter", "The Ip is not Supported: %q is not an address of vSwitch %s (%s).", addr, sw.ID, sw.CIDR)
	}
	for _, other := range c.s.db.SLBs {
		if other.VSwitchID == sw.ID && other.Address == addr {
			return errf(400, "InvalidParameter", "The vpc Ip is exist: load balancer %s already uses %s.", other.ID, addr)
		}
	}
	lb.Address = addr
	return nil
}

func slbNetworkType(lb *loadBalancer) string {
	if lb.VpcID != "" {
		return "vpc"
	}
	return "classic"
}

func (c *call) findSLB() (*loadBalancer, *apiError) {
	id, e := c.p.Required("LoadBalancerId")
	if e != nil {
		return nil, e
	}
	lb := c.s.db.SLBs[id]
	if lb == nil || lb.Region != c.region {
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

func slbTagList(ts []tag) []slb.Tag {
	out := make([]slb.Tag, 0, len(ts))
	for _, t := range ts {
		out = append(out, slb.Tag{TagKey: t.K, TagValue: t.V})
	}
	return out
}

func describeLoadBalancers(c *call) (any, *apiError) {
	q, e := c.listQuery("LoadBalancerId", 100)
	if e != nil {
		return nil, e
	}
	var list []*loadBalancer
	for _, lb := range c.s.db.SLBs {
		if lb.Region != c.region || !matchParam(c.p, "LoadBalancerName", lb.Name) ||
			!matchParam(c.p, "VpcId", lb.VpcID) || !matchParam(c.p, "VSwitchId", lb.VSwitchID) ||
			!matchParam(c.p, "AddressType", lb.AddressType) || !matchParam(c.p, "Address", lb.Address) ||
			!matchParam(c.p, "NetworkType", slbNetworkType(lb)) || !matchParam(c.p, "LoadBalancerStatus", "active") ||
			(c.p["ServerId"] != "" && lb.backend(c.p["ServerId"]) < 0) || !q.Match(lb.ID, lb.Tags) {
			continue
		}
		list = append(list, lb)
	}
	page := pageOf(q, list, func(x *loadBalancer) string { return x.ID })
	resp := &slb.DescribeLoadBalancersResponse{RequestId: c.reqID, PageNumber: q.Number, PageSize: q.Size, TotalCount: len(list)}
	resp.LoadBalancers.LoadBalancer = []slb.LoadBalancer{}
	for _, lb := range page {
		out := slb.LoadBalancer{LoadBalancerId: lb.ID, LoadBalancerName: lb.Name, LoadBalancerStatus: "active",
			Address: lb.Address, AddressType: lb.AddressType, AddressIPVersion: "ipv4", RegionId: lb.Region,
			RegionIdAlias: lb.Region, VSwitchId: lb.VSwitchID, VpcId: lb.VpcID, NetworkType: slbNetworkType(lb),
			MasterZoneId: lb.MasterZone, SlaveZoneId: lb.SlaveZone, InternetChargeType: lb.NetCharge,
			InternetChargeTypeAlias: lb.NetCharge, Bandwidth: lb.Bandwidth, LoadBalancerSpec: lb.Spec,
			InstanceChargeType: lb.ChargeType, PayType: "PayOnDemand", CreateTime: fmtTime(lb.Created),
			CreateTimeStamp: lb.Created / 1e6, ResourceGroupId: defaultResourceGroup,
			DeleteProtection: onOff(lb.DeleteProtection), ModificationProtectionStatus: "NonProtection"}
		out.Tags.Tag = slbTagList(lb.Tags)
		resp.LoadBalancers.LoadBalancer = append(resp.LoadBalancers.LoadBalancer, out)
	}
	return resp, nil
}

func describeLoadBalancerAttribute(c *call) (any, *apiError) {
	lb, e := c.findSLB()
	if e != nil {
		return nil, e
	}
	resp := &slb.DescribeLoadBalancerAttributeResponse{RequestId: c.reqID, LoadBalancerId: lb.ID,
		LoadBalancerName: lb.Name, LoadBalancerStatus: "active", Address: lb.Address, AddressType: lb.AddressType,
		AddressIPVersion: "ipv4", RegionId: lb.Region, RegionIdAlias: lb.Region, VSwitchId: lb.VSwitchID, VpcId: lb.VpcID,
		NetworkType: slbNetworkType(lb), MasterZoneId: lb.MasterZone, SlaveZoneId: lb.SlaveZone,
		InternetChargeType: lb.NetCharge, Bandwidth: lb.Bandwidth, LoadBalancerSpec: lb.Spec,
		InstanceChargeType: lb.ChargeType, PayType: "PayOnDemand", CreateTime: fmtTime(lb.Created),
		CreateTimeStamp: lb.Created / 1e6, ResourceGroupId: defaultResourceGroup,
		DeleteProtection: onOff(lb.DeleteProtection), ModificationProtectionStatus: "NonProtection"}
	resp.ListenerPorts.ListenerPort = []int{}
	resp.ListenerPortsAndProtocol.ListenerPortAndProtocol = []slb.ListenerPortAndProtocol{}
	resp.ListenerPortsAndProtocal.ListenerPortAndProtocal = []slb.ListenerPortAndProtocal{}
	for _, l := range lb.Listeners {
		resp.ListenerPorts.ListenerPort = append(resp.ListenerPorts.ListenerPort, l.Port)
		resp.ListenerPortsAndProtocol.ListenerPortAndProtocol = append(resp.ListenerPortsAndProtocol.ListenerPortAndProtocol,
			slb.ListenerPortAndProtocol{ListenerPort: l.Port, ListenerProtocol: "tcp", Description: l.Desc})
		resp.ListenerPortsAndProtocal.ListenerPortAndProtocal = append(resp.ListenerPortsAndProtocal.ListenerPortAndProtocal,
			slb.ListenerPortAndProtocal{ListenerPort: l.Port, ListenerProtocal: "tcp"})
	}
	resp.BackendServers.BackendServer = []slb.BackendServerInDescribeLoadBalancerAttribute{}
	for _, b := range lb.Backends {
		ip := c.s.backendIP(b.ServerID)
		resp.BackendServers.BackendServer = append(resp.BackendServers.BackendServer,
			slb.BackendServerInDescribeLoadBalancerAttribute{ServerId: b.ServerID, Weight: b.Weight, Type: b.Type,
				Description: b.Desc, ServerIp: ip})
	}
	resp.Tags.Tag = slbTagList(lb.Tags)
	resp.Labels.Label = []string{}
	return resp, nil
}

// backendIP is a backend server's private address; "" once the instance is gone.
func (s *Server) backendIP(id string) string {
	if in := s.db.Instances[id]; in != nil {
		return in.IP
	}
	return ""
}

func deleteLoadBalancer(c *call) (any, *apiError) {
	lb, e := c.findSLB()
	if e != nil {
		return nil, e
	}
	if lb.DeleteProtection {
		return nil, errf(400, "OperationDenied.DeleteProtectionIsOn", "The loadbalancer %s can't be deleted due to DeleteProtection is enabled.", lb.ID)
	}
	delete(c.s.db.SLBs, lb.ID)
	return &slb.DeleteLoadBalancerResponse{RequestId: c.reqID}, nil
}

func setLoadBalancerDeleteProtection(c *call) (any, *apiError) {
	lb, e := c.findSLB()
	if e != nil {
		return nil, e
	}
	v, e := c.p.Required("DeleteProtection")
	if e != nil {
		return nil, e
	}
	if e := oneOf("DeleteProtection", v, "on", "off"); e != nil {
		return nil, e
	}
	lb.DeleteProtection = v == "on"
	return &slb.SetLoadBalancerDeleteProtectionResponse{RequestId: c.reqID}, nil
}

func setLoadBalancerName(c *call) (any, *apiError) {
	lb, e := c.findSLB()
	if e != nil {
		return nil, e
	}
	name, e := c.p.Required("LoadBalancerName")
	if e != nil {
		return nil, e
	}
	if len(name) > 80 {
		return nil, errf(400, "InvalidParameter", "The Lb Name is Not supported: %q is longer than 80 characters.", name)
	}
	lb.Name = name
	return &slb.SetLoadBalancerNameResponse{RequestId: c.reqID}, nil
}

// backend is the index of a server in the backend list, or -1.
func (lb *loadBalancer) backend(id string) int {
	for i, b := range lb.Backends {
		if b.ServerID == id {
			return i
		}
	}
	return -1
}

// backendServersParam decodes BackendServers, a JSON list whose Weight the
// vendor's own examples send as a string ("100") and others as a number.
func backendServersParam(c *call) ([]slbBackend, *apiError) {
	raw, e := c.p.Required("BackendServers")
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
		return nil, errf(400, "BackendServersMalformed", "the specified parameter BackendServers is unavailable: %v.", err)
	}
	if len(in) > slbMaxBackendsPerCall {
		return nil, errf(400, "TooManyBackendServers", "The total number of input real servers exceeds max supported number: %d (got %d).", slbMaxBackendsPerCall, len(in))
	}
	var out []slbBackend
	seen := map[string]bool{}
	for _, b := range in {
		if b.ServerId == "" {
			return nil, errf(400, "InvalidParameter", "The VmName is empty: every backend server needs a ServerId.")
		}
		w := 100
		if s := strings.Trim(string(b.Weight), `"`); s != "" && s != "null" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n > 100 {
				return nil, errf(400, "InvalidWeight.Malformed", "A specified weight is not valid: %s (0-100).", s)
			}
			w = n
		}
		typ := orDefault(b.Type, "ecs")
		if typ != "ecs" {
			return nil, errf(400, "BackendServer.InvalidType", "The specified Type %q is invalid: the emulator models ecs backends.", typ)
		}
		if seen[b.ServerId] { // the vendor keeps the first of identical servers
			continue
		}
		seen[b.ServerId] = true
		out = append(out, slbBackend{ServerID: b.ServerId, Weight: w, Type: typ, Desc: b.Description})
	}
	return out, nil
}

func addBackendServers(c *call) (any, *apiError) {
	lb, e := c.findSLB()
	if e != nil {
		return nil, e
	}
	add, e := backendServersParam(c)
	if e != nil {
		return nil, e
	}
	for _, b := range add {
		in := c.s.db.Instances[b.ServerID]
		if in == nil || in.Region != c.region {
			return nil, errf(404, "InvalidServerId.NotFound", "The specified ServerId %q does not exist.", b.ServerID)
		}
		if st := c.s.instanceStatus(in, c.now); st != "Running" {
			return nil, errf(400, "ObtainIpFail", "The specified BackendServers is invalid; some of the specified backend servers do not exist or are not running: %s is %s.", in.ID, st)
		}
		if lb.VpcID == "" || in.VpcID != lb.VpcID {
			return nil, errf(400, "NetworkConflict", "there are network conflicts in specified parameter: instance %s is in VPC %s, load balancer %s in %q.", in.ID, in.VpcID, lb.ID, lb.VpcID)
		}
		if lb.backend(b.ServerID) >= 0 {
			return nil, errf(400, "InvalidParameter", "The resource already exists: %s is already a backend server of %s.", b.ServerID, lb.ID)
		}
	}
	lb.Backends = append(lb.Backends, add...)
	resp := &slb.AddBackendServersResponse{RequestId: c.reqID, LoadBalancerId: lb.ID}
	resp.BackendServers.BackendServer = []slb.BackendServer{}
	for _, b := range lb.Backends {
		resp.BackendServers.BackendServer = append(resp.BackendServers.BackendServer, slb.BackendServer{ServerId: b.ServerID,
			Weight: strconv.Itoa(b.Weight), Type: b.Type, Description: b.Desc})
	}
	return resp, nil
}

// removeBackendServers removes the listed servers; a server that is not (or
// no longer, as after its release) a backend is passed over.
func removeBackendServers(c *call) (any, *apiError) {
	lb, e := c.findSLB()
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
	resp := &slb.RemoveBackendServersResponse{RequestId: c.reqID, LoadBalancerId: lb.ID}
	resp.BackendServers.BackendServer = []slb.BackendServerInRemoveBackendServers{}
	for _, b := range lb.Backends {
		resp.BackendServers.BackendServer = append(resp.BackendServers.BackendServer, slb.BackendServerInRemoveBackendServers{
			ServerId: b.ServerID, Weight: b.Weight, Type: b.Type, Description: b.Desc})
	}
	return resp, nil
}

// describeHealthStatus reports every backend of every listener (or of
// ListenerPort): normal when the listener runs and the instance is Running
// with a weight, abnormal when the instance is not Running, unavailable when
// the listener is stopped or does not check health.
func describeHealthStatus(c *call) (any, *apiError) {
	lb, e := c.findSLB()
	if e != nil {
		return nil, e
	}
	listeners := lb.Listeners
	if c.p["ListenerPort"] != "" {
		l, e := c.findListener(lb)
		if e != nil {
			return nil, e
		}
		listeners = []*slbListener{l}
	}
	resp := &slb.DescribeHealthStatusResponse{RequestId: c.reqID}
	resp.BackendServers.BackendServer = []slb.BackendServer{}
	for _, l := range listeners {
		for _, b := range lb.Backends {
			health := "unavailable"
			if in := c.s.db.Instances[b.ServerID]; l.Running && l.HealthCheck == "on" {
				health = "abnormal"
				if in != nil && c.s.instanceStatus(in, c.now) == "Running" {
					health = "normal"
				}
			}
			ip := c.s.backendIP(b.ServerID)
			resp.BackendServers.BackendServer = append(resp.BackendServers.BackendServer, slb.BackendServer{
				ServerId: b.ServerID, ServerIp: ip, Port: l.BackendPort, ListenerPort: l.Port, Protocol: "tcp",
				ServerHealthStatus: health})
		}
	}
	return resp, nil
}

// slbTags is the SLB tag API. The emulator models load balancer instances;
// the vendor's other types are accepted as names whose ids never exist here.
var slbTags = &tagAPI{Product: "SLB", Kinds: map[string]*tagKind{
	"instance":               {Find: findSLBTags, All: allSLBTags},
	"certificate":            {},
	"acl":                    {},
	"vservergroup":           {},
	"masterslaveservergroup": {},
}}

func findSLBTags(c *call, id string) *tagTarget {
	lb := c.s.db.SLBs[id]
	if lb == nil || lb.Region != c.region {
		return nil
	}
	return &tagTarget{ID: lb.ID, Tags: lb.Tags, Set: func(t []tag) { lb.Tags = t }}
}

func allSLBTags(c *call, filters []tag) []tagTarget {
	return taggedTargets(c, sortedKeys(c.s.db.SLBs), filters, findSLBTags)
}

func slbTagResources(c *call) (any, *apiError) {
	if e := slbTags.Tag(c); e != nil {
		return nil, e
	}
	return &slb.TagResourcesResponse{RequestId: c.reqID}, nil
}

func slbUntagResources(c *call) (any, *apiError) {
	if e := slbTags.Untag(c); e != nil {
		return nil, e
	}
	return &slb.UntagResourcesResponse{RequestId: c.reqID}, nil
}

func slbListTagResources(c *call) (any, *apiError) {
	rows, next, e := slbTags.List(c, tagListPageSize, false)
	if e != nil {
		return nil, e
	}
	resp := &slb.ListTagResourcesResponse{RequestId: c.reqID, NextToken: next}
	resp.TagResources.TagResource = make([]slb.TagResource, 0, len(rows))
	for _, r := range rows {
		resp.TagResources.TagResource = append(resp.TagResources.TagResource,
			slb.TagResource{ResourceType: r.Type, ResourceId: r.ID, TagKey: r.Key, TagValue: r.Value})
	}
	return resp, nil
}
