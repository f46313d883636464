package nodeagent

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// The cluster's etcd membership (issue #31). kubeadm runs etcd stacked on every control-plane
// node: kubeadm init makes the first member, and every kubeadm join --control-plane adds the
// joining node as a member named after the node
// (https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/ha-topology/#stacked-etcd-topology).
// Nothing removes a member when its machine goes: a released instance's member stays in the
// list, unreachable, until someone runs etcdctl member remove (kubeadm reset does it only on the
// node itself, https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-reset/).
//
// What a stale member does: etcd refuses to add a member while its leader is not connected to
// every voting member ("rejecting member add request; local member has not been connected to all
// peers, reconfigure breaks active quorum", ErrUnhealthy: mayAddMember with the default
// --strict-reconfig-check, https://github.com/etcd-io/etcd/blob/v3.6.5/server/etcdserver/server.go),
// so a replacement control-plane node's kubeadm join fails with "etcdserver: unhealthy cluster".
// The agent counts a member connected when its instance is live and Running. Given the offline
// cluster's real etcd (etcdreal.go), it also makes every change there, and etcd judges it too.

// EtcdMember is one member of the cluster's etcd: the node it was named after and the instance it
// ran on.
type EtcdMember struct {
	Name       string `json:"name"`
	InstanceID string `json:"instance_id"`
	// Connected: its instance is live and Running, so its etcd answers its peers.
	Connected bool `json:"connected"`
}

// addEtcdMember records a control-plane node's member (kubeadm init or join --control-plane).
func (c *cluster) addEtcdMember(name, instanceID string) {
	for i, m := range c.etcd {
		if m.Name == name {
			c.etcd[i].InstanceID = instanceID
			return
		}
	}
	c.etcd = append(c.etcd, EtcdMember{Name: name, InstanceID: instanceID})
}

// etcdRefusesAdd says why etcd refuses to add the member of a node joining the control plane:
// the members whose instance is gone or not Running; "" when every member is connected.
func (c *cluster) etcdRefusesAdd(net *network, joining string) string {
	var down []string
	for _, m := range c.etcd {
		if m.Name == joining {
			continue // the same node joining again: kubeadm finds its own member
		}
		if in := net.byID[m.InstanceID]; in == nil {
			down = append(down, fmt.Sprintf("%s (instance %s, released)", m.Name, m.InstanceID))
		} else if in.Status != "Running" {
			down = append(down, fmt.Sprintf("%s (instance %s, %s)", m.Name, m.InstanceID, in.Status))
		}
	}
	if len(down) == 0 {
		return ""
	}
	return fmt.Sprintf("kubeadm join --control-plane fails adding this node's etcd member: etcdserver: unhealthy cluster. etcd's member list still holds %s, "+
		"which does not answer, and etcd adds no member while its leader is not connected to every voting member (--strict-reconfig-check). "+
		"Remove the stale member first (etcdctl member remove on a running control-plane node; the provider does it through Cloud Assistant "+
		"when it replaces a control-plane node)", strings.Join(down, ", "))
}

// EtcdMembers is etcd's member list as etcdctl member list would show it, with each member's
// connection; nil before a cluster exists.
func (a *Agent) EtcdMembers() []EtcdMember {
	v := a.view()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cluster == nil {
		return nil
	}
	return a.cluster.etcdMembers(v)
}

func (c *cluster) etcdMembers(v emulator.View) []EtcdMember {
	running := map[string]bool{}
	for _, in := range v.Instances {
		running[in.ID] = in.Status == "Running"
	}
	out := make([]EtcdMember, 0, len(c.etcd))
	for _, m := range c.etcd {
		m.Connected = running[m.InstanceID]
		out = append(out, m)
	}
	return out
}

// The command that removes members, as the provider sends it through Cloud Assistant to a
// running control-plane node (bootstrap.EtcdMemberRemoveScript). What the real node needs for it
// to work, and the agent checks: a control-plane node of the cluster whose etcd runs; etcdctl run
// inside the etcd container (the etcd image carries it; crictl exec); the etcd CA and a client
// certificate at the paths kubeadm writes them on a stacked-etcd node
// (https://kubernetes.io/docs/setup/best-practices/certificates/#all-certificates); etcd's client
// URL on the loopback address, where kubeadm's etcd manifest listens
// (--listen-client-urls=https://127.0.0.1:2379,https://<node IP>:2379).
var (
	etcdRemoveNamesRE = regexp.MustCompile(`(?m)^for name in ([a-z0-9.\- ]+); do$`)
	etcdctlExecRE     = regexp.MustCompile(`crictl exec "?\$[a-z_]+"? etcdctl `)
	kubeadmEtcdPKI    = []string{"/etc/kubernetes/pki/etcd/ca.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.crt", "/etc/kubernetes/pki/etcd/healthcheck-client.key",
		"/etc/kubernetes/pki/etcd/server.crt", "/etc/kubernetes/pki/etcd/server.key", "/etc/kubernetes/pki/etcd/peer.crt", "/etc/kubernetes/pki/etcd/peer.key",
		"/etc/kubernetes/pki/apiserver-etcd-client.crt", "/etc/kubernetes/pki/apiserver-etcd-client.key"}
	pkiPathRE = regexp.MustCompile(`/etc/kubernetes/pki/[a-z0-9./-]+`)
)

// etcdctlProblem is why the etcdctl a script runs fails on a kubeadm control-plane node, with
// its exit code: etcdctl not run in the etcd container, a PKI path kubeadm does not write, or
// an endpoint other than the TLS one on loopback. "" when it works.
func etcdctlProblem(script string) (exitCode int, output string) {
	if !etcdctlExecRE.MatchString(script) {
		return 127, "etcdctl: command not found (kubeadm installs no etcdctl on the host: run it in the etcd container with crictl exec)\n"
	}
	for _, p := range pkiPathRE.FindAllString(script, -1) {
		if !slices.Contains(kubeadmEtcdPKI, p) {
			return 1, fmt.Sprintf("Error: open %s: no such file or directory (kubeadm writes no such file on a control-plane node)\n", p)
		}
	}
	if !strings.Contains(script, "https://127.0.0.1:2379") {
		return 1, "Error: context deadline exceeded (etcdctl's default endpoint 127.0.0.1:2379 speaks TLS on a kubeadm node: pass --endpoints=https://127.0.0.1:2379)\n"
	}
	return 0, ""
}

// runEtcdRemove plays the member-removal script, invocation invokeID on instance id: its exit
// code and output, or commandUnderWay when a real etcd's members are being removed
// (startEtcdRemovals finishes it). handled is false for a script that is not one.
func (a *Agent) runEtcdRemove(invokeID, id, script string) (exitCode int, output string, handled bool) {
	m := etcdRemoveNamesRE.FindStringSubmatch(script)
	if m == nil || !strings.Contains(script, "member remove") {
		return 0, "", false
	}
	c := a.cluster
	if c == nil || !slices.ContainsFunc(c.etcd, func(e EtcdMember) bool { return e.InstanceID == id }) || a.stopped[id] {
		return 1, "no etcd container runs on this node: run the command on a control-plane node of the cluster\n", true
	}
	if code, problem := etcdctlProblem(script); problem != "" {
		return code, problem, true
	}
	names := strings.Fields(m[1])
	if a.etcd != nil {
		a.putUnderWay(invokeID)
		a.removalsDue = append(a.removalsDue, etcdRemoval{invokeID: invokeID, id: id, names: names, retry: removeRetryOf(script)})
		return commandUnderWay, "", true
	}
	var out strings.Builder
	for _, name := range names {
		a.forgetEtcdMember(id, name, &out)
	}
	return 0, out.String(), true
}

// forgetEtcdMember takes name out of the member list the agent keeps and writes the script's
// line for it. Caller holds a.mu.
func (a *Agent) forgetEtcdMember(id, name string, out *strings.Builder) {
	c := a.cluster
	i := slices.IndexFunc(c.etcd, func(e EtcdMember) bool { return e.Name == name })
	if i < 0 {
		fmt.Fprintf(out, "etcd member %s: not a member\n", name)
		return
	}
	a.logf("nodeagent: %s removed etcd member %s (instance %s)", id, name, c.etcd[i].InstanceID)
	c.etcd = slices.Delete(c.etcd, i, i+1)
	fmt.Fprintf(out, "etcd member %s: removed\n", name)
}

// Cloud Assistant (https://www.alibabacloud.com/help/en/ecs/user-guide/overview-10): the agent is
// the guest of the instances it plays, so it runs the commands RunCommand sends them. It runs
// only the scripts it models (runEtcdRemove, runKubeadmUpgrade in upgrade.go, runDrain in evictions.go, runAcceptance in
// acceptance.go); any other stays
// Running until its Timeout, as on an instance whose client never answers.

// CommandsWith makes the agent run the Cloud Assistant commands pending lists (such as the
// emulator's Server.PendingCommands) on the nodes it plays and report each with finish
// (Server.FinishCommand). Call it before Run.
func (a *Agent) CommandsWith(pending func() []emulator.PendingCommand, finish func(invokeID, instanceID string, exitCode int, output string)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pendingCommands, a.finishCommand = pending, finish
}

// runCommands runs this round's pending commands. Caller holds a.mu.
func (a *Agent) runCommands(ctx context.Context) {
	if a.pendingCommands == nil {
		return
	}
	for _, cmd := range a.pendingCommands() {
		if a.underWay[cmd.InvokeID] {
			continue // it finishes on its own goroutine (upgrade.go, etcdreal.go, evictions.go)
		}
		if code, out, ok := a.runCommand(ctx, cmd); ok && code != commandUnderWay {
			a.finishCommand(cmd.InvokeID, cmd.InstanceID, code, out)
		}
	}
}

// runCommand runs one command with the model of its script: its exit code and output, or
// commandUnderWay when it finishes on a goroutine of its own; handled is false for a script no
// model knows. On an instance that never registered a node only the scripts that do not need
// one answer: the acceptance gate's refusal, and a drain (no kubelet credentials: nothing to drain).
func (a *Agent) runCommand(ctx context.Context, cmd emulator.PendingCommand) (exitCode int, output string, handled bool) {
	id, script := cmd.InstanceID, cmd.Content
	if _, ok := a.registered[id]; !ok {
		if code, out, ok := a.acceptanceOnRefused(id, script); ok {
			return code, out, true
		}
		return a.runDrain(ctx, cmd.InvokeID, id, script)
	}
	for _, run := range []func() (int, string, bool){
		func() (int, string, bool) { return a.runEtcdRemove(cmd.InvokeID, id, script) },
		func() (int, string, bool) { return a.runKubeadmUpgrade(cmd.InvokeID, id, script) },
		func() (int, string, bool) { return a.runDrain(ctx, cmd.InvokeID, id, script) },
		func() (int, string, bool) { return a.runAcceptance(cmd.InvokeID, id, script) },
	} {
		if code, out, ok := run(); ok {
			return code, out, true
		}
	}
	return 0, "", false
}
