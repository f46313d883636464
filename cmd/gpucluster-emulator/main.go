// Command gpucluster-emulator runs the offline Alibaba Cloud API emulator
// (ECS, VPC, NAS, STS over RPC; OSS over REST) on one port. It prints
// exactly one line, "listening on http://HOST:PORT", when ready, and serves
// until SIGINT or SIGTERM, then shuts down gracefully and saves its state.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/intercept"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
)

// nodeAgentInterval is how often the node agent looks for instances that became Running.
const nodeAgentInterval = time.Second

func main() {
	fs := flag.NewFlagSet("gpucluster-emulator", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:18686", "address to listen on; port 0 picks a free port (printed on the ready line)")
	stateFile := fs.String("state-file", "", "JSON file the state is persisted to (atomically) and restored from; empty keeps state in memory only")
	accessKey := fs.String("access-key", "emulator", "the AccessKeyId the emulator accepts (besides STS keys it issued)")
	secretKey := fs.String("secret-key", "emulator-secret", "the AccessKeySecret matching --access-key")
	keyUser := fs.String("key-user", "", "the RAM user --access-key belongs to (STS GetCallerIdentity answers RAMUser); empty: the account's own key (Account)")
	bootSeconds := fs.Float64("boot-seconds", 2, "seconds an instance takes from Pending through Starting to Running (also paces VPC/vSwitch/NAS readiness)")
	consistencyMS := fs.Int("consistency-delay-ms", 0, "milliseconds a new instance stays invisible to DescribeInstances (eventual consistency)")
	gpuQuota := fs.Int("gpu-quota", emulator.DefaultGPUQuota, "total GPUs live instances may hold; RunInstances beyond it fails with QuotaExceed.ElasticQuota")
	regions := fs.String("region", "", "comma-separated regions to serve (default: all of cn-wulanchabu, cn-beijing, cn-hangzhou, cn-shanghai)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of a Kubernetes API server (the offline test cluster): a node agent registers every Running instance whose bootstrap would succeed as a kwok Node and applies the first control-plane node's add-ons; GET /_emulator/nodes says why any other did not")
	interceptCA := fs.String("intercept-ca-file", "", "also be the HTTPS proxy (HTTPS_PROXY) of programs that call Alibaba Cloud at its *.aliyuncs.com host names: answer their CONNECT with TLS as that host, certified by a CA of this run written to this file (PEM; give it to them as SSL_CERT_FILE)")
	verbose := fs.Bool("verbose", false, "log one line per RPC call to stderr (never parameters or secrets)")
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), `Usage: gpucluster-emulator [flags]

Offline emulator of the Alibaba Cloud APIs used by terraform-provider-gpucluster:
ECS 2014-05-26, VPC 2016-04-28, NAS 2017-06-26, SLB 2014-05-15, ESS 2014-08-28,
STS 2015-04-01 (AssumeRole, GetCallerIdentity) and Location 2015-06-12
(DescribeEndpoints, answering this address for every product) as RPC
(signature V1 or V3), OSS as path-style REST. Admin API on the same port:
  GET /_emulator/stats, GET /_emulator/resources, POST /_emulator/reset,
  PUT /_emulator/faults, PUT /_emulator/capacity, PUT /_emulator/unavailable,
  GET /_emulator/metadata/<instance-id>/latest/... (the instance's 100.100.100.200),
  GET /_emulator/nodes (nodes with --kubeconfig; image builders always)
As an HTTP proxy (HTTP_PROXY) it serves requests to any host; with
--intercept-ca-file also HTTPS (HTTPS_PROXY) to *.aliyuncs.com.

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
	cfg := emulator.Config{
		AccessKey:        *accessKey,
		SecretKey:        *secretKey,
		KeyUser:          *keyUser,
		BootTime:         time.Duration(*bootSeconds * float64(time.Second)),
		ConsistencyDelay: time.Duration(*consistencyMS) * time.Millisecond,
		GPUQuota:         *gpuQuota,
		StateFile:        *stateFile,
	}
	if *regions != "" {
		for _, r := range strings.Split(*regions, ",") {
			if r = strings.TrimSpace(r); r != "" {
				cfg.Regions = append(cfg.Regions, r)
			}
		}
	}
	logger := log.New(os.Stderr, "", log.LstdFlags)
	if *verbose {
		cfg.Logf = logger.Printf
	}
	srv, err := emulator.New(cfg)
	if err != nil {
		logger.Fatalf("gpucluster-emulator: %v", err)
	}
	// The node agent always plays image builders (they bake and power off, so node images can be
	// made without a Kubernetes API); with --kubeconfig it also registers nodes.
	var kube nodeagent.Kube
	if *kubeconfig != "" {
		k, err := nodeagent.NewKubeFromFile(*kubeconfig)
		if err != nil {
			logger.Fatalf("gpucluster-emulator: %v", err)
		}
		kube = k
	}
	agent := nodeagent.New(srv.View, kube, logger.Printf)
	agent.ReadObjectsWith(srv.ReadObjectAsInstance)
	agent.WriteObjectsWith(srv.WriteObjectAsInstance)
	srv.HandleAdmin(emulator.NodesPath, agent)
	srv.HandleAdmin(nodeagent.DCGMMetricsPath, agent.DCGMMetrics()) // what dcgm-exporter shows of /_emulator/gpu_faults
	srv.HandleAdmin(nodeagent.NCCLTestsPath, agent.NCCLTests())     // what a validation job's all_reduce_perf measures
	agent.WriteConsoles(srv.SetConsoleOutput)                       // what ECS GetInstanceConsoleOutput returns
	agent.PowerOffWith(srv.PowerOffFromGuest)                       // an image builder powers itself off once baked
	agent.CommandsWith(srv.PendingCommands, srv.FinishCommand)      // the nodes run the Cloud Assistant commands sent to them
	agent.DelayShutdownWith(srv.DelayGuestShutdown)                 // a node's kubelet delays a normal stop to terminate its pods
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { agent.Run(ctx, nodeAgentInterval); close(done) }()
	stopAgent := func() { cancel(); <-done }
	// The handler is installed before the ready line: a caller may send SIGINT as soon as it reads
	// that line, and a signal arriving before Notify would kill the process without saving state.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	handler := srv.Handler()
	if *interceptCA != "" {
		i, err := intercept.New(handler)
		if err != nil {
			logger.Fatalf("gpucluster-emulator: %v", err)
		}
		if err := os.WriteFile(*interceptCA, i.CAPEM(), 0o644); err != nil {
			logger.Fatalf("gpucluster-emulator: %v", err)
		}
		handler = i
	}
	url, err := srv.StartWith(*listen, handler)
	if err != nil {
		logger.Fatalf("gpucluster-emulator: %v", err)
	}
	fmt.Printf("listening on %s\n", url)
	<-sig
	stopAgent()
	if err := srv.Close(); err != nil {
		logger.Fatalf("gpucluster-emulator: shutdown: %v", err)
	}
}
