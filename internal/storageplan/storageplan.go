// Package storageplan sizes the storage tiers of a GPU cluster (hot, warm, cold) from the vendor's
// published figures (internal/catalog/SOURCES.md section 3, with the vendor pages), checks OSS lifecycle
// rules, and renders the client-side configuration a tier needs: NFS mount options and an
// alluxio-site.properties for the cache in front of a cold bucket. Pure Go: no I/O, no Terraform.
//
// Where the vendor publishes no formula, a figure is unknown: the plan says so in its notes and
// never guesses. A target is refused only when every candidate backend is known to fall short.
package storageplan

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Tiers.
const (
	TierHot  = "hot"
	TierWarm = "warm"
	TierCold = "cold"
)

// Tiers lists the tiers in the order the docs present them.
func Tiers() []string { return []string{TierHot, TierWarm, TierCold} }

// GiBPerTiB converts capacity units; the NAS API takes GiB.
const GiBPerTiB = 1024

// MBpsPerGBps converts the throughput units: targets are GB/s, vendor figures MB/s.
const MBpsPerGBps = 1000

// Backend is one kind of storage the resource can create.
type Backend struct {
	// Name is what users write in `backend`.
	Name string
	// Title is the vendor's name for it, for messages.
	Title string
	// FileSystemType, StorageType and ProtocolType are the NAS CreateFileSystem parameters;
	// empty for the object store.
	FileSystemType, StorageType, ProtocolType string
	// Object is true for OSS.
	Object bool
	// MaxGiB is the largest size the vendor allows; 0 when not stated.
	MaxGiB int64
	// SendsCapacity is true when CreateFileSystem takes a Capacity and UpgradeFileSystem grows
	// it (Extreme and CPFS). General-purpose NAS is elastic: its capacity_tib only feeds sizing.
	SendsCapacity bool
	// MBpsPerTiB is the published baseline throughput per TiB; 0 when not published.
	MBpsPerTiB float64
	// CeilingMBps is a published upper bound on throughput whatever the size; 0 when none.
	CeilingMBps float64
	// CeilingNote says where the ceiling comes from.
	CeilingNote string
}

// Backend names.
const (
	BackendCPFSAdvance100 = "cpfs_advance_100"
	BackendCPFSAdvance200 = "cpfs_advance_200"
	BackendExtremeStd     = "nas_extreme_standard"
	BackendExtremeAdvance = "nas_extreme_advance"
	BackendNASPerformance = "nas_performance"
	BackendNASCapacity    = "nas_capacity"
	BackendNASPremium     = "nas_premium"
	BackendOSS            = "oss"
)

const (
	tib = GiBPerTiB
	pib = 1024 * tib
)

// backends is internal/catalog/SOURCES.md section 3 (NAS CreateFileSystem types and classes, CPFS
// baselines). Throughput per TiB is published for CPFS advance_100 and
// advance_200 only; the NAS Capacity class publishes a ceiling (10 GB/s read in the best zones).
var backends = []Backend{
	{Name: BackendCPFSAdvance100, Title: "CPFS advance_100", FileSystemType: "cpfs", StorageType: "advance_100", ProtocolType: "cpfs",
		SendsCapacity: true, MBpsPerTiB: 100},
	{Name: BackendCPFSAdvance200, Title: "CPFS advance_200", FileSystemType: "cpfs", StorageType: "advance_200", ProtocolType: "cpfs",
		SendsCapacity: true, MBpsPerTiB: 200},
	{Name: BackendExtremeStd, Title: "NAS Extreme standard", FileSystemType: "extreme", StorageType: "standard", ProtocolType: "NFS",
		SendsCapacity: true, MaxGiB: 256 * tib},
	{Name: BackendExtremeAdvance, Title: "NAS Extreme advance", FileSystemType: "extreme", StorageType: "advance", ProtocolType: "NFS",
		SendsCapacity: true, MaxGiB: 256 * tib},
	{Name: BackendNASCapacity, Title: "NAS Capacity", FileSystemType: "standard", StorageType: "Capacity", ProtocolType: "NFS",
		MaxGiB: 10 * pib, CeilingMBps: 10 * MBpsPerGBps, CeilingNote: "the vendor states up to 10 GB/s read in the best zones, far less in others"},
	{Name: BackendNASPerformance, Title: "NAS Performance", FileSystemType: "standard", StorageType: "Performance", ProtocolType: "NFS",
		MaxGiB: 1 * pib},
	{Name: BackendNASPremium, Title: "NAS Premium", FileSystemType: "standard", StorageType: "Premium", ProtocolType: "NFS",
		MaxGiB: 1 * pib},
	{Name: BackendOSS, Title: "OSS", Object: true},
}

// candidates is the automatic choice per tier, in order of preference: the lower performance
// class first, so a target that a smaller class meets does not buy a bigger one.
var candidates = map[string][]string{
	TierHot:  {BackendCPFSAdvance100, BackendCPFSAdvance200, BackendExtremeAdvance, BackendExtremeStd},
	TierWarm: {BackendNASCapacity, BackendNASPerformance},
	TierCold: {BackendOSS},
}

// BackendNames lists every backend name, for the schema's validator and docs.
func BackendNames() []string {
	out := make([]string, len(backends))
	for i, b := range backends {
		out[i] = b.Name
	}
	return out
}

// Candidates returns the backends chosen automatically for a tier, in order of preference.
func Candidates(tier string) []string { return append([]string(nil), candidates[tier]...) }

// LookupBackend finds a backend by name.
func LookupBackend(name string) (Backend, bool) {
	for _, b := range backends {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// BackendFor maps what the NAS API reports back to a backend name ("" when none matches).
func BackendFor(fileSystemType, storageType string) string {
	for _, b := range backends {
		if !b.Object && strings.EqualFold(b.FileSystemType, fileSystemType) && strings.EqualFold(b.StorageType, storageType) {
			return b.Name
		}
	}
	return ""
}

// TierOf returns the tier a backend serves by default ("" for none).
func TierOf(backend string) string {
	for _, t := range Tiers() {
		for _, c := range candidates[t] {
			if c == backend {
				return t
			}
		}
	}
	if b, ok := LookupBackend(backend); ok && !b.Object {
		return TierWarm
	}
	return ""
}

// ThroughputMBps returns the published throughput of the backend at capacityGiB and whether it is
// known. A stated ceiling alone is not a figure for a given size.
func (b Backend) ThroughputMBps(capacityGiB int64) (float64, bool) {
	if b.MBpsPerTiB == 0 {
		return 0, false
	}
	v := b.MBpsPerTiB * float64(capacityGiB) / tib
	if b.CeilingMBps > 0 {
		v = math.Min(v, b.CeilingMBps)
	}
	return v, true
}

// Request is what the user asked for.
type Request struct {
	Tier string
	// Backend forces a backend; "" chooses one from Candidates(Tier).
	Backend     string
	CapacityTiB int64
	// MinThroughputGBps and MinIOPS are targets; 0 means none.
	MinThroughputGBps float64
	MinIOPS           int64
}

// Plan is the sizing result.
type Plan struct {
	Backend Backend
	// CapacityTiB is what will be provisioned: the request's, or more to meet a target.
	CapacityTiB int64
	// ThroughputGBps and IOPS are the expected figures; nil when the vendor publishes none.
	ThroughputGBps *float64
	IOPS           *int64
	// Notes explain the choice and every unknown figure; Warnings are the notes the user should
	// see at plan time (targets that cannot be verified).
	Notes    []string
	Warnings []string
	// DiskHint is, for hot tiers, the node-local ESSD that reaches the IOPS target.
	DiskHint *DiskHint
}

// ErrUnreachable wraps every "no backend can meet this target" error.
var ErrUnreachable = errors.New("target unreachable")

// ErrInvalid wraps every request that cannot be sized as written.
var ErrInvalid = errors.New("invalid storage request")

// Size chooses the backend and capacity for a request and computes the expected figures.
func Size(req Request) (Plan, error) {
	if !contains(Tiers(), req.Tier) {
		return Plan{}, planerr.New("tier", req.Tier, "is not a tier", "set tier to one of "+strings.Join(Tiers(), ", "),
			fmt.Errorf("%w: tier %q is not one of %s", ErrInvalid, req.Tier, strings.Join(Tiers(), ", ")))
	}
	if req.CapacityTiB < 1 {
		return Plan{}, planerr.New("capacity_tib", strconv.FormatInt(req.CapacityTiB, 10), "must be at least 1", "set capacity_tib to 1 or more",
			fmt.Errorf("%w: capacity_tib must be at least 1, got %d", ErrInvalid, req.CapacityTiB))
	}
	if req.MinThroughputGBps < 0 || req.MinIOPS < 0 {
		attr, value := "min_iops", strconv.FormatInt(req.MinIOPS, 10)
		if req.MinThroughputGBps < 0 {
			attr, value = "min_throughput_gbps", strconv.FormatFloat(req.MinThroughputGBps, 'g', -1, 64)
		}
		return Plan{}, planerr.New(attr, value, "targets cannot be negative", "set "+attr+" to 0 or more, or leave it out",
			fmt.Errorf("%w: targets cannot be negative", ErrInvalid))
	}
	names := candidates[req.Tier]
	if req.Backend != "" {
		b, ok := LookupBackend(req.Backend)
		if !ok {
			return Plan{}, planerr.New("backend", req.Backend, "is not a backend", "set backend to one of "+strings.Join(BackendNames(), ", ")+", or leave it out",
				fmt.Errorf("%w: backend %q is not one of %s", ErrInvalid, req.Backend, strings.Join(BackendNames(), ", ")))
		}
		if b.Object != (req.Tier == TierCold) {
			return Plan{}, planerr.New("backend", req.Backend, "does not serve the "+req.Tier+" tier",
				"the cold tier is OSS only, hot and warm tiers are file systems ("+strings.Join(fileBackendNames(), ", ")+"); choose one of those or leave backend out",
				fmt.Errorf("%w: backend %q does not serve the %s tier: the cold tier is OSS only, hot and warm tiers are file systems (%s)",
					ErrInvalid, req.Backend, req.Tier, strings.Join(fileBackendNames(), ", ")))
		}
		names = []string{b.Name}
	}

	var hint *DiskHint
	if req.Tier == TierHot {
		h, err := PL3Hint(req.MinIOPS)
		if err != nil {
			return Plan{}, err
		}
		hint = &h
	}

	opts := make([]option, 0, len(names))
	for _, n := range names {
		b, _ := LookupBackend(n)
		opts = append(opts, evaluate(b, req))
	}
	best, err := choose(opts, req)
	if err != nil {
		return Plan{}, err
	}
	p := best.plan
	p.DiskHint = hint
	if hint != nil {
		p.Notes = append(p.Notes, hint.Note)
	}
	if req.Backend == "" && len(names) > 1 {
		p.Notes = append([]string{fmt.Sprintf("backend %s chosen for the %s tier from %s", p.Backend.Name, req.Tier, strings.Join(names, ", "))}, p.Notes...)
	}
	return p, nil
}

// option is one backend evaluated against the request.
type option struct {
	plan Plan
	// verdict: meets (known to meet at the requested capacity), raised (known to meet after
	// raising the capacity), unknown (no published figure), short (known to fall short).
	verdict verdict
	// best is the best throughput reachable, MB/s, when short.
	bestMBps float64
	bestWhy  string
}

type verdict int

const (
	meets verdict = iota
	raised
	unknown
	short
)

func evaluate(b Backend, req Request) option {
	capGiB := req.CapacityTiB * tib
	o := option{plan: Plan{Backend: b, CapacityTiB: req.CapacityTiB}}
	p := &o.plan
	if b.MaxGiB > 0 && capGiB > b.MaxGiB {
		o.verdict = short
		o.bestWhy = fmt.Sprintf("%s allows at most %d TiB, %d TiB asked", b.Title, b.MaxGiB/tib, req.CapacityTiB)
		if v, ok := b.ThroughputMBps(b.MaxGiB); ok {
			o.bestMBps = v
		}
		return o
	}
	if b.MaxGiB == 0 && !b.Object {
		p.Notes = append(p.Notes, fmt.Sprintf("%s: maximum capacity is not stated in the vendor's published figures", b.Title))
	}

	target := req.MinThroughputGBps * MBpsPerGBps
	mbps, known := b.ThroughputMBps(capGiB)
	switch {
	case known:
		if target > 0 && mbps < target {
			need := int64(math.Ceil(target / b.MBpsPerTiB))
			if b.CeilingMBps > 0 && target > b.CeilingMBps || b.MaxGiB > 0 && need*tib > b.MaxGiB {
				o.verdict = short
				if b.MaxGiB > 0 {
					o.bestMBps, _ = b.ThroughputMBps(b.MaxGiB)
				} else {
					o.bestMBps = b.CeilingMBps
				}
				o.bestWhy = fmt.Sprintf("%s reaches at most %s", b.Title, gbps(o.bestMBps))
				return o
			}
			p.Notes = append(p.Notes, fmt.Sprintf("capacity raised from %d TiB to %d TiB: %s gives %g MB/s per TiB, and %s needs %d TiB",
				req.CapacityTiB, need, b.Title, b.MBpsPerTiB, gbps(target), need))
			p.CapacityTiB = need
			mbps, _ = b.ThroughputMBps(need * tib)
			o.verdict = raised
		}
		v := round3(mbps / MBpsPerGBps)
		p.ThroughputGBps = &v
		p.Notes = append(p.Notes, fmt.Sprintf("throughput: %s x %d TiB = %s (published baseline)", perTiB(b), p.CapacityTiB, gbps(mbps)))
	case b.CeilingMBps > 0 && target > b.CeilingMBps:
		o.verdict = short
		o.bestMBps = b.CeilingMBps
		o.bestWhy = fmt.Sprintf("%s: %s", b.Title, b.CeilingNote)
		return o
	default:
		o.verdict = unknown
		msg := fmt.Sprintf("throughput of %s: the vendor publishes no per-capacity formula, so the expected figure is unknown", b.Title)
		if b.CeilingNote != "" {
			msg += " (" + b.CeilingNote + ")"
		}
		p.Notes = append(p.Notes, msg)
		if target > 0 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("min_throughput_gbps = %g cannot be verified on %s: %s", req.MinThroughputGBps, b.Title, msg))
		}
	}

	// No file system or bucket the NAS and OSS APIs create has a published IOPS formula (CPFS for Lingjun does,
	// but it is not a FileSystemType the NAS API accepts); the hot tier's IOPS come from the
	// node-local disk hint.
	iopsMsg := fmt.Sprintf("IOPS of %s: not published by the vendor, so the expected figure is unknown", b.Title)
	p.Notes = append(p.Notes, iopsMsg)
	if req.MinIOPS > 0 && req.Tier != TierHot {
		p.Warnings = append(p.Warnings, fmt.Sprintf("min_iops = %d cannot be verified: %s", req.MinIOPS, iopsMsg))
		if o.verdict == meets || o.verdict == raised {
			o.verdict = unknown
		}
	}
	return o
}

// choose takes the first option that meets the targets as asked; else the one that meets them
// with the least extra capacity; else the first whose figures are unknown; else an error naming
// the best figure reachable.
func choose(opts []option, req Request) (option, error) {
	for _, o := range opts {
		if o.verdict == meets {
			return o, nil
		}
	}
	var best *option
	for i, o := range opts {
		if o.verdict == raised && (best == nil || o.plan.CapacityTiB < best.plan.CapacityTiB) {
			best = &opts[i]
		}
	}
	if best != nil {
		return *best, nil
	}
	for _, o := range opts {
		if o.verdict == unknown {
			return o, nil
		}
	}
	var (
		top float64
		why []string
	)
	for _, o := range opts {
		top = math.Max(top, o.bestMBps)
		why = append(why, o.bestWhy)
	}
	if req.MinThroughputGBps > 0 && top > 0 {
		return option{}, planerr.New("min_throughput_gbps", strconv.FormatFloat(req.MinThroughputGBps, 'g', -1, 64),
			fmt.Sprintf("the best reachable for the %s tier is %s (%s)", req.Tier, gbps(top), strings.Join(why, "; ")),
			fmt.Sprintf("lower min_throughput_gbps to %g or less", round3(top/MBpsPerGBps)),
			fmt.Errorf("%w: min_throughput_gbps = %g cannot be met for the %s tier; the best reachable is %s (%s)",
				ErrUnreachable, req.MinThroughputGBps, req.Tier, gbps(top), strings.Join(why, "; ")))
	}
	// What no backend fits is the size (every backend's capacity limit) or, with backend set,
	// that backend's ceiling: the capacity is the attribute to change.
	return option{}, planerr.New("capacity_tib", strconv.FormatInt(req.CapacityTiB, 10), strings.Join(why, "; "),
		"lower capacity_tib, or split the data over more tiers",
		fmt.Errorf("%w: no backend for the %s tier fits: %s", ErrUnreachable, req.Tier, strings.Join(why, "; ")))
}

func fileBackendNames() []string {
	var out []string
	for _, b := range backends {
		if !b.Object {
			out = append(out, b.Name)
		}
	}
	return out
}

func perTiB(b Backend) string { return fmt.Sprintf("%g MB/s per TiB", b.MBpsPerTiB) }

func gbps(mbps float64) string {
	return fmt.Sprintf("%s GB/s", trimFloat(round3(mbps/MBpsPerGBps)))
}

func trimFloat(f float64) string { return fmt.Sprintf("%g", f) }

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
