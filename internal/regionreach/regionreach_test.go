package regionreach

import (
	"os"
	"strings"
	"testing"
)

func TestFiltered(t *testing.T) {
	cases := []struct {
		region, host string
		want         Verdict // "" = usable
	}{
		{"cn-wulanchabu", "registry.k8s.io", Blocked},
		{"cn-wulanchabu", "REGISTRY.K8S.IO:443", Blocked},
		{"cn-beijing", "docker.io", Blocked},
		{"cn-beijing", "registry-1.docker.io", Blocked},
		{"cn-shanghai", "ghcr.io", Unreliable},
		{"cn-hangzhou", "us.download.nvidia.com", Blocked},           // its own row, not download.nvidia.com's
		{"cn-hangzhou", "developer.download.nvidia.com", Unreliable}, // its own row
		{"cn-hangzhou", "international.download.nvidia.com", Unreliable},
		{"cn-hangzhou", "eu.gcr.io", Blocked},
		{"cn-hangzhou", "pkgs.k8s.io", Unreliable},
		{"cn-hangzhou", "example.org", ""},                  // not in the table
		{"cn-hangzhou", "notgcr.io", ""},                    // a suffix is not a subdomain
		{"cn-hongkong", "registry.k8s.io", ""},              // Hong Kong is not mainland
		{"ap-southeast-1", "registry.k8s.io", ""},           // nor is Singapore
		{"cn-wulanchabu", "mirrors.cloud.aliyuncs.com", ""}, // the in-VPC mirror
		{"cn-wulanchabu", "registry-vpc.cn-wulanchabu.aliyuncs.com", ""},
	}
	for _, c := range cases {
		h, ok := Filtered(c.region, c.host)
		if got := map[bool]Verdict{true: h.Verdict}[ok]; got != c.want {
			t.Errorf("Filtered(%s, %s) = %q, want %q", c.region, c.host, got, c.want)
		}
	}
}

func TestInRegion(t *testing.T) {
	in := []string{
		"mirrors.cloud.aliyuncs.com",
		"registry-vpc.cn-wulanchabu.aliyuncs.com",
		"gpu-registry-vpc.cn-wulanchabu.cr.aliyuncs.com",
		"crpi-abc123-vpc.cn-wulanchabu.personal.cr.aliyuncs.com",
		"oss-cn-wulanchabu-internal.aliyuncs.com",
		"bucket.oss-cn-wulanchabu-internal.aliyuncs.com",
	}
	out := []string{
		"registry.cn-wulanchabu.aliyuncs.com",   // the public endpoint needs the internet
		"registry-vpc.cn-hangzhou.aliyuncs.com", // another region's VPC endpoint
		"oss-cn-hangzhou-internal.aliyuncs.com", // another region's internal endpoint
		"crpi-abc123.cn-wulanchabu.personal.cr.aliyuncs.com",
		"mirrors.aliyun.com",
	}
	for _, h := range in {
		if !InRegion("cn-wulanchabu", h) {
			t.Errorf("InRegion(cn-wulanchabu, %s) = false", h)
		}
	}
	for _, h := range out {
		if InRegion("cn-wulanchabu", h) {
			t.Errorf("InRegion(cn-wulanchabu, %s) = true", h)
		}
	}
}

// TestEveryRowSourced keeps the table honest: every row has a reason and a source, and
// SOURCES.md lists every source a row cites.
func TestEveryRowSourced(t *testing.T) {
	doc, err := os.ReadFile("SOURCES.md")
	if err != nil {
		t.Fatal(err)
	}
	required := []string{"docker.io", "registry-1.docker.io", "registry.k8s.io", "k8s.gcr.io", "gcr.io", "ghcr.io", "quay.io", "nvcr.io",
		"pkgs.k8s.io", "dl.k8s.io", "nvidia.github.io", "download.nvidia.com", "us.download.nvidia.com", "developer.download.nvidia.com",
		"github.com", "objects.githubusercontent.com", "raw.githubusercontent.com", "pypi.org", "files.pythonhosted.org"}
	seen := map[string]bool{}
	for _, h := range MainlandHosts() {
		seen[h.Name] = true
		if h.Why == "" || !strings.HasPrefix(h.Source, "https://") || (h.Verdict != Blocked && h.Verdict != Unreliable) {
			t.Errorf("row %s: verdict %q, why %q, source %q", h.Name, h.Verdict, h.Why, h.Source)
		}
		if !strings.Contains(string(doc), h.Source) {
			t.Errorf("row %s cites %s, which SOURCES.md does not list", h.Name, h.Source)
		}
	}
	for _, r := range required {
		if !seen[r] {
			t.Errorf("no row for %s", r)
		}
	}
}
