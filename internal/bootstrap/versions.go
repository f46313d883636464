// Package bootstrap renders the cloud-init document that turns an ECS instance into a Kubernetes
// node of a GPU cluster (control plane or GPU worker), and merges it with a user's own user data.
// Pure Go: no I/O, no Terraform types. gpucluster_node_bootstrap and gpucluster_node_pool call it.
package bootstrap

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// Minimum versions the cluster targets (internal/catalog/SOURCES.md section 2): the oldest driver,
// NCCL and Kubernetes the research software stack is supported on, and the CUDA release it is
// built for.
const (
	MinDriver     = "510.47.03"
	MinNCCL       = "2.12"
	MinKubernetes = "1.24"
	// TargetCUDA is the CUDA release the research software stack is built for.
	TargetCUDA = "11.8"
)

// Versions are the software versions a node installs.
type Versions struct {
	// Driver is the NVIDIA data-centre driver, MAJOR.MINOR[.PATCH] as on download.nvidia.com.
	Driver string
	// CUDA is the toolkit MAJOR.MINOR (apt package cuda-toolkit-MAJOR-MINOR).
	CUDA string
	// NCCL is MAJOR.MINOR.PATCH; the apt package is libnccl2=<NCCL>-1+cuda<CUDA>.
	NCCL string
	// Kubernetes is MAJOR.MINOR (latest patch of that minor) or MAJOR.MINOR.PATCH.
	Kubernetes string
}

// DefaultVersions meet the minimums and each other: driver 535.183.01 (the R535 long-term branch)
// is newer than both the minimum 510.47.03 and CUDA 11.8's full-feature minimum 520.61.05; NCCL
// 2.15.5 is the release NVIDIA ships with CUDA 11.8 (libnccl2=2.15.5-1+cuda11.8); Kubernetes
// 1.33 is a maintained minor on pkgs.k8s.io.
func DefaultVersions() Versions {
	return Versions{Driver: "535.183.01", CUDA: TargetCUDA, NCCL: "2.15.5", Kubernetes: "1.33"}
}

// WithDefaults fills empty fields from DefaultVersions.
func (v Versions) WithDefaults() Versions {
	d := DefaultVersions()
	if v.Driver == "" {
		v.Driver = d.Driver
	}
	if v.CUDA == "" {
		v.CUDA = d.CUDA
	}
	if v.NCCL == "" {
		v.NCCL = d.NCCL
	}
	if v.Kubernetes == "" {
		v.Kubernetes = d.Kubernetes
	}
	return v
}

// cudaDriver is the minimum Linux driver for full CUDA compatibility per toolkit release (CUDA
// release notes, table 3). Older drivers of the same major run it only through minor version
// compatibility: no PTX JIT for the newer toolkit.
var cudaDriver = map[string]string{
	"11.0": "450.36.06", "11.1": "455.23", "11.2": "460.27.03", "11.3": "465.19.01",
	"11.4": "470.42.01", "11.5": "495.29.05", "11.6": "510.39.01", "11.7": "515.43.04",
	"11.8": "520.61.05", "12.0": "525.60.13", "12.1": "530.30.02", "12.2": "535.54.03",
	"12.3": "545.23.06", "12.4": "550.54.14", "12.5": "555.42.02", "12.6": "560.28.03",
}

// cudaMajorDriver is the minimum driver for a CUDA major version at all (minor version
// compatibility floor).
var cudaMajorDriver = map[int]string{11: "450.80.02", 12: "525.60.13"}

// versionError is a version that is malformed or too old. Its path names it (driver, cuda, nccl,
// kubernetes: Validate puts "versions." in front), and supported is the range the stack accepts,
// as data for a caller that offers it. The message says "version" after the name, which the
// bare attribute name would not.
func versionError(name, value, why, fix, supported string) *planerr.Error {
	return planerr.New(name, value, why, fix, fmt.Errorf("%s version %q %s; %s", name, value, why, fix)).WithSupported(supported)
}

// parseVersion reads dotted decimal numbers with between min and max parts.
func parseVersion(s string, minParts, maxParts int) ([]int, error) {
	parts := strings.Split(s, ".")
	if len(parts) < minParts || len(parts) > maxParts {
		return nil, errors.New("wrong number of parts")
	}
	out := make([]int, len(parts))
	for i, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" {
			return nil, errors.New("not a number")
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// compareVersions compares dotted versions part by part; missing parts count as 0.
func compareVersions(a, b []int) int {
	for i := range max(len(a), len(b)) {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func mustParse(s string) []int {
	v, err := parseVersion(s, 1, 4)
	if err != nil {
		panic("bootstrap: bad built-in version " + s)
	}
	return v
}

// Check validates the versions (defaults filled) and returns warnings for combinations that work
// with limits.
func (v Versions) Check() (warnings []string, err error) {
	v = v.WithDefaults()
	drv, perr := parseVersion(v.Driver, 2, 3)
	if perr != nil {
		return nil, versionError("driver", v.Driver, "is not MAJOR.MINOR[.PATCH]", "use a release from the NVIDIA data-centre driver archive, such as "+DefaultVersions().Driver, MinDriver+" or newer")
	}
	if compareVersions(drv, mustParse(MinDriver)) < 0 {
		return nil, versionError("driver", v.Driver, "is older than the supported minimum "+MinDriver, "use "+MinDriver+" or newer, such as "+DefaultVersions().Driver, MinDriver+" or newer")
	}
	cuda, perr := parseVersion(v.CUDA, 2, 2)
	if perr != nil {
		return nil, versionError("cuda", v.CUDA, "is not MAJOR.MINOR", "use a toolkit release such as "+TargetCUDA, "11.x or 12.x")
	}
	floor, ok := cudaMajorDriver[cuda[0]]
	if !ok {
		return nil, versionError("cuda", v.CUDA, "is not a CUDA 11 or 12 release", "use "+TargetCUDA+" (the release the stack is built for) or a 12.x release", "11.x or 12.x")
	}
	if compareVersions(drv, mustParse(floor)) < 0 {
		return nil, versionError("driver", v.Driver, fmt.Sprintf("cannot run CUDA %s: CUDA %d needs driver %s or newer", v.CUDA, cuda[0], floor),
			"raise the driver to "+DefaultVersions().Driver+" or lower cuda", floor+" or newer")
	}
	if full, ok := cudaDriver[v.CUDA]; ok && compareVersions(drv, mustParse(full)) < 0 {
		warnings = append(warnings, fmt.Sprintf("driver %s runs CUDA %s only through minor version compatibility (full support from %s): "+
			"kernels that need PTX JIT for the newer toolkit fail; use driver %s or newer", v.Driver, v.CUDA, full, full))
	}
	if v.CUDA != TargetCUDA {
		warnings = append(warnings, fmt.Sprintf("cuda %s differs from the target CUDA %s; check that the workload's frameworks are built for it", v.CUDA, TargetCUDA))
	}
	nccl, perr := parseVersion(v.NCCL, 3, 3)
	if perr != nil {
		return nil, versionError("nccl", v.NCCL, "is not MAJOR.MINOR.PATCH", "use a release such as "+DefaultVersions().NCCL+" (apt package libnccl2=VERSION-1+cudaCUDA)", MinNCCL+" or newer")
	}
	if compareVersions(nccl, mustParse(MinNCCL)) < 0 {
		return nil, versionError("nccl", v.NCCL, "is older than the supported minimum "+MinNCCL, "use "+DefaultVersions().NCCL+" or newer", MinNCCL+" or newer")
	}
	k8s, perr := parseVersion(v.Kubernetes, 2, 3)
	if perr != nil || k8s[0] != 1 {
		return nil, versionError("kubernetes", v.Kubernetes, "is not 1.MINOR or 1.MINOR.PATCH", "use a minor such as "+DefaultVersions().Kubernetes, MinKubernetes+" or newer")
	}
	if compareVersions(k8s, mustParse(MinKubernetes)) < 0 {
		return nil, versionError("kubernetes", v.Kubernetes, "is older than the supported minimum "+MinKubernetes+" (and has no pkgs.k8s.io repository)", "use "+DefaultVersions().Kubernetes, MinKubernetes+" or newer")
	}
	return warnings, nil
}

// k8sMinor is "v1.33" for the pkgs.k8s.io repository path.
func (v Versions) k8sMinor() string {
	p := strings.Split(v.Kubernetes, ".")
	return "v" + p[0] + "." + p[1]
}

// k8sMinorNumber is 33 for "1.33.2".
func (v Versions) k8sMinorNumber() int {
	n, _ := strconv.Atoi(strings.Split(v.Kubernetes, ".")[1])
	return n
}

// k8sPackageVersion is the apt version pin for kubelet/kubeadm/kubectl ("1.33.2-1.1"), or ""
// when only a minor was given (the repository holds that minor only, so the latest patch wins).
func (v Versions) k8sPackageVersion() string {
	if strings.Count(v.Kubernetes, ".") == 2 {
		return v.Kubernetes + "-1.1"
	}
	return ""
}

// cudaPackage is "cuda-toolkit-11-8".
func (v Versions) cudaPackage() string {
	return "cuda-toolkit-" + strings.ReplaceAll(v.CUDA, ".", "-")
}

// ncclPackageVersion is "2.15.5-1+cuda11.8".
func (v Versions) ncclPackageVersion() string {
	return v.NCCL + "-1+cuda" + v.CUDA
}
