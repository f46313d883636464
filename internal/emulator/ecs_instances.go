package emulator

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	ecs7 "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func init() {
	register(versionECS, "RunInstances", route{fn: runInstances, write: true, idem: true})
	register(versionECS, "DescribeInstances", route{fn: describeInstances, vendorModel: true})
	register(versionECS, "DeleteInstances", route{fn: deleteInstances, write: true, idem: true})
	register(versionECS, "StartInstances", route{fn: startInstances, write: true})
	register(versionECS, "StopInstances", route{fn: stopInstances, write: true})
}

const timeFormat = core.TimeFormat

var fmtTime = core.FormatTime

// instanceStatus derives the visible status from phase and elapsed time:
// boot runs Pending for the first half of BootTime, Starting for the second.
func (s *Server) instanceStatus(in *instance, now time.Time) string {
	el := time.Duration(now.UnixNano() - in.PhaseAt)
	bt := s.cfg.BootTime
	switch in.Phase {
	case phaseBoot:
		if el < bt/2 {
			return "Pending"
		}
		if el < bt {
			return "Starting"
		}
		return "Running"
	case phaseStarting:
		if el < bt/2 {
			return "Starting"
		}
		return "Running"
	case phaseStopping:
		if el < bt/2 {
			return "Stopping"
		}
		return "Stopped"
	}
	return "Running"
}

// asyncStatus is the status of a resource that becomes ready asynchronously
// (VPC, vSwitch, file system): pending for half the boot time.
func (s *Server) asyncStatus(created int64, now time.Time, pending, done string) string {
	if time.Duration(now.UnixNano()-created) < s.cfg.BootTime/2 {
		return pending
	}
	return done
}

// visible hides an instance from Describe during the consistency delay and
// once its AutoReleaseTime has passed (the janitor removes it shortly).
func (s *Server) visible(in *instance, now time.Time) bool {
	if s.cfg.ConsistencyDelay > 0 && now.UnixNano()-in.Created < int64(s.cfg.ConsistencyDelay) {
		return false
	}
	return in.AutoRelease == 0 || in.AutoRelease > now.Unix()
}

// --- disks ---

// checkDisk applies the ESSD rules of facts section 3.
func checkDisk(name string, d *disk, fam *gpuFamily, system bool) *apiError {
	if d.Size == 0 && d.Snapshot != "" {
		return checkDiskKind(name, d, fam, system)
	}
	sizeErr := func(lo, hi int) *apiError {
		code := "InvalidDataDiskSize.ValueNotSupported"
		if system {
			code = "InvalidSystemDiskSize.ValueNotSupported"
		}
		return errf(400, code, "%s.Size %d GiB is not valid for %s %s: must be %d-%d GiB.", name, d.Size, d.Category, d.PL, lo, hi)
	}
	switch d.Category {
	case "cloud_essd":
		if d.PL == "" {
			d.PL = "PL1"
		}
		ranges := map[string][2]int{"PL0": {1, 65536}, "PL1": {20, 65536}, "PL2": {461, 65536}, "PL3": {1261, 65536}}
		r, ok := ranges[d.PL]
		if !ok {
			return errf(400, "InvalidPerformanceLevel.ValueNotSupported", "%s.PerformanceLevel %q is not one of PL0, PL1, PL2, PL3.", name, d.PL)
		}
		if system {
			r[1] = maxSystemDiskGiB
		}
		if d.Size < r[0] || d.Size > r[1] {
			return sizeErr(r[0], r[1])
		}
	case "cloud_auto":
		d.PL = ""
		hi := 65536
		if system {
			hi = maxSystemDiskGiB
		}
		if d.Size < 1 || d.Size > hi {
			return sizeErr(1, hi)
		}
		baseline := max(min(1800+50*d.Size, 50000), 3000)
		maxProv := max(min(1000*d.Size-baseline, 50000), 0)
		if d.Iops < 0 || d.Iops > maxProv {
			return errf(400, "InvalidProvisionedIops.ValueNotSupported", "%s.ProvisionedIops %d must be 0-%d for a %d GiB ESSD AutoPL disk.", name, d.Iops, maxProv, d.Size)
		}
	case "elastic_ephemeral_disk_standard", "elastic_ephemeral_disk_premium":
		if system {
			return errf(400, "InvalidSystemDiskCategory.ValueNotSupported", "%s.Category %s cannot be a system disk.", name, d.Category)
		}
		if !fam.Ephemeral {
			return errf(400, "InvalidDataDiskCategory.ValueNotSupported", "%s.Category %s is not supported by the %s family.", name, d.Category, fam.Family)
		}
		if d.Size < 64 || d.Size > 8192 {
			return sizeErr(64, 8192)
		}
	default:
		code := "InvalidDataDiskCategory.ValueNotSupported"
		if system {
			code = "InvalidSystemDiskCategory.ValueNotSupported"
		}
		return errf(400, code, "%s.Category %q is not supported for GPU instances: use cloud_essd, cloud_auto or (data disks, newer families) elastic_ephemeral_disk_standard|premium.", name, d.Category)
	}
	if d.Category != "cloud_auto" && d.Iops != 0 {
		return errf(400, "InvalidProvisionedIops.ValueNotSupported", "%s.ProvisionedIops applies to cloud_auto disks only.", name)
	}
	return nil
}

func parseDisk(name string, m map[string]string, defSize int) (disk, *apiError) {
	d := disk{Category: orDefault(m["Category"], "cloud_essd"), PL: m["PerformanceLevel"], Name: m["DiskName"], Delete: true}
	var err error
	d.Snapshot = m["SnapshotId"]
	if m["Size"] == "" {
		// A disk made from a snapshot takes the snapshot's size, so Size is not needed then.
		if defSize == 0 && d.Snapshot == "" {
			return d, errMissing(name + ".Size")
		}
		d.Size = defSize
	} else if d.Size, err = strconv.Atoi(m["Size"]); err != nil {
		return d, errInvalid(name+".Size", "not an integer")
	}
	if v := m["ProvisionedIops"]; v != "" {
		if d.Iops, err = strconv.Atoi(v); err != nil {
			return d, errInvalid(name+".ProvisionedIops", "not an integer")
		}
	}
	if v := m["BurstingEnabled"]; v != "" {
		d.Burst = v == "true"
	}
	if v := m["DeleteWithInstance"]; v == "false" {
		d.Delete = false
	}
	return d, nil
}

// --- RunInstances ---

func runInstances(c *call) (any, *apiError) {
	s, d := c.s, c.s.db
	p, e := c.withLaunchTemplate()
	if e != nil {
		return nil, e
	}
	img, e := runImage(p)
	if e != nil {
		return nil, e
	}
	typeName, e := p.Required("InstanceType")
	if e != nil {
		return nil, e
	}
	it := instanceTypes[normalizeType(typeName)]
	if it == nil {
		return nil, errf(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType %q is not offered by the emulator's catalog.", typeName)
	}
	vswID, sgIDs, e := runPlacement(p)
	if e != nil {
		return nil, e
	}
	vsw := d.network().VSwitches[vswID]
	if vsw == nil || vsw.Region != c.region {
		return nil, errNotFound("InvalidVSwitchId.NotFound", vswID)
	}
	if z := p["ZoneId"]; z != "" && z != vsw.Zone {
		return nil, errf(400, "InvalidParameter.Mismatch", "ZoneId %s does not match the zone %s of vSwitch %s.", z, vsw.Zone, vswID)
	}
	for _, id := range sgIDs {
		sg := d.SGs[id]
		if sg == nil || sg.Region != c.region {
			return nil, errNotFound("InvalidSecurityGroupId.NotFound", id)
		}
		if sg.VpcID != vsw.VpcID {
			return nil, errf(400, "InvalidSecurityGroupId.VPCMismatch", "Security group %s belongs to %s, the vSwitch to %s.", id, sg.VpcID, vsw.VpcID)
		}
	}
	amount, e := p.Int("Amount", 1)
	if e != nil {
		return nil, e
	}
	if amount < 1 || amount > 100 {
		return nil, errInvalid("Amount", "must be 1-100, got %d", amount)
	}
	minAmount, e := p.Int("MinAmount", amount)
	if e != nil {
		return nil, e
	}
	if minAmount < 1 || minAmount > amount {
		return nil, errInvalid("MinAmount", "must be 1-Amount (%d), got %d", amount, minAmount)
	}
	tags, e := p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	spot := orDefault(p["SpotStrategy"], "NoSpot")
	if !contains([]string{"NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit"}, spot) {
		return nil, errInvalid("SpotStrategy", "must be NoSpot, SpotAsPriceGo or SpotWithPriceLimit")
	}
	charge := orDefault(p["InstanceChargeType"], "PostPaid")
	if charge != "PostPaid" && charge != "PrePaid" {
		return nil, errInvalid("InstanceChargeType", "must be PostPaid or PrePaid")
	}
	if spot != "NoSpot" && charge != "PostPaid" {
		return nil, errInvalid("SpotStrategy", "spot instances are pay-as-you-go (PostPaid) only")
	}

	// Placement: deployment set and HPC cluster.
	var ds *deploymentSet
	if id := p["DeploymentSetId"]; id != "" {
		ds = d.DSets[id]
		if ds == nil || ds.Region != c.region {
			return nil, errNotFound("InvalidDeploymentSetId.NotFound", id)
		}
		if spot != "NoSpot" {
			return nil, errf(400, "InvalidParameter.Conflict", "Spot instances cannot be placed in a deployment set (%s).", id)
		}
		if ds.Strategy == "LowLatency" {
			if n := d.refs[id]; n+amount > 20 {
				return nil, errf(400, "DeploymentSet.InstanceAmountExceeded", "LowLatency deployment set %s holds at most 20 instances: it has %d, %d more requested.", id, n, amount)
			}
			if d.refs[id] > 0 && ds.Zone != "" && ds.Zone != vsw.Zone {
				return nil, errf(400, "InvalidParameter.Mismatch", "LowLatency deployment set %s is in zone %s, the vSwitch in %s.", id, ds.Zone, vsw.Zone)
			}
		}
	}
	hpcID := p["HpcClusterId"]
	if it.fam.NeedsHpc && hpcID == "" {
		return nil, errf(400, "MissingParameter", "The input parameter \"HpcClusterId\" that is mandatory for %s (super computing cluster type) is not supplied.", it.Name)
	}
	if hpcID != "" {
		h := d.Hpcs[hpcID]
		if h == nil || h.Region != c.region {
			return nil, errNotFound("InvalidHpcClusterId.NotFound", hpcID)
		}
	}

	// Network interfaces (eRDMA where the type has ERIs).
	var nics []nic
	hp := 0
	for i, m := range p.StructList("NetworkInterface") {
		name := fmt.Sprintf("NetworkInterface.%d", i+1)
		n := nic{Mode: orDefault(m["NetworkInterfaceTrafficMode"], "Standard"), VSwitchID: orDefault(m["VSwitchId"], vswID)}
		if m["InstanceType"] == "Primary" {
			// The primary interface was read by runPlacement: its vSwitch and groups are the instance's.
			n.SGs = sgIDs
			nics = append(nics, n)
			continue
		}
		if v := m["NetworkCardIndex"]; v != "" {
			idx, err := strconv.Atoi(v)
			if err != nil || idx < 0 || idx >= it.fam.Cards {
				return nil, errInvalid(name+".NetworkCardIndex", "%s has %d network card(s); index %q is out of range", it.Name, it.fam.Cards, v)
			}
			n.Index = idx
		}
		switch n.Mode {
		case "Standard":
		case "HighPerformance":
			if it.fam.Eri == 0 {
				return nil, errf(400, "InvalidParameter.NetworkInterfaceTrafficMode", "%s.NetworkInterfaceTrafficMode HighPerformance (eRDMA) needs an instance type with EriQuantity > 0; %s has none.", name, it.Name)
			}
			hp++
		default:
			return nil, errInvalid(name+".NetworkInterfaceTrafficMode", "must be Standard or HighPerformance")
		}
		nv := d.network().VSwitches[n.VSwitchID]
		if nv == nil || nv.Region != c.region {
			return nil, errNotFound("InvalidVSwitchId.NotFound", n.VSwitchID)
		}
		if nv.Zone != vsw.Zone || nv.VpcID != vsw.VpcID {
			return nil, errf(400, "InvalidParameter.Mismatch", "%s.VSwitchId %s must be in the instance's VPC and zone.", name, n.VSwitchID)
		}
		if sg := m["SecurityGroupId"]; sg != "" {
			if g := d.SGs[sg]; g == nil || g.Region != c.region {
				return nil, errNotFound("InvalidSecurityGroupId.NotFound", sg)
			}
			n.SGs = []string{sg}
		}
		nics = append(nics, n)
	}
	if hp > it.fam.Eri {
		return nil, errf(400, "InvalidParameter.NetworkInterfaceTrafficMode", "%s supports %d eRDMA interface(s); %d requested.", it.Name, it.fam.Eri, hp)
	}

	// Disks.
	sys, e := parseDisk("SystemDisk", map[string]string{
		"Category": p["SystemDisk.Category"], "Size": p["SystemDisk.Size"], "PerformanceLevel": p["SystemDisk.PerformanceLevel"],
		"DiskName": p["SystemDisk.DiskName"], "ProvisionedIops": p["SystemDisk.ProvisionedIops"], "BurstingEnabled": p["SystemDisk.BurstingEnabled"],
	}, 40)
	if e != nil {
		return nil, e
	}
	if sys.Size < img.Size {
		return nil, errf(400, "InvalidSystemDiskSize.LessThanImageSize", "SystemDisk.Size %d GiB is smaller than the image (%d GiB).", sys.Size, img.Size)
	}
	if e := checkDisk("SystemDisk", &sys, it.fam, true); e != nil {
		return nil, e
	}
	var data []disk
	dataDisks := p.StructList("DataDisk")
	if len(dataDisks) > maxDataDisks {
		return nil, errf(400, "InvalidDataDiskCount.Exceeded", "%d data disks requested; an instance takes at most %d (DataDisk.1 to DataDisk.%d).", len(dataDisks), maxDataDisks, maxDataDisks)
	}
	for i, m := range dataDisks {
		name := fmt.Sprintf("DataDisk.%d", i+1)
		dd, e := parseDisk(name, m, 0)
		if e != nil {
			return nil, e
		}
		if e := checkDisk(name, &dd, it.fam, false); e != nil {
			return nil, e
		}
		data = append(data, dd)
	}

	autoRelease, e := c.autoReleaseParam()
	if e != nil {
		return nil, e
	}
	ramRole, e := ramRoleParam(p)
	if e != nil {
		return nil, e
	}
	userData := p["UserData"]
	if userData != "" {
		raw, err := base64.StdEncoding.DecodeString(userData)
		if err != nil {
			return nil, errf(400, "InvalidUserData.Base64FormatInvalid", "UserData must be Base64-encoded.")
		}
		// The vendor's limit applies to the data before Base64 encoding.
		if len(raw) > maxUserDataBytes {
			return nil, errf(400, "InvalidUserData.SizeExceeded", "UserData is %d bytes before Base64 encoding; at most %d (32 KiB).", len(raw), maxUserDataBytes)
		}
	}
	if dry, _ := p.Bool("DryRun", false); dry {
		return nil, errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}

	// A zone that does not sell the type answers so before stock and quota are looked at.
	if code := d.unavailable(vsw.Zone, it.Name); code != "" {
		return nil, errStockOut(code, vsw.Zone, it.Name)
	}
	if isSpot(spot) && d.spotless(it.Name) {
		return nil, errStockOut(noSpotCode, vsw.Zone, it.Name)
	}
	// Stock and quota decide how many start (MinAmount allows a partial success).
	n := amount
	stockLimited := false
	if z := d.Capacity[vsw.Zone]; z != nil {
		if avail, ok := z[it.Name]; ok && avail < n {
			n = max(avail, 0)
			stockLimited = true
		}
	}
	if isSpot(spot) {
		if z := core.SpotStock(d.stores)[vsw.Zone]; z != nil {
			if avail, ok := z[it.Name]; ok && avail < n {
				n = max(avail, 0)
				stockLimited = true
			}
		}
	}
	quotaLeft := s.cfg.GPUQuota - d.gpusInUse()
	if it.GPUs > 0 && n*it.GPUs > quotaLeft {
		fit := max(quotaLeft/it.GPUs, 0)
		if fit < minAmount {
			if stockLimited && n < minAmount {
				return nil, errNoStock(vsw.Zone, it.Name)
			}
			return nil, errf(403, "QuotaExceed.ElasticQuota",
				"The GPU quota is exceeded: %d instance(s) of %s need %d GPUs, %d of the quota of %d are in use, %d remain.",
				minAmount, it.Name, minAmount*it.GPUs, d.gpusInUse(), s.cfg.GPUQuota, max(quotaLeft, 0))
		}
		n = fit
	}
	if n < minAmount {
		return nil, errNoStock(vsw.Zone, it.Name)
	}
	if z := d.Capacity[vsw.Zone]; z != nil {
		if _, ok := z[it.Name]; ok {
			z[it.Name] -= n
		}
	}
	if z := core.SpotStock(d.stores)[vsw.Zone]; z != nil && isSpot(spot) {
		if _, ok := z[it.Name]; ok {
			z[it.Name] -= n
		}
	}
	if ds != nil && d.refs[ds.ID] == 0 {
		ds.Zone = vsw.Zone
	}

	publicBandwidth, _ := strconv.Atoi(p["InternetMaxBandwidthOut"]) // range-checked (ranges.go)
	// UniqueSuffix: "whether to automatically append incremental suffixes to the hostname specified
	// by HostName and to the instance name specified by InstanceName when you batch create
	// instances. The incremental suffixes can range from 001 to 999" (RunInstances,
	// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runinstances).
	uniqueSuffix, _ := p.Bool("UniqueSuffix", false)
	nowNano := c.now.UnixNano()
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		in := &instance{
			Region: c.region, Zone: vsw.Zone, Type: it.Name, Image: img.ID,
			Name: p["InstanceName"], HostName: p["HostName"], Desc: p["Description"],
			Phase: phaseBoot, PhaseAt: nowNano, Created: nowNano,
			VSwitchID: vsw.ID, VpcID: vsw.VpcID, SGs: sgIDs, Tags: tags, Spot: spot,
			AutoRelease: autoRelease, Hpc: hpcID, SysDisk: sys, DataDisks: data,
			UserData: userData, ChargeType: charge, KeyPair: p["KeyPairName"], RamRole: ramRole,
		}
		if ds != nil {
			in.DeploySet = ds.ID
		}
		in.ID = d.newID("i")
		in.Seq = d.Seq
		if uniqueSuffix && n > 1 {
			// Numbered within the call: two calls give the same names, so a caller wanting
			// unique host names across calls leaves HostName out.
			suffix := fmt.Sprintf("%03d", i+1)
			if in.Name != "" {
				in.Name += suffix
			}
			if in.HostName != "" {
				in.HostName += suffix
			}
		}
		if in.Name == "" {
			in.Name = in.ID
		}
		if in.HostName == "" {
			in.HostName = "iZ" + in.ID[2:] + "Z"
		}
		in.IP = allocIP(vsw)
		if publicBandwidth > 0 {
			// "If InternetMaxBandwidthOut is greater than 0, a public IP address is assigned to the
			// instance" (RunInstances).
			in.PublicIP = eipAddress(in.Seq)
		}
		// The primary interface always exists; NetworkInterface.N adds to it
		// (an entry with card 0 and no explicit vSwitch describes the primary).
		if len(nics) > 0 {
			in.NICs = make([]nic, len(nics))
			for j, nc := range nics {
				nc.ID = d.newID("eni")
				if j == 0 && nc.VSwitchID == vsw.ID {
					nc.IP = in.IP
				} else {
					nc.IP = allocIP(d.network().VSwitches[nc.VSwitchID])
				}
				in.NICs[j] = nc
			}
		}
		d.addInstance(in)
		ids = append(ids, in.ID)
	}
	return &ecs.RunInstancesResponse{
		RequestId:      c.reqID,
		TradePrice:     roundCents(hourPrice(it) * float64(n)),
		InstanceIdSets: ecs.InstanceIdSets{InstanceIdSet: ids},
	}, nil
}

// isSpot says whether a SpotStrategy asks for a spot instance.
func isSpot(strategy string) bool { return strategy != "" && strategy != "NoSpot" }

// errNoStock: the facts do not state the status; the vendor's
// OperationDenied family answers 403.
func errNoStock(zone, typ string) *apiError { return errStockOut("OperationDenied.NoStock", zone, typ) }

// errStockOut answers one of stockOutCodes, each with HTTP 403 like the vendor's.
func errStockOut(code, zone, typ string) *apiError {
	switch code {
	case "Zone.NotOnSale":
		return errf(403, code, "The specified zone %s is not available for purchase of %s.", zone, typ)
	case "InvalidResourceType.NotSupported":
		return errf(403, code, "The resource type %s is not supported in zone %s. Please try other instance types, or choose other regions and zones.", typ, zone)
	}
	return errf(403, code, "The resource (%s) is out of stock in zone %s. Please try other instance types, or choose other regions and zones.", typ, zone)
}

func (d *db) gpusInUse() int {
	n := 0
	for _, in := range d.order {
		if it := instanceTypes[in.Type]; it != nil {
			n += it.GPUs
		}
	}
	return n
}

// --- DescribeInstances ---

func describeInstances(c *call) (any, *apiError) {
	s, p, d := c.s, c.p, c.s.db
	ids, e := p.JSONList("InstanceIds")
	if e != nil {
		return nil, e
	}
	if len(ids) > 100 {
		return nil, errInvalid("InstanceIds", "at most 100 ids, got %d", len(ids))
	}
	// An explicitly empty list ("[]") matches no instance, as at the vendor; only an absent
	// InstanceIds means every instance.
	noIDs := p["InstanceIds"] != "" && len(ids) == 0
	tags, e := p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	var statuses []string
	if st := p["Status"]; st != "" {
		if !contains([]string{"Pending", "Starting", "Running", "Stopping", "Stopped"}, st) {
			return nil, errInvalid("Status", "must be Pending, Starting, Running, Stopping or Stopped")
		}
		statuses = []string{st}
	}
	tokenMode := p["NextToken"] != "" || p["MaxResults"] != ""
	var pageSize int
	if tokenMode {
		if pageSize, e = p.Int("MaxResults", 10); e != nil {
			return nil, e
		}
		// The vendor clamps MaxResults rather than refusing it: below 10 answers 10, above 100 answers 100.
		pageSize = min(max(pageSize, 10), 100)
	} else if pageSize, e = p.Int("PageSize", 10); e != nil {
		return nil, e
	} else if pageSize < 1 || pageSize > 100 {
		return nil, errInvalid("PageSize", "must be 1-100, got %d", pageSize)
	}
	pageNumber, e := p.Int("PageNumber", 1)
	if e != nil || pageNumber < 1 {
		return nil, errInvalid("PageNumber", "must be a positive integer")
	}
	var after uint64
	if t := p["NextToken"]; t != "" {
		v, err := strconv.ParseUint(t, 36, 64)
		if err != nil {
			return nil, errf(400, "InvalidNextToken.Malformed", "The specified NextToken is not valid.")
		}
		after = v
	}

	// Pick the smallest candidate set an index gives, ordered by Seq.
	var cand []*instance
	switch {
	case noIDs:
	case len(ids) > 0:
		for _, id := range ids {
			if in := d.Instances[id]; in != nil {
				cand = append(cand, in)
			}
		}
		sortBySeq(cand)
	case len(tags) > 0 || p["VSwitchId"] != "":
		var best map[*instance]bool
		first := true
		for _, t := range tags {
			v := t.V
			if v == "" {
				v = "*"
			}
			set := d.byTag[tagKeyIndex(t.K, v)]
			if first || len(set) < len(best) {
				best, first = set, false
			}
		}
		if vs := p["VSwitchId"]; vs != "" {
			set := d.byVSwitch[vs]
			if first || len(set) < len(best) {
				best = set
			}
		}
		cand = make([]*instance, 0, len(best))
		for in := range best {
			cand = append(cand, in)
		}
		sortBySeq(cand)
	default:
		cand = d.order
	}
	if after > 0 {
		i := sort.Search(len(cand), func(i int) bool { return cand[i].Seq > after })
		cand = cand[i:]
	}

	match := func(in *instance) bool {
		if in.Region != c.region || !s.visible(in, c.now) {
			return false
		}
		if v := p["VpcId"]; v != "" && in.VpcID != v {
			return false
		}
		if v := p["VSwitchId"]; v != "" && in.VSwitchID != v {
			return false
		}
		if v := p["ZoneId"]; v != "" && in.Zone != v {
			return false
		}
		if v := p["InstanceType"]; v != "" && in.Type != normalizeType(v) {
			return false
		}
		if v := p["InstanceTypeFamily"]; v != "" && familyOf(in.Type) != normalizeType(v) {
			return false
		}
		if v := p["InstanceName"]; v != "" && !matchName(in.Name, v) {
			return false
		}
		if v := p["SecurityGroupId"]; v != "" && !contains(in.SGs, v) {
			return false
		}
		if v := p["DeploymentSetId"]; v != "" && in.DeploySet != v {
			return false
		}
		if v := p["HpcClusterId"]; v != "" && in.Hpc != v {
			return false
		}
		if len(tags) > 0 && !matchTags(in.Tags, tags) {
			return false
		}
		if statuses != nil && s.instanceStatus(in, c.now) != statuses[0] {
			return false
		}
		return true
	}

	resp := &ecs7.DescribeInstancesResponseBody{RequestId: &c.reqID, PageSize: ptr(int32(pageSize)), PageNumber: ptr(int32(pageNumber))}
	out := make([]*ecs7.DescribeInstancesResponseBodyInstancesInstance, 0, min(pageSize, len(cand)))
	skip := 0
	if !tokenMode {
		skip = (pageNumber - 1) * pageSize
	}
	total := 0
	var last *instance
	more := false
	for _, in := range cand {
		if !match(in) {
			continue
		}
		total++
		if skip > 0 {
			skip--
			continue
		}
		if len(out) < pageSize {
			out = append(out, s.vendorInstance(in, c.now))
			last = in
		} else {
			more = true
		}
	}
	if tokenMode && more && last != nil {
		resp.NextToken = ptr(strconv.FormatUint(last.Seq, 36))
	}
	resp.TotalCount = ptr(int32(total))
	resp.Instances = &ecs7.DescribeInstancesResponseBodyInstances{Instance: out}
	return resp, nil
}

func matchName(name, pattern string) bool {
	if strings.HasSuffix(pattern, "*") {
		return strings.HasPrefix(name, strings.TrimSuffix(pattern, "*"))
	}
	return name == pattern
}

func sortBySeq(l []*instance) {
	sort.Slice(l, func(i, j int) bool { return l[i].Seq < l[j].Seq })
}

// --- DeleteInstances, Start/StopInstances ---

func (c *call) instancesParam(limit int) ([]*instance, *apiError) {
	ids, e := c.p.IDs("InstanceIds", "InstanceId")
	if e != nil {
		return nil, e
	}
	if len(ids) == 0 {
		return nil, errMissing("InstanceId.1")
	}
	if len(ids) > limit {
		return nil, errInvalid("InstanceId", "at most %d ids, got %d", limit, len(ids))
	}
	out := make([]*instance, 0, len(ids))
	for _, id := range ids {
		in := c.s.db.Instances[id]
		if in == nil || in.Region != c.region {
			return nil, errNotFound("InvalidInstanceId.NotFound", id)
		}
		out = append(out, in)
	}
	return out, nil
}

func deleteInstances(c *call) (any, *apiError) {
	list, e := c.instancesParam(100)
	if e != nil {
		return nil, e
	}
	force, e := c.p.Bool("Force", false)
	if e != nil {
		return nil, e
	}
	for _, in := range list {
		if st := c.s.instanceStatus(in, c.now); !force && st != "Stopped" {
			return nil, errStatus("The current status of instance %s (%s) does not support this operation: stop it first or set Force=true.", in.ID, st)
		}
	}
	if e := c.dryRunSuccess(); e != nil {
		return nil, e
	}
	for _, in := range list {
		if c.s.db.Instances[in.ID] == in {
			c.s.db.removeInstance(in)
		}
	}
	return &ecs.DeleteInstancesResponse{RequestId: c.reqID}, nil
}

// dryRunSuccess ends a dry run that passed its checks with the code StartInstances,
// StopInstances and DeleteInstances document for it: DRYRUN.SUCCESS (other actions answer
// DryRunOperation). Like DryRunOperation it comes as an error answer with HTTP 400.
func (c *call) dryRunSuccess() *apiError {
	if dry, e := c.p.Bool("DryRun", false); e != nil || !dry {
		return e
	}
	return errf(400, "DRYRUN.SUCCESS", "Request validation has been passed with DryRun flag set.")
}

func startInstances(c *call) (any, *apiError) {
	list, e := c.instancesParam(100)
	if e != nil {
		return nil, e
	}
	resp := &ecs.StartInstancesResponse{RequestId: c.reqID}
	for _, in := range list {
		if st := c.s.instanceStatus(in, c.now); st != "Stopped" {
			return nil, errStatus("The current status of instance %s (%s) does not support StartInstances.", in.ID, st)
		}
	}
	if e := c.dryRunSuccess(); e != nil {
		return nil, e
	}
	for _, in := range list {
		in.Phase, in.PhaseAt, in.StoppedMode = phaseStarting, c.now.UnixNano(), ""
		resp.InstanceResponses.InstanceResponse = append(resp.InstanceResponses.InstanceResponse, ecs.InstanceResponse{
			InstanceId: in.ID, PreviousStatus: "Stopped", CurrentStatus: c.s.instanceStatus(in, c.now), Code: "200", Message: "success"})
	}
	return resp, nil
}

func stopInstances(c *call) (any, *apiError) {
	list, e := c.instancesParam(100)
	if e != nil {
		return nil, e
	}
	mode := orDefault(c.p["StoppedMode"], "KeepCharging")
	if mode != "KeepCharging" && mode != "StopCharging" {
		return nil, errInvalid("StoppedMode", "must be KeepCharging or StopCharging")
	}
	resp := &ecs.StopInstancesResponse{RequestId: c.reqID}
	for _, in := range list {
		if st := c.s.instanceStatus(in, c.now); st != "Running" {
			return nil, errStatus("The current status of instance %s (%s) does not support StopInstances.", in.ID, st)
		}
	}
	if e := c.dryRunSuccess(); e != nil {
		return nil, e
	}
	for _, in := range list {
		in.Phase, in.PhaseAt, in.StoppedMode = phaseStopping, c.now.UnixNano(), mode
		resp.InstanceResponses.InstanceResponse = append(resp.InstanceResponses.InstanceResponse, ecs.InstanceResponse{
			InstanceId: in.ID, PreviousStatus: "Running", CurrentStatus: c.s.instanceStatus(in, c.now), Code: "200", Message: "success"})
	}
	return resp, nil
}

func atoiMust(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func atofMust(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return f
}
