// Command terraform-provider-gpucluster is the Terraform/OpenTofu provider that builds GPU
// research clusters on Alibaba Cloud.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/provider"
)

// version is set at build time: -ldflags "-X main.version=1.2.3".
var version = "dev"

// cpuProfileDirEnv names a directory each provider process writes its CPU profile to
// (cpu-<pid>.pprof) when it shuts down: how the scale benchmarks see where the provider's time goes
// while the real CLI drives it. Unset, nothing is profiled.
const cpuProfileDirEnv = "GPUCLUSTER_CPU_PROFILE_DIR"

// frameworkLogEnv is the log level of terraform-plugin-framework's own messages.
const frameworkLogEnv = "TF_LOG_SDK_FRAMEWORK"

// quietFrameworkLogs turns the framework's own log messages off when nobody asked for logs (TF_LOG
// and TF_LOG_SDK_FRAMEWORK unset: the CLI drops them anyway). Why it matters: the framework (v1.19)
// walks every value of a resource's state in several steps of each call and, for each value, adds
// a layer to the context it logs through and looks its logger up beneath all the layers added
// before, so a state of V values costs V*V/2 lookups. For a 10,000-node pool (70,000 values) that
// was minutes of CPU per plan; with its messages off the framework skips the lookups and each
// call is linear again. With TF_LOG set, the messages (and the cost) are back.
func quietFrameworkLogs() {
	if os.Getenv("TF_LOG") == "" && os.Getenv(frameworkLogEnv) == "" {
		_ = os.Setenv(frameworkLogEnv, "off")
	}
}

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	quietFrameworkLogs()

	if dir := os.Getenv(cpuProfileDirEnv); dir != "" {
		stop, err := startCPUProfile(dir)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
	}
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         provider.Address,
		Debug:           debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err)
	}
}

func startCPUProfile(dir string) (stop func(), err error) {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", os.Getpid())))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cpuProfileDirEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: %w", cpuProfileDirEnv, err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
