package storageplan

import (
	"errors"
	"strings"
	"testing"
)

func fptr(f float64) *float64 { return &f }

func TestSize(t *testing.T) {
	tests := []struct {
		name       string
		req        Request
		backend    string
		capTiB     int64
		throughput *float64 // nil: unknown
		warn       string   // substring of a warning, "" for none
		note       string   // substring of a note
		err        error
		errText    string
	}{
		{name: "hot default is the lower CPFS class", req: Request{Tier: TierHot, CapacityTiB: 10},
			backend: BackendCPFSAdvance100, capTiB: 10, throughput: fptr(1), note: "100 MB/s per TiB x 10 TiB = 1 GB/s"},
		{name: "hot target met by the lower class as asked", req: Request{Tier: TierHot, CapacityTiB: 10, MinThroughputGBps: 0.5},
			backend: BackendCPFSAdvance100, capTiB: 10, throughput: fptr(1)},
		{name: "hot target needs the next backend, not more capacity", req: Request{Tier: TierHot, CapacityTiB: 10, MinThroughputGBps: 1.5},
			backend: BackendCPFSAdvance200, capTiB: 10, throughput: fptr(2)},
		{name: "hot target needs more capacity: least extra capacity wins", req: Request{Tier: TierHot, CapacityTiB: 10, MinThroughputGBps: 5},
			backend: BackendCPFSAdvance200, capTiB: 25, throughput: fptr(5), note: "capacity raised from 10 TiB to 25 TiB"},
		{name: "hot target rounds capacity up to whole TiB", req: Request{Tier: TierHot, CapacityTiB: 1, MinThroughputGBps: 4.1},
			backend: BackendCPFSAdvance200, capTiB: 21, throughput: fptr(4.2)},
		{name: "forced cpfs advance_100 raises capacity", req: Request{Tier: TierHot, Backend: BackendCPFSAdvance100, CapacityTiB: 10, MinThroughputGBps: 3},
			backend: BackendCPFSAdvance100, capTiB: 30, throughput: fptr(3)},
		{name: "extreme at its maximum", req: Request{Tier: TierHot, Backend: BackendExtremeAdvance, CapacityTiB: 256},
			backend: BackendExtremeAdvance, capTiB: 256, note: "no per-capacity formula"},
		{name: "extreme above its maximum", req: Request{Tier: TierHot, Backend: BackendExtremeAdvance, CapacityTiB: 257},
			err: ErrUnreachable, errText: "at most 256 TiB, 257 TiB asked"},
		{name: "extreme throughput target cannot be verified", req: Request{Tier: TierHot, Backend: BackendExtremeStd, CapacityTiB: 50, MinThroughputGBps: 2},
			backend: BackendExtremeStd, capTiB: 50, warn: "cannot be verified"},
		{name: "warm default is NAS Capacity, throughput unknown", req: Request{Tier: TierWarm, CapacityTiB: 100},
			backend: BackendNASCapacity, capTiB: 100, note: "up to 10 GB/s read in the best zones"},
		{name: "warm 10 GB/s on Capacity cannot be verified", req: Request{Tier: TierWarm, CapacityTiB: 100, MinThroughputGBps: 10},
			backend: BackendNASCapacity, capTiB: 100, warn: "cannot be verified on NAS Capacity"},
		{name: "warm above the Capacity ceiling picks Performance", req: Request{Tier: TierWarm, CapacityTiB: 100, MinThroughputGBps: 12},
			backend: BackendNASPerformance, capTiB: 100, warn: "cannot be verified on NAS Performance"},
		{name: "warm forced Capacity above its ceiling", req: Request{Tier: TierWarm, Backend: BackendNASCapacity, CapacityTiB: 100, MinThroughputGBps: 12},
			err: ErrUnreachable, errText: "best reachable is 10 GB/s"},
		{name: "warm Capacity at 10 PiB", req: Request{Tier: TierWarm, Backend: BackendNASCapacity, CapacityTiB: 10240},
			backend: BackendNASCapacity, capTiB: 10240},
		{name: "warm above every maximum", req: Request{Tier: TierWarm, CapacityTiB: 10241},
			err: ErrUnreachable, errText: "NAS Capacity allows at most 10240 TiB"},
		{name: "warm Performance above 1 PiB", req: Request{Tier: TierWarm, Backend: BackendNASPerformance, CapacityTiB: 1025},
			err: ErrUnreachable, errText: "at most 1024 TiB"},
		{name: "warm min_iops cannot be verified", req: Request{Tier: TierWarm, CapacityTiB: 10, MinIOPS: 50000},
			backend: BackendNASCapacity, capTiB: 10, warn: "min_iops = 50000 cannot be verified"},
		{name: "cold is OSS", req: Request{Tier: TierCold, CapacityTiB: 1024},
			backend: BackendOSS, capTiB: 1024, note: "OSS"},
		{name: "cold on a file system", req: Request{Tier: TierCold, Backend: BackendCPFSAdvance200, CapacityTiB: 10},
			err: ErrInvalid, errText: "cold tier is OSS only"},
		{name: "hot on OSS", req: Request{Tier: TierHot, Backend: BackendOSS, CapacityTiB: 10},
			err: ErrInvalid},
		{name: "unknown backend", req: Request{Tier: TierHot, Backend: "gpfs", CapacityTiB: 10}, err: ErrInvalid},
		{name: "unknown tier", req: Request{Tier: "lukewarm", CapacityTiB: 10}, err: ErrInvalid},
		{name: "zero capacity", req: Request{Tier: TierHot}, err: ErrInvalid},
		{name: "hot IOPS above one PL3 disk", req: Request{Tier: TierHot, CapacityTiB: 10, MinIOPS: 1_000_001},
			err: ErrUnreachable, errText: "best reachable on one node-local disk is 1000000 IOPS (ESSD PL3 from 19964 GiB)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Size(tt.req)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("error = %v, want %v", err, tt.err)
				}
				if !strings.Contains(err.Error(), tt.errText) {
					t.Fatalf("error %q does not say %q", err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Backend.Name != tt.backend || p.CapacityTiB != tt.capTiB {
				t.Fatalf("got %s at %d TiB, want %s at %d TiB (notes %q)", p.Backend.Name, p.CapacityTiB, tt.backend, tt.capTiB, p.Notes)
			}
			switch {
			case tt.throughput == nil && p.ThroughputGBps != nil:
				t.Fatalf("throughput = %g, want unknown", *p.ThroughputGBps)
			case tt.throughput != nil && (p.ThroughputGBps == nil || *p.ThroughputGBps != *tt.throughput):
				t.Fatalf("throughput = %v, want %g", p.ThroughputGBps, *tt.throughput)
			}
			if p.IOPS != nil {
				t.Fatalf("IOPS = %d: no backend has a published IOPS formula", *p.IOPS)
			}
			if tt.warn == "" && len(p.Warnings) > 0 {
				t.Fatalf("unexpected warnings %q", p.Warnings)
			}
			if tt.warn != "" && !strings.Contains(strings.Join(p.Warnings, "\n"), tt.warn) {
				t.Fatalf("warnings %q lack %q", p.Warnings, tt.warn)
			}
			if tt.note != "" && !strings.Contains(strings.Join(p.Notes, "\n"), tt.note) {
				t.Fatalf("notes %q lack %q", p.Notes, tt.note)
			}
			if (tt.req.Tier == TierHot) != (p.DiskHint != nil) {
				t.Fatalf("disk hint %+v for tier %s", p.DiskHint, tt.req.Tier)
			}
		})
	}
}

func TestPL3Hint(t *testing.T) {
	tests := []struct {
		name             string
		minIOPS          int64
		size, iops, mbps int
		noteHas, errHas  string
	}{
		// Below 1,261 GiB PL3 does not exist: a small target still gets the smallest PL3.
		{name: "no target", minIOPS: 0, size: 1261, iops: 1800 + 50*1261, mbps: 750, noteHas: "smallest PL3"},
		{name: "target a 164 GiB disk would meet", minIOPS: 10000, size: 1261, iops: 64850, mbps: 750, noteHas: "PL3 starts at 1261 GiB"},
		{name: "target exactly at the PL3 minimum", minIOPS: 64850, size: 1261, iops: 64850, mbps: 750},
		{name: "one IOPS above the minimum's figure", minIOPS: 64851, size: 1262, iops: 64900, mbps: 751},
		{name: "throughput reaches its cap", minIOPS: 200000, size: 3964, iops: 200000, mbps: 2102},
		{name: "the hot tier target, 1M IOPS", minIOPS: 1000000, size: 19964, iops: 1000000, mbps: 4000},
		{name: "above PL3's maximum", minIOPS: 1000001, errHas: "best reachable on one node-local disk is 1000000 IOPS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := PL3Hint(tt.minIOPS)
			if tt.errHas != "" {
				if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("error = %v, want one saying %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Category != "cloud_essd" || h.Level != "PL3" || h.SizeGiB != tt.size || h.IOPS != tt.iops || h.MBps != tt.mbps {
				t.Fatalf("got %+v, want PL3 %d GiB %d IOPS %d MB/s", h, tt.size, tt.iops, tt.mbps)
			}
			if h.IOPS < int(tt.minIOPS) {
				t.Fatalf("hint gives %d IOPS, below the %d target", h.IOPS, tt.minIOPS)
			}
			if tt.noteHas != "" && !strings.Contains(h.Note, tt.noteHas) {
				t.Fatalf("note %q lacks %q", h.Note, tt.noteHas)
			}
		})
	}
}

func TestLifecycleValidate(t *testing.T) {
	tests := []struct {
		name   string
		l      Lifecycle
		errHas string // "" = valid
	}{
		{name: "full chain at the minimum durations", l: Lifecycle{30, 60, 240, 420}},
		{name: "IA, Archive, ColdArchive, expire chain", l: Lifecycle{30, 90, 365, 730}},
		{name: "expire only", l: Lifecycle{ExpireAfterDays: 1}},
		{name: "archive straight away, cold after 60 days", l: Lifecycle{ArchiveAfterDays: 1, ColdArchiveAfterDays: 60}},
		{name: "nothing set", l: Lifecycle{}, errHas: "sets no step"},
		{name: "negative", l: Lifecycle{IAAfterDays: -1}, errHas: "ia_after_days = -1"},
		{name: "archive before IA", l: Lifecycle{IAAfterDays: 60, ArchiveAfterDays: 30}, errHas: "out of order: archive_after_days = 30 is not after ia_after_days = 60"},
		{name: "same day", l: Lifecycle{ArchiveAfterDays: 90, ColdArchiveAfterDays: 90}, errHas: "out of order"},
		{name: "expire before cold archive", l: Lifecycle{ColdArchiveAfterDays: 200, ExpireAfterDays: 100}, errHas: "out of order"},
		{name: "IA left too soon", l: Lifecycle{IAAfterDays: 30, ArchiveAfterDays: 45}, errHas: "set archive_after_days to 60 or more"},
		{name: "IA expired too soon", l: Lifecycle{IAAfterDays: 10, ExpireAfterDays: 39}, errHas: "set expire_after_days to 40 or more"},
		{name: "archive left before 60 days", l: Lifecycle{ArchiveAfterDays: 30, ColdArchiveAfterDays: 59}, errHas: "set cold_archive_after_days to 60 or more"},
		{name: "cold archive expired too soon", l: Lifecycle{ColdArchiveAfterDays: 200, ExpireAfterDays: 379}, errHas: "set expire_after_days to 380 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			if tt.errHas == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error = %v, want one saying %q", err, tt.errHas)
			}
		})
	}
	got := Lifecycle{30, 90, 0, 400}.Transitions()
	want := []Transition{{30, ClassIA}, {90, ClassArchive}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("transitions = %v, want %v", got, want)
	}
}

func TestRender(t *testing.T) {
	nasCapacity, _ := LookupBackend(BackendNASCapacity)
	cpfs, _ := LookupBackend(BackendCPFSAdvance200)
	if got, want := MountCommand(nasCapacity, "1ab.cn-wulanchabu.nas.aliyuncs.com", "warm"),
		"sudo mkdir -p /mnt/warm && sudo mount -t nfs -o "+NFSOptions+" 1ab.cn-wulanchabu.nas.aliyuncs.com:/ /mnt/warm"; got != want {
		t.Fatalf("mount command\n got %s\nwant %s", got, want)
	}
	if got := FstabLine(cpfs, "cpfs-1.example", "hot"); got != "cpfs-1.example:/share /mnt/hot cpfs-nfs "+NFSOptions+",_netdev 0 0" {
		t.Fatalf("fstab line %s", got)
	}
	for _, opt := range []string{"rsize=1048576", "wsize=1048576", "hard", "vers=3"} {
		if !strings.Contains(NFSOptions, opt) {
			t.Fatalf("NFS options lack %s", opt)
		}
	}
	props := AlluxioProperties("cold-data", "cn-wulanchabu", Cache{Engine: CacheEngineAlluxio, SizeGiB: 2048, TargetHitRate: 0.9})
	for _, line := range []string{"alluxio.master.mount.table.root.ufs=oss://cold-data/", "fs.oss.endpoint=oss-cn-wulanchabu-internal.aliyuncs.com",
		"alluxio.worker.tieredstore.level0.dirs.quota=2048GB", "alluxio.user.file.readtype.default=CACHE"} {
		if !strings.Contains(props, line+"\n") {
			t.Fatalf("properties lack %q:\n%s", line, props)
		}
	}
	if strings.Contains(props, "accessKeySecret=") {
		t.Fatal("properties must not carry a secret")
	}
}

func TestSizeCache(t *testing.T) {
	_, warns := SizeCache(Cache{SizeGiB: 900, TargetHitRate: 0.9, HotDatasetGiB: 1000})
	if len(warns) != 0 {
		t.Fatalf("900 GiB for 0.9 of 1000 GiB: warnings %q", warns)
	}
	_, warns = SizeCache(Cache{SizeGiB: 899, TargetHitRate: 0.9, HotDatasetGiB: 1000})
	if len(warns) != 1 || !strings.Contains(warns[0], "raise cache.size_gib to 900") {
		t.Fatalf("899 GiB: warnings %q", warns)
	}
	notes, warns := SizeCache(Cache{SizeGiB: 100, TargetHitRate: 0.9})
	if len(warns) != 0 || !strings.Contains(notes[0], "hot_dataset_gib") {
		t.Fatalf("no working set: notes %q warnings %q", notes, warns)
	}
}

func TestBackendTables(t *testing.T) {
	for _, tier := range Tiers() {
		for _, n := range Candidates(tier) {
			if _, ok := LookupBackend(n); !ok {
				t.Fatalf("candidate %s of %s is not a backend", n, tier)
			}
			if TierOf(n) != tier {
				t.Fatalf("TierOf(%s) = %s, want %s", n, TierOf(n), tier)
			}
		}
	}
	if got := BackendFor("cpfs", "advance_200"); got != BackendCPFSAdvance200 {
		t.Fatalf("BackendFor(cpfs, advance_200) = %q", got)
	}
	if got := BackendFor("standard", "Capacity"); got != BackendNASCapacity {
		t.Fatalf("BackendFor(standard, Capacity) = %q", got)
	}
}
