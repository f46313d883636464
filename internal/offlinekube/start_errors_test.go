package offlinekube

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartNamesMissingBinariesAndTheBuildCommand(t *testing.T) {
	empty := t.TempDir()
	_, err := Start(t.Context(), Options{BinDir: empty})
	if err == nil {
		t.Fatal("Start succeeded with an empty bin directory")
	}
	for _, want := range append([]string{empty, "make kube"}, Binaries...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// A component that exits during start-up: the error names it and quotes its log, and Start leaves
// no process behind (etcd, started before, is stopped again).
func TestStartQuotesTheLogOfAComponentThatExits(t *testing.T) {
	realBin, err := DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckBinaries(realBin); err != nil {
		t.Fatalf("%v (etcd is needed to get as far as the API server)", err)
	}
	bin := t.TempDir()
	for _, b := range Binaries {
		if err := os.Symlink(filepath.Join(realBin, b), filepath.Join(bin, b)); err != nil {
			t.Fatal(err)
		}
	}
	apiserver := filepath.Join(bin, "kube-apiserver")
	if err := os.Remove(apiserver); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho 'first line'\necho 'E0101 fake: cannot listen on the secure port' >&2\nexit 3\n"
	if err := os.WriteFile(apiserver, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{BinDir: bin, WorkDir: work})
	if err == nil {
		c.Stop()
		t.Fatal("Start succeeded with an API server that exits")
	}
	for _, want := range []string{"kube-apiserver:", "exit status 3", "cannot listen on the secure port", filepath.Join(work, "logs", "kube-apiserver.log")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(work, "logs", "etcd.log")); !strings.Contains(string(data), "etcd ready") {
		t.Errorf("etcd did not start before the API server; its log: %s", data)
	}
	if left := ProcessesMentioning(work); len(left) > 0 {
		t.Errorf("processes left running after the failed Start: %v", left)
	}
}
