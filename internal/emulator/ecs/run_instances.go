package ecs

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"

	ecssdk "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

func runInstances(c *call) (any, *core.Error) {
	d := c.st
	p, e := c.withLaunchTemplate()
	if e != nil {
		return nil, e
	}
	img, e := c.runImage(p)
	if e != nil {
		return nil, e
	}
	typeName, e := p.Required("InstanceType")
	if e != nil {
		return nil, e
	}
	it := instanceTypes[normalizeType(typeName)]
	if it == nil {
		return nil, core.Errf(400, "InvalidInstanceType.ValueNotSupported", "The specified InstanceType %q is not offered by the emulator's catalog.", typeName)
	}
	vswID, sgIDs, e := runPlacement(p)
	if e != nil {
		return nil, e
	}
	vsw := c.network().VSwitches[vswID]
	if vsw == nil || vsw.Region != c.Region {
		return nil, core.ErrNotFound("InvalidVSwitchId.NotFound", vswID)
	}
	if z := p["ZoneId"]; z != "" && z != vsw.Zone {
		return nil, core.Errf(400, "InvalidParameter.Mismatch", "ZoneId %s does not match the zone %s of vSwitch %s.", z, vsw.Zone, vswID)
	}
	for _, id := range sgIDs {
		sg := d.SGs[id]
		if sg == nil || sg.Region != c.Region {
			return nil, core.ErrNotFound("InvalidSecurityGroupId.NotFound", id)
		}
		if sg.VpcID != vsw.VpcID {
			return nil, core.Errf(400, "InvalidSecurityGroupId.VPCMismatch", "Security group %s belongs to %s, the vSwitch to %s.", id, sg.VpcID, vsw.VpcID)
		}
	}
	amount, e := p.Int("Amount", 1)
	if e != nil {
		return nil, e
	}
	if amount < 1 || amount > 100 {
		return nil, core.ErrInvalid("Amount", "must be 1-100, got %d", amount)
	}
	minAmount, e := p.Int("MinAmount", amount)
	if e != nil {
		return nil, e
	}
	if minAmount < 1 || minAmount > amount {
		return nil, core.ErrInvalid("MinAmount", "must be 1-Amount (%d), got %d", amount, minAmount)
	}
	tags, e := p.Tags("Tag")
	if e != nil {
		return nil, e
	}
	spot := cmp.Or(p["SpotStrategy"], "NoSpot")
	if !slices.Contains([]string{"NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit"}, spot) {
		return nil, core.ErrInvalid("SpotStrategy", "must be NoSpot, SpotAsPriceGo or SpotWithPriceLimit")
	}
	charge := cmp.Or(p["InstanceChargeType"], "PostPaid")
	if charge != "PostPaid" && charge != "PrePaid" {
		return nil, core.ErrInvalid("InstanceChargeType", "must be PostPaid or PrePaid")
	}
	if spot != "NoSpot" && charge != "PostPaid" {
		return nil, core.ErrInvalid("SpotStrategy", "spot instances are pay-as-you-go (PostPaid) only")
	}

	// Placement: deployment set and HPC cluster.
	var ds *deploymentSet
	if id := p["DeploymentSetId"]; id != "" {
		ds = d.DSets[id]
		if ds == nil || ds.Region != c.Region {
			return nil, core.ErrNotFound("InvalidDeploymentSetId.NotFound", id)
		}
		if spot != "NoSpot" {
			return nil, core.Errf(400, "InvalidParameter.Conflict", "Spot instances cannot be placed in a deployment set (%s).", id)
		}
		if ds.Strategy == "LowLatency" {
			if n := d.refs[id]; n+amount > 20 {
				return nil, core.Errf(400, "DeploymentSet.InstanceAmountExceeded", "LowLatency deployment set %s holds at most 20 instances: it has %d, %d more requested.", id, n, amount)
			}
			if d.refs[id] > 0 && ds.Zone != "" && ds.Zone != vsw.Zone {
				return nil, core.Errf(400, "InvalidParameter.Mismatch", "LowLatency deployment set %s is in zone %s, the vSwitch in %s.", id, ds.Zone, vsw.Zone)
			}
		}
	}
	hpcID := p["HpcClusterId"]
	if it.fam.NeedsHpc && hpcID == "" {
		return nil, core.Errf(400, "MissingParameter", "The input parameter \"HpcClusterId\" that is mandatory for %s (super computing cluster type) is not supplied.", it.Name)
	}
	if hpcID != "" {
		h := d.Hpcs[hpcID]
		if h == nil || h.Region != c.Region {
			return nil, core.ErrNotFound("InvalidHpcClusterId.NotFound", hpcID)
		}
	}

	// Network interfaces (eRDMA where the type has ERIs).
	var nics []nic
	hp := 0
	for i, m := range p.StructList("NetworkInterface") {
		name := fmt.Sprintf("NetworkInterface.%d", i+1)
		n := nic{Mode: cmp.Or(m["NetworkInterfaceTrafficMode"], "Standard"), VSwitchID: cmp.Or(m["VSwitchId"], vswID)}
		if m["InstanceType"] == "Primary" {
			// The primary interface was read by runPlacement: its vSwitch and groups are the instance's.
			n.SGs = sgIDs
			nics = append(nics, n)
			continue
		}
		if v := m["NetworkCardIndex"]; v != "" {
			idx, err := strconv.Atoi(v)
			if err != nil || idx < 0 || idx >= it.fam.Cards {
				return nil, core.ErrInvalid(name+".NetworkCardIndex", "%s has %d network card(s); index %q is out of range", it.Name, it.fam.Cards, v)
			}
			n.Index = idx
		}
		switch n.Mode {
		case "Standard":
		case "HighPerformance":
			if it.fam.Eri == 0 {
				return nil, core.Errf(400, "InvalidParameter.NetworkInterfaceTrafficMode", "%s.NetworkInterfaceTrafficMode HighPerformance (eRDMA) needs an instance type with EriQuantity > 0; %s has none.", name, it.Name)
			}
			hp++
		default:
			return nil, core.ErrInvalid(name+".NetworkInterfaceTrafficMode", "must be Standard or HighPerformance")
		}
		nv := c.network().VSwitches[n.VSwitchID]
		if nv == nil || nv.Region != c.Region {
			return nil, core.ErrNotFound("InvalidVSwitchId.NotFound", n.VSwitchID)
		}
		if nv.Zone != vsw.Zone || nv.VpcID != vsw.VpcID {
			return nil, core.Errf(400, "InvalidParameter.Mismatch", "%s.VSwitchId %s must be in the instance's VPC and zone.", name, n.VSwitchID)
		}
		if sg := m["SecurityGroupId"]; sg != "" {
			if g := d.SGs[sg]; g == nil || g.Region != c.Region {
				return nil, core.ErrNotFound("InvalidSecurityGroupId.NotFound", sg)
			}
			n.SGs = []string{sg}
		}
		nics = append(nics, n)
	}
	if hp > it.fam.Eri {
		return nil, core.Errf(400, "InvalidParameter.NetworkInterfaceTrafficMode", "%s supports %d eRDMA interface(s); %d requested.", it.Name, it.fam.Eri, hp)
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
		return nil, core.Errf(400, "InvalidSystemDiskSize.LessThanImageSize", "SystemDisk.Size %d GiB is smaller than the image (%d GiB).", sys.Size, img.Size)
	}
	if e := checkDisk("SystemDisk", &sys, it.fam, true); e != nil {
		return nil, e
	}
	var data []disk
	dataDisks := p.StructList("DataDisk")
	if len(dataDisks) > maxDataDisks {
		return nil, core.Errf(400, "InvalidDataDiskCount.Exceeded", "%d data disks requested; an instance takes at most %d (DataDisk.1 to DataDisk.%d).", len(dataDisks), maxDataDisks, maxDataDisks)
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
			return nil, core.Errf(400, "InvalidUserData.Base64FormatInvalid", "UserData must be Base64-encoded.")
		}
		// The vendor's limit applies to the data before Base64 encoding.
		if len(raw) > maxUserDataBytes {
			return nil, core.Errf(400, "InvalidUserData.SizeExceeded", "UserData is %d bytes before Base64 encoding; at most %d (32 KiB).", len(raw), maxUserDataBytes)
		}
	}
	if dry, _ := p.Bool("DryRun", false); dry {
		return nil, core.Errf(400, "DryRunOperation", "Request validation has been passed with DryRun flag set.")
	}

	// A zone that does not sell the type answers so before stock and quota are looked at.
	if code := d.unavailable(vsw.Zone, it.Name); code != "" {
		return nil, errStockOut(code, vsw.Zone, it.Name)
	}
	if isSpot(spot) && d.spotless(it.Name) {
		return nil, errStockOut(NoSpotCode, vsw.Zone, it.Name)
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
		if z := core.SpotStock(c.Stores)[vsw.Zone]; z != nil {
			if avail, ok := z[it.Name]; ok && avail < n {
				n = max(avail, 0)
				stockLimited = true
			}
		}
	}
	quotaLeft := d.gpuQuota() - d.gpusInUse()
	if it.GPUs > 0 && n*it.GPUs > quotaLeft {
		fit := max(quotaLeft/it.GPUs, 0)
		if fit < minAmount {
			if stockLimited && n < minAmount {
				return nil, errNoStock(vsw.Zone, it.Name)
			}
			return nil, errQuota(
				"The GPU quota is exceeded: %d instance(s) of %s need %d GPUs, %d of the quota of %d are in use, %d remain.",
				minAmount, it.Name, minAmount*it.GPUs, d.gpusInUse(), d.gpuQuota(), max(quotaLeft, 0))
		}
		n = fit
	}
	if n < minAmount {
		return nil, errNoStock(vsw.Zone, it.Name)
	}
	// The region's vCPU quota (pay-as-you-go or spot) is the vendor's other instance quota.
	if n, e = c.vcpuFit(n, minAmount, it, spot, charge); e != nil {
		return nil, e
	}
	if z := d.Capacity[vsw.Zone]; z != nil {
		if _, ok := z[it.Name]; ok {
			z[it.Name] -= n
		}
	}
	if z := core.SpotStock(c.Stores)[vsw.Zone]; z != nil && isSpot(spot) {
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
	nowNano := c.Now.UnixNano()
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		in := &instance{
			Region: c.Region, Zone: vsw.Zone, Type: it.Name, Image: img.ID,
			Name: p["InstanceName"], HostName: p["HostName"], Desc: p["Description"],
			Phase: phaseBoot, PhaseAt: nowNano, Created: nowNano,
			VSwitchID: vsw.ID, VpcID: vsw.VpcID, SGs: sgIDs, Tags: tags, Spot: spot,
			AutoRelease: autoRelease, Hpc: hpcID, SysDisk: sys, DataDisks: data,
			UserData: userData, ChargeType: charge, KeyPair: p["KeyPairName"], RamRole: ramRole,
		}
		if ds != nil {
			in.DeploySet = ds.ID
		}
		in.ID = c.Env.NewID("i")
		in.Seq = c.Env.Seq()
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
				nc.ID = c.Env.NewID("eni")
				if j == 0 && nc.VSwitchID == vsw.ID {
					nc.IP = in.IP
				} else {
					nc.IP = allocIP(c.network().VSwitches[nc.VSwitchID])
				}
				in.NICs[j] = nc
			}
		}
		d.addInstance(in)
		if it.GPUs > 0 {
			d.takePendingGPUFaults(in, it.GPUs)
		}
		ids = append(ids, in.ID)
	}
	return &ecssdk.RunInstancesResponse{
		RequestId:      c.ReqID,
		TradePrice:     roundCents(hourPrice(it) * float64(n)),
		InstanceIdSets: ecssdk.InstanceIdSets{InstanceIdSet: ids},
	}, nil
}

// isSpot says whether a SpotStrategy asks for a spot instance.
func isSpot(strategy string) bool { return strategy != "" && strategy != "NoSpot" }

// errNoStock: the facts do not state the status; the vendor's
// OperationDenied family answers 403.
func errNoStock(zone, typ string) *core.Error {
	return errStockOut("OperationDenied.NoStock", zone, typ)
}

// errStockOut answers one of StockOutCodes, each with HTTP 403 like the vendor's.
func errStockOut(code, zone, typ string) *core.Error {
	switch code {
	case "Zone.NotOnSale":
		return core.Errf(403, code, "The specified zone %s is not available for purchase of %s.", zone, typ)
	case "InvalidResourceType.NotSupported":
		return core.Errf(403, code, "The resource type %s is not supported in zone %s. Please try other instance types, or choose other regions and zones.", typ, zone)
	}
	return core.Errf(403, code, "The resource (%s) is out of stock in zone %s. Please try other instance types, or choose other regions and zones.", typ, zone)
}

func (d *Store) gpusInUse() int {
	n := 0
	for _, in := range d.order {
		if it := instanceTypes[in.Type]; it != nil {
			n += it.GPUs
		}
	}
	return n
}
