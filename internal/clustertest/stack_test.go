package clustertest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterreport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/offlinekube"
)

// stack is one test's emulator, Kubernetes control plane and the node agent between them.
type stack struct {
	emu     *acctest.Emulator
	cluster *offlinekube.Cluster
	agent   *nodeagent.Agent
	dir     string // the CLI's working directory, once applied (its terraform.tfstate)
	// What apply saw, for the secrets audit (secrets_test.go): the CLI's output, the node
	// agent's log, the plan it applied and the state after it (tofu show -json).
	cliLog              strings.Builder
	agentLogMu          sync.Mutex
	agentLogText        strings.Builder
	planJSON, stateJSON string
	secrets             map[string]string // by name, once audited
}

// startStack starts the control plane, then the emulator with its node agent; the test's
// cleanup stops them in the other order.
func startStack(t *testing.T) *stack {
	t.Helper()
	return startStackOn(t, "")
}

// startStackOn is startStack with the control plane of release ("v1.36.3", one of
// offlinekube.ControlPlaneReleases; "" the current one). A kubeadm upgrade apply the nodes run
// replaces it with the target release's binaries (nodeagent upgrade.go).
func startStackOn(t *testing.T, release string) *stack {
	t.Helper()
	acctest.PreCheck(t)
	cluster := offlinekube.StartT(t, offlinekube.Options{ControlPlaneVersion: release})
	emu := acctest.StartEmulator(t)
	kube, err := nodeagent.NewKube(cluster.RESTConfig())
	if err != nil {
		t.Fatalf("node agent: %v", err)
	}
	s := &stack{emu: emu, cluster: cluster}
	agent := nodeagent.New(emu.View, kube, func(format string, args ...any) {
		t.Logf(format, args...)
		s.agentLogMu.Lock()
		defer s.agentLogMu.Unlock()
		fmt.Fprintf(&s.agentLogText, format+"\n", args...)
	})
	agent.ReadObjectsWith(emu.ReadObjectAsInstance)   // a bootstrap bundle's node fetches it as its RAM role would
	agent.WriteObjectsWith(emu.WriteObjectAsInstance) // the control plane's join-token and etcd snapshot timers store as its role would
	// The etcd snapshot timer saves the offline cluster's real etcd.
	agent.SnapshotEtcdWith(func() ([]byte, error) { return cluster.SnapshotEtcd(t.Context()) })
	agent.UpgradeControlPlaneWith(cluster.UpgradeControlPlane)
	emu.HandleAdmin(emulator.NodesPath, agent)
	// The GPUs' telemetry (what dcgm-exporter on a node serves), and each node's host for the
	// offline cluster's GPU pod programs: the GPU health agent's pods run the real agent, reading
	// their node's exporter pod, its instance's metadata service and the emulator's APIs.
	emu.HandleAdmin(nodeagent.DCGMMetricsPath, agent.DCGMMetrics())
	cluster.SetNodeHosts(func(node *corev1.Node) (offlinekube.NodeHost, bool) {
		id := node.Annotations[nodeagent.InstanceAnnotation]
		return offlinekube.NodeHost{
			MetadataEndpoint: emu.URL + emulator.MetadataPath + "/" + id,
			CloudEndpoint:    emu.URL,
			DCGMMetricsURL:   emu.URL + nodeagent.DCGMMetricsPath + "?instance_id=" + url.QueryEscape(id),
		}, id != ""
	})
	agent.WriteConsoles(emu.SetConsoleOutput)                  // what ECS GetInstanceConsoleOutput answers
	agent.PowerOffWith(emu.PowerOffFromGuest)                  // image builders power themselves off once baked
	agent.CommandsWith(emu.PendingCommands, emu.FinishCommand) // the nodes run the Cloud Assistant commands sent to them
	agent.DelayShutdownWith(emu.DelayGuestShutdown)            // a node's kubelet delays a normal stop to terminate its pods
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { agent.Run(ctx, 200*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	s.agent = agent
	return s
}

// agentLog is what the node agent logged so far.
func (s *stack) agentLog() string {
	s.agentLogMu.Lock()
	defer s.agentLogMu.Unlock()
	return s.agentLogText.String()
}

// client is the provider's own client (the vendor SDK over HTTP) on the stack's emulator, with
// API credentials only, as an operator reads the cloud.
func (s *stack) client(t *testing.T) *cloud.Client {
	t.Helper()
	c, err := cloud.New(t.Context(), cloud.Config{Region: acctest.Region, Endpoint: s.emu.URL, MaxRetries: 3, UserAgent: "clustertest/0",
		Credentials: cloud.Credentials{AccessKeyID: acctest.AccessKey, AccessKeySecret: acctest.SecretKey}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// instances are the agent's verdicts on the Running instances, for clusterreport.
func (s *stack) instances() []clusterreport.Instance {
	var out []clusterreport.Instance
	for _, st := range s.agent.Statuses() {
		out = append(out, clusterreport.Instance{ID: st.InstanceID, Node: st.Node, Reason: st.Reason})
	}
	return out
}

// apply applies root (a configuration that calls a module of modules/ and has a "stack" output)
// with the real CLI, env added to its environment, and returns that output. The test's cleanup
// destroys the stack and fails if the emulator still holds anything. The testing framework's
// steps are not used: they cannot read back a state with modules.
func (s *stack) apply(t *testing.T, root string, env ...string) string {
	t.Helper()
	run := s.prepare(t, root, env...)
	// A saved plan, applied as it is, so the audit reads the plan the apply ran.
	s.cliLog.WriteString(run.MustRun("plan", "-out=tfplan", "-no-color", "-input=false"))
	s.planJSON = run.MustRun("show", "-json", "-no-color", "tfplan")
	s.cliLog.WriteString(run.MustRun("apply", "-auto-approve", "-no-color", "-input=false", "tfplan"))
	s.stateJSON = run.MustRun("show", "-json", "-no-color")
	return strings.TrimSpace(run.MustRun("output", "-raw", "-no-color", "stack"))
}

// applyFails applies root expecting the apply to fail, and returns its output; what it made is
// destroyed with the test, and nothing may be left.
func (s *stack) applyFails(t *testing.T, root string) string {
	t.Helper()
	code, out := s.prepare(t, root).Run("apply", "-auto-approve", "-no-color", "-input=false")
	if code == 0 {
		t.Fatalf("apply succeeded, want it to fail:\n%s", out)
	}
	return out
}

// prepare writes root into a CLI run against the stack's emulator, installs its module calls,
// and registers the cleanup: destroy, then nothing may be left in the emulator.
func (s *stack) prepare(t *testing.T, root string, env ...string) *acctest.CLIRun {
	t.Helper()
	run := acctest.NewCLIRun(t)
	run.UseEmulator(s.emu.URL)
	run.Env = append(run.Env, env...)
	run.Write(root)
	s.dir = run.Dir
	// get, not init: with dev_overrides init would ask the registry for the provider.
	run.MustRun("get", "-no-color")
	t.Cleanup(func() {
		run.MustRun("destroy", "-auto-approve", "-no-color", "-input=false")
		if left := s.emu.Resources().Counts(); len(left) != 0 {
			t.Errorf("resources left behind after destroy: %v", left)
		}
	})
	return run
}

// converge waits up to 3 minutes until want instances are Ready nodes and every validation pod
// has run on a GPU node.
func (s *stack) converge(ctx context.Context, want int) (clusterreport.Summary, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	return clusterreport.Wait(ctx, s.cluster.Client(), func() ([]clusterreport.Instance, error) { return s.instances(), nil }, want)
}

// consoles reads every instance the agent judged through ECS GetInstanceConsoleOutput, with the
// provider's own client (the vendor SDK over HTTP), as an operator with API credentials only
// would, and says how each node's bootstrap stands (bootstrap.ParseConsole): instance id ->
// outcome, and the raw output for a failure message.
func (s *stack) consoles(t *testing.T) (map[string]bootstrap.ConsoleOutcome, map[string]string) {
	t.Helper()
	c := s.client(t)
	outcomes, raw := map[string]bootstrap.ConsoleOutcome{}, map[string]string{}
	for _, st := range s.agent.Statuses() {
		out, err := c.ConsoleOutput(t.Context(), st.InstanceID)
		if err != nil {
			t.Fatalf("GetInstanceConsoleOutput %s: %v", st.InstanceID, err)
		}
		outcomes[st.InstanceID], raw[st.InstanceID] = bootstrap.ParseConsole(out), out
	}
	if len(outcomes) == 0 {
		t.Fatal("the node agent judged no instance: no console to read")
	}
	return outcomes, raw
}
