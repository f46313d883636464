package clustertest

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
)

// The cluster's secrets, audited wherever a scenario's apply leaves something: every node's user
// data (none may hold one), every bootstrap bundle object in the emulator's OSS (each holds only
// what its node needs: the CA key only the first control-plane node's, the certificate key only
// the control-plane nodes'), the plan and the state (only in values marked sensitive), and the
// logs (the CLI's output, the node agent's log, the serial consoles). The secrets are read from
// the first control-plane node's bundle, where they reach the cluster, so the audit needs no
// knowledge of how the module derived or seeded them.

// The secrets by name.
const (
	caKey          = "CA key"
	tokenSecret    = "join token's secret"
	certificateKey = "certificate key"
)

var (
	tokenRE   = regexp.MustCompile(`token: "?[a-z0-9]{6}\.([a-z0-9]{16})"?`)
	certKeyRE = regexp.MustCompile(`certificateKey: "?([0-9a-f]{64})"?`)
)

// nodeBundle is one node's bootstrap bundle, read as the node reads it.
type nodeBundle struct {
	status   nodeagent.NodeStatus
	userData string // as ECS holds it, decompressed
	spec     bundle.StubSpec
	files    map[string]bundle.File
}

// text is every file of the bundle, for searching.
func (b nodeBundle) text() string {
	var sb strings.Builder
	for _, p := range slices.Sorted(maps.Keys(b.files)) {
		// A gzip-compressed file (the bootstrap script) is read as the node reads it.
		content, err := bootstrap.UnpackUserData(string(b.files[p].Content))
		if err != nil {
			content = string(b.files[p].Content)
		}
		sb.WriteString(p + "\n" + content + "\n")
	}
	return sb.String()
}

// secrets names the cluster's secrets: the CA key (a line of its PEM body), the certificate key
// and the join token's secret half, from the first control-plane node's bundle.
func secretsOf(t *testing.T, init nodeBundle) map[string]string {
	t.Helper()
	key, ok := init.files[bootstrap.CAKeyPath]
	if !ok {
		t.Fatalf("the first control-plane node's bundle (%s) writes no %s", init.spec.Key, bootstrap.CAKeyPath)
	}
	lines := strings.Split(string(key.Content), "\n")
	text := init.text()
	token, cert := tokenRE.FindStringSubmatch(text), certKeyRE.FindStringSubmatch(text)
	if len(lines) < 3 || token == nil || cert == nil {
		t.Fatalf("the first control-plane node's bundle lacks the CA key, the join token or the certificate key: the audit would look for nothing")
	}
	return map[string]string{caKey: lines[1], tokenSecret: token[1], certificateKey: cert[1]}
}

// found returns the names of the secrets s holds, sorted.
func found(secrets map[string]string, s string) []string {
	var out []string
	for name, v := range secrets {
		if strings.Contains(s, v) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// bundles reads every registered node's user data (ECS DescribeUserData, through the provider's
// client) and the bundle its stub names (as the node's RAM role, through the bucket policy).
func (s *stack) bundles(t *testing.T) []nodeBundle {
	t.Helper()
	c := s.client(t)
	var out []nodeBundle
	for _, st := range s.agent.Statuses() {
		if st.Node == "" {
			continue
		}
		raw, err := c.UserData(t.Context(), st.InstanceID)
		if err != nil {
			t.Fatalf("DescribeUserData %s: %v", st.InstanceID, err)
		}
		doc, err := bootstrap.UnpackUserData(raw)
		if err != nil {
			t.Fatalf("the user data of %s: %v", st.InstanceID, err)
		}
		ci, err := nodeagent.DecodeUserData(base64.StdEncoding.EncodeToString([]byte(raw)))
		if err != nil || ci.Bundle == nil {
			t.Fatalf("node %s: the user data is not a bundle stub (%v)", st.Node, err)
		}
		archive, err := s.emu.ReadObjectAsInstance(st.InstanceID, ci.Bundle.RoleName, ci.Bundle.Bucket, ci.Bundle.Key)
		if err != nil {
			t.Fatalf("node %s reads its bundle %s/%s: %v", st.Node, ci.Bundle.Bucket, ci.Bundle.Key, err)
		}
		files, err := bundle.Unpack(archive, ci.Bundle.Digest)
		if err != nil {
			t.Fatalf("node %s: bundle %s: %v", st.Node, ci.Bundle.Key, err)
		}
		out = append(out, nodeBundle{status: st, userData: doc, spec: *ci.Bundle, files: files})
	}
	if len(out) == 0 {
		t.Fatal("the node agent registered no node: no bundle to audit")
	}
	return out
}

// auditSecrets is the audit above, after the scenario's apply.
func (s *stack) auditSecrets(t *testing.T, nodes []nodeBundle) {
	t.Helper()
	var secrets map[string]string
	for _, b := range nodes {
		if b.status.Role == nodeagent.RoleInit {
			secrets = secretsOf(t, b)
		}
	}
	if secrets == nil {
		t.Fatal("no node ran kubeadm init: no secrets to audit for")
	}
	s.secrets = secrets
	for _, b := range nodes {
		if f := found(secrets, b.userData); len(f) > 0 {
			t.Errorf("node %s: the user data holds %v", b.status.Node, f)
		}
		// What each node's bundle may hold: its role's secrets and no other.
		allowed := map[string]bool{tokenSecret: true}
		switch b.status.Role {
		case nodeagent.RoleInit:
			allowed[caKey], allowed[certificateKey] = true, true
		case nodeagent.RoleControlPlane:
			allowed[certificateKey] = true
		}
		for _, name := range found(secrets, b.text()) {
			if !allowed[name] {
				t.Errorf("node %s (%s): its bundle %s holds the %s", b.status.Node, b.status.Role, b.spec.Key, name)
			}
		}
	}
	s.auditBucket(t, nodes)
	s.auditPlanAndState(t, secrets)
	for where, text := range map[string]string{"the CLI's output": s.cliLog.String(), "the node agent's log": s.agentLog()} {
		if f := found(secrets, text); len(f) > 0 {
			t.Errorf("%s holds %v", where, f)
		}
	}
	_, consoles := s.consoles(t)
	for id, out := range consoles {
		if f := found(secrets, out); len(f) > 0 {
			t.Errorf("the console of %s holds %v", id, f)
		}
	}
}

// bootstrapTokenRE is a join-token object's whole content: one kubeadm bootstrap token.
var bootstrapTokenRE = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}\n?$`)

// auditBucket: the bundle bucket holds no object the nodes' stubs do not name, so every object
// in it was audited above, except the join-token objects the control plane stores, each named by
// a node's bundle and holding one bootstrap token (with a node that reads one, there is one), and
// the etcd snapshots, which hold every Secret and are audited as such (auditSnapshot).
func (s *stack) auditBucket(t *testing.T, nodes []nodeBundle) {
	t.Helper()
	named := map[string]bool{}
	for _, b := range nodes {
		named[b.spec.Key] = true
	}
	keys, err := s.client(t).ObjectKeysUnder(t.Context(), nodes[0].spec.Bucket, "")
	if err != nil {
		t.Fatalf("listing %s: %v", nodes[0].spec.Bucket, err)
	}
	tokens := 0
	for _, k := range keys {
		if named[k] {
			continue
		}
		if s.auditSnapshot(t, nodes, k) {
			continue
		}
		// Not a bundle: it must be a join-token object (bootstrap_bundle.join_token_key) a node's
		// bundle reads, holding one bootstrap token and nothing else, read as that node's role.
		// Read as a node that gets it (the control plane only puts it: its role writes the key and
		// cannot read it), whatever order the nodes came in.
		reader := slices.IndexFunc(nodes, func(b nodeBundle) bool { return readsObject(b.text(), k) })
		if reader < 0 {
			reader = slices.IndexFunc(nodes, func(b nodeBundle) bool { return strings.Contains(b.text(), k) })
		}
		if reader < 0 {
			t.Errorf("bucket %s holds %s, which no node's stub or bundle names: not audited", nodes[0].spec.Bucket, k)
			continue
		}
		b := nodes[reader]
		body, err := s.emu.ReadObjectAsInstance(b.status.InstanceID, b.spec.RoleName, b.spec.Bucket, k)
		if err != nil {
			t.Errorf("node %s reads the join-token object %s it names: %v", b.status.Node, k, err)
			continue
		}
		if !bootstrapTokenRE.Match(body) {
			t.Errorf("the join-token object %s holds something other than one bootstrap token (%d bytes)", k, len(body))
		}
		tokens++
	}
	// A node that reads a stored token (bootstrap's stored_token) found one to join with: the
	// audit above saw it, or it looked at nothing.
	if readers := slices.IndexFunc(nodes, func(b nodeBundle) bool { return strings.Contains(b.text(), bootstrap.FetchScriptPath+" get ") }); readers >= 0 && tokens == 0 {
		t.Errorf("node %s reads a stored join token, but bucket %s holds no join-token object: nothing was audited", nodes[readers].status.Node, nodes[0].spec.Bucket)
	}
	t.Logf("bundle bucket %s: %d objects, %d of them join-token objects, every one a node's", nodes[0].spec.Bucket, len(keys), tokens)
}

// auditPlanAndState: in the plan the apply ran (tofu show -json of the saved plan) and in the
// state after it (tofu show -json), a secret may sit only in a value marked sensitive.
func (s *stack) auditPlanAndState(t *testing.T, secrets map[string]string) {
	t.Helper()
	if s.planJSON == "" || s.stateJSON == "" {
		t.Fatal("no plan or state was saved: the audit would prove nothing")
	}
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				After          any `json:"after"`
				AfterSensitive any `json:"after_sensitive"`
			} `json:"change"`
		} `json:"resource_changes"`
		OutputChanges map[string]struct {
			After          any `json:"after"`
			AfterSensitive any `json:"after_sensitive"`
		} `json:"output_changes"`
	}
	if err := json.Unmarshal([]byte(s.planJSON), &plan); err != nil {
		t.Fatal(err)
	}
	find := func(v string) []string { return found(secrets, v) }
	var leaks []string
	for _, rc := range plan.ResourceChanges {
		leaks = append(leaks, acctest.Unmarked(find, "plan "+rc.Address, rc.Change.After, rc.Change.AfterSensitive)...)
	}
	for name, oc := range plan.OutputChanges {
		leaks = append(leaks, acctest.Unmarked(find, "plan output."+name, oc.After, oc.AfterSensitive)...)
	}
	var state struct {
		Values struct {
			RootModule stateModule `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(s.stateJSON), &state); err != nil {
		t.Fatal(err)
	}
	resources := 0
	var walk func(m stateModule)
	walk = func(m stateModule) {
		for _, r := range m.Resources {
			resources++
			leaks = append(leaks, acctest.Unmarked(find, "state "+r.Address, r.Values, r.Sensitive)...)
		}
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	walk(state.Values.RootModule)
	if len(plan.ResourceChanges) == 0 || resources == 0 {
		t.Fatalf("the plan has %d resource changes and the state %d resources: the audit would prove nothing", len(plan.ResourceChanges), resources)
	}
	for _, l := range leaks {
		t.Error(l)
	}
}

type stateModule struct {
	Resources []struct {
		Address   string `json:"address"`
		Values    any    `json:"values"`
		Sensitive any    `json:"sensitive_values"`
	} `json:"resources"`
	ChildModules []stateModule `json:"child_modules"`
}

// readsObject says whether a node's bundle gets key with the fetch script (a line that runs its
// get and names the key).
func readsObject(bundle, key string) bool {
	for _, line := range strings.Split(bundle, "\n") {
		if strings.Contains(line, bootstrap.FetchScriptPath+" get ") && strings.Contains(line, key) {
			return true
		}
	}
	return false
}
