package ecs

import (
	"fmt"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
)

// Quotas are the account's ECS quotas in a region, by the attribute names DescribeAccountAttributes
// answers them under
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeaccountattributes),
// plus the GPU quota RunInstances already enforced (--gpu-quota). A zero field keeps its default
// (DefaultQuotas; the GPU quota's is the Server's --gpu-quota). PUT /_emulator/quotas sets them;
// they are saved with the state and a reset forgets them, like the stock tables.
type Quotas struct {
	PostpaidVCPUs      int `json:"max-postpaid-instance-vcpu-count,omitempty"`
	SpotVCPUs          int `json:"max-spot-instance-vcpu-count,omitempty"`
	GPUs               int `json:"gpu,omitempty"`
	PostpaidDiskGiB    int `json:"max-postpaid-yundisk-capacity,omitempty"`
	SecurityGroups     int `json:"max-security-groups,omitempty"`
	ENIs               int `json:"max-elastic-network-interfaces,omitempty"`
	DedicatedHosts     int `json:"max-dedicated-hosts,omitempty"`
	AxtCommands        int `json:"max-axt-command-count,omitempty"`
	AxtInvocationDaily int `json:"max-axt-invocation-daily,omitempty"`
}

// DefaultQuotas are the emulator's own choices, not vendor figures: the vendor sizes an account's
// quotas from its usage (https://www.alibabacloud.com/help/doc-detail/163120.htm, "adjusts your
// instance quotas based on your instance usage"), so no default is published. The vCPU quotas are
// generous, like DefaultGPUQuota, so only tests that lower them ever hit them: 10,000 nodes of a
// 192-vCPU GPU type fit.
var DefaultQuotas = Quotas{
	PostpaidVCPUs: 2_000_000, SpotVCPUs: 2_000_000, PostpaidDiskGiB: 2_000_000,
	SecurityGroups: 800, ENIs: 50_000, DedicatedHosts: 100, AxtCommands: 500, AxtInvocationDaily: 100_000,
}

// Validate refuses negative quotas (0 means the default).
func (q Quotas) Validate() error {
	for name, v := range map[string]int{"max-postpaid-instance-vcpu-count": q.PostpaidVCPUs, "max-spot-instance-vcpu-count": q.SpotVCPUs,
		"gpu": q.GPUs, "max-postpaid-yundisk-capacity": q.PostpaidDiskGiB, "max-security-groups": q.SecurityGroups,
		"max-elastic-network-interfaces": q.ENIs, "max-dedicated-hosts": q.DedicatedHosts,
		"max-axt-command-count": q.AxtCommands, "max-axt-invocation-daily": q.AxtInvocationDaily} {
		if v < 0 {
			return fmt.Errorf("quota %s is %d; quotas are 0 (the default) or more", name, v)
		}
	}
	return nil
}

// SetQuotas replaces the quotas set by the admin endpoint; the zero Quotas restores the defaults.
func (d *Store) SetQuotas(q Quotas) {
	if q == (Quotas{}) {
		d.Quotas = nil
		return
	}
	d.Quotas = &q
}

// EffectiveQuotas are the quotas the emulator enforces and answers: the ones set, else the defaults.
func (d *Store) EffectiveQuotas() Quotas {
	q := DefaultQuotas
	q.GPUs = d.settings.GPUQuota
	if q.GPUs <= 0 {
		q.GPUs = DefaultGPUQuota
	}
	if d.Quotas == nil {
		return q
	}
	set := *d.Quotas
	pick := func(v, def int) int {
		if v > 0 {
			return v
		}
		return def
	}
	return Quotas{
		PostpaidVCPUs: pick(set.PostpaidVCPUs, q.PostpaidVCPUs), SpotVCPUs: pick(set.SpotVCPUs, q.SpotVCPUs),
		GPUs: pick(set.GPUs, q.GPUs), PostpaidDiskGiB: pick(set.PostpaidDiskGiB, q.PostpaidDiskGiB),
		SecurityGroups: pick(set.SecurityGroups, q.SecurityGroups), ENIs: pick(set.ENIs, q.ENIs),
		DedicatedHosts: pick(set.DedicatedHosts, q.DedicatedHosts), AxtCommands: pick(set.AxtCommands, q.AxtCommands),
		AxtInvocationDaily: pick(set.AxtInvocationDaily, q.AxtInvocationDaily),
	}
}

// vcpusInUse sums the vCPUs of the region's live instances billed pay-as-you-go (spot false) or
// as spot (spot true): the vendor's used-postpaid- and used-spot-instance-vcpu-count. Subscription
// (PrePaid) instances count toward neither, as both quotas are the pay-as-you-go ones.
func (d *Store) vcpusInUse(region string, spot bool) int {
	n := 0
	for _, in := range d.order {
		if in.Region != region || in.ChargeType == "PrePaid" || isSpot(in.Spot) != spot {
			continue
		}
		if it := instanceTypes[in.Type]; it != nil {
			n += it.VCPU
		}
	}
	return n
}

// errQuota is RunInstances' answer beyond a quota: HTTP 403 QuotaExceed.ElasticQuota, the
// code the emulator already answered the GPU quota with and internal/nodepool tells apart from a
// stock-out. The vendor lists its error codes with RunInstances
// (https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-runinstances,
// "Error codes"); that this code, and no vCPU-specific one, is the vCPU quota's answer was not
// re-read there when the vCPU quota was added (the copy at hand lacked the table): check it
// before relying on the exact code.
func errQuota(format string, args ...any) *core.Error {
	return core.Errf(403, "QuotaExceed.ElasticQuota", format, args...)
}

// vcpuFit is how many of n instances of it the region's vCPU quota lets start (pay-as-you-go or
// spot by the strategy), or the error when fewer than minAmount fit. Subscription launches are
// under neither quota.
func (c *call) vcpuFit(n, minAmount int, it *instanceTypeInfo, spot, charge string) (int, *core.Error) {
	if it.VCPU <= 0 || charge == "PrePaid" {
		return n, nil
	}
	q := c.st.EffectiveQuotas()
	limit, name := q.PostpaidVCPUs, "max-postpaid-instance-vcpu-count"
	if isSpot(spot) {
		limit, name = q.SpotVCPUs, "max-spot-instance-vcpu-count"
	}
	used := c.st.vcpusInUse(c.Region, isSpot(spot))
	left := max(limit-used, 0)
	fit := left / it.VCPU
	if fit >= n {
		return n, nil
	}
	if fit < minAmount {
		return 0, errQuota("The vCPU quota is exceeded: %d instance(s) of %s need %d vCPUs, %d of the quota %s of %d are in use in region %s, %d remain.",
			minAmount, it.Name, minAmount*it.VCPU, used, name, limit, c.Region, left)
	}
	return fit, nil
}

// PayAsYouGoGPUs counts the GPUs of the live pay-as-you-go (PostPaid, not spot) instances of typ
// in a zone: the usage of the Quota Center's ecs-spec quota of the type there (see
// internal/emulator/quotas). typ not a GPU type counts 0.
func (d *Store) PayAsYouGoGPUs(region, zone, typ string) int {
	it := instanceTypes[typ]
	if it == nil || it.GPUs == 0 {
		return 0
	}
	n := 0
	for _, in := range d.order {
		if in.Region == region && in.Zone == zone && in.Type == typ && in.ChargeType != "PrePaid" && !isSpot(in.Spot) {
			n += it.GPUs
		}
	}
	return n
}

// IsGPUType is whether the emulator's catalog sells typ with GPUs.
func IsGPUType(typ string) bool {
	it := instanceTypes[typ]
	return it != nil && it.GPUs > 0
}
