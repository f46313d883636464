// Command gpucluster-offlinekube runs the offline test cluster (internal/offlinekube) for shell
// scripts: a real kube-apiserver, kube-controller-manager and kube-scheduler on loopback, with kwok
// standing in for the kubelets of Nodes annotated kwok.x-k8s.io/node=fake. It prints exactly one
// line on standard output, "kubeconfig PATH", when the cluster is ready, and runs until SIGINT or
// SIGTERM, then stops every component. Progress and errors go to standard error.
//
// `gpucluster-offlinekube report` sums up a stack the emulator's node agent registered in it
// (see report.go); make demo-cluster ends with it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "report" {
		os.Exit(report(os.Args[2:]))
	}
	fs := flag.NewFlagSet("gpucluster-offlinekube", flag.ContinueOnError)
	binDir := fs.String("bin", "", "directory with etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (`make kube`); default: ./bin of the repository holding the working directory")
	workDir := fs.String("work-dir", "", "directory for certificates, etcd data, kubeconfigs and logs/<component>.log, kept on exit; default: a temporary directory removed on exit")
	timeout := fs.Duration("start-timeout", offlinekube.DefaultStartTimeout, "how long the control plane may take to become ready")
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), `Usage: gpucluster-offlinekube [flags]
       gpucluster-offlinekube report --kubeconfig PATH --emulator URL [--wait 3m]

Runs a Kubernetes control plane on loopback for offline tests and demos. Prints
"kubeconfig PATH" (an administrator's kubeconfig) when ready; stops on SIGINT or SIGTERM.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	logger := log.New(os.Stderr, "", log.LstdFlags)

	// A signal during start-up cancels it; Start then stops what it had started.
	signals, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stopSignals()
	startCtx, cancel := context.WithTimeout(signals, *timeout)
	cluster, err := offlinekube.Start(startCtx, offlinekube.Options{BinDir: *binDir, WorkDir: *workDir, Logf: logger.Printf})
	cancel()
	if err != nil {
		logger.Printf("%v", err)
		os.Exit(1)
	}
	fmt.Printf("kubeconfig %s\n", cluster.Kubeconfig())

	<-signals.Done()
	logger.Printf("offlinekube: stopping")
	begin := time.Now()
	cluster.Stop()
	logger.Printf("offlinekube: stopped in %s", time.Since(begin).Round(time.Millisecond))
}
