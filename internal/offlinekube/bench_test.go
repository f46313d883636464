package offlinekube

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkStart measures how long Start takes to a ready control plane (etcd through kwok, the
// default service account created) and how much memory the components hold once it is ready.
// It prints the numbers; nothing asserts a time.
//
//	go test -run '^$' -bench BenchmarkStart -benchtime 3x ./internal/offlinekube/
func BenchmarkStart(b *testing.B) {
	binDir, err := DefaultBinDir()
	if err != nil {
		b.Fatal(err)
	}
	if err := CheckBinaries(binDir); err != nil {
		b.Fatal(err)
	}
	var startTotal, stopTotal time.Duration
	rss := map[string]int64{}
	for b.Loop() {
		begin := time.Now()
		c, err := Start(b.Context(), Options{BinDir: binDir})
		if err != nil {
			b.Fatal(err)
		}
		startTotal += time.Since(begin)
		for _, p := range c.processes {
			kb, err := residentKB(p.cmd.Process.Pid)
			if err != nil {
				b.Fatalf("%s: %v", p.name, err)
			}
			rss[p.name] += kb
		}
		begin = time.Now()
		c.Stop()
		stopTotal += time.Since(begin)
	}
	n := float64(b.N)
	b.ReportMetric(startTotal.Seconds()/n, "s/start")
	b.ReportMetric(stopTotal.Seconds()/n, "s/stop")
	var total int64
	var parts []string
	for _, name := range Binaries {
		total += rss[name]
		parts = append(parts, fmt.Sprintf("%s %.0f MB", name, float64(rss[name])/n/1024))
	}
	b.ReportMetric(float64(total)/n/1024, "MB-rss")
	b.Logf("resident memory when ready: %s", strings.Join(parts, ", "))
	// The benchmark's own ns/op would count the stops and the RSS reads: the metrics above are
	// the numbers.
}

// residentKB is a process's resident set size (VmRSS in /proc/PID/status), in KiB.
func residentKB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
