package provider_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/sts"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
)

// secretSet names the secrets of one run, so a finding says which one leaked.
type secretSet map[string]string

// find returns the names of the secrets s contains.
func (ss secretSet) find(s string) []string {
	var out []string
	for name, secret := range ss {
		if secret != "" && strings.Contains(s, secret) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// leaks reports every place a secret of ss sits in value where mask leaves it unmarked
// (acctest.Unmarked).
func leaks(ss secretSet, where string, value, mask any) []string {
	return acctest.Unmarked(ss.find, where, value, mask)
}

func rawMask(raw json.RawMessage) any {
	var m any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

func moduleLeaks(ss secretSet, where string, mod *tfjson.StateModule) []string {
	if mod == nil {
		return nil
	}
	var out []string
	for _, r := range mod.Resources {
		out = append(out, leaks(ss, where+r.Address, r.AttributeValues, rawMask(r.SensitiveValues))...)
	}
	for _, child := range mod.ChildModules {
		out = append(out, moduleLeaks(ss, where, child)...)
	}
	return out
}

func stateLeaks(ss secretSet, where string, st *tfjson.State) []string {
	if st == nil || st.Values == nil {
		return nil
	}
	out := moduleLeaks(ss, where, st.Values.RootModule)
	for name, o := range st.Values.Outputs {
		if !o.Sensitive {
			out = append(out, leaks(ss, where+"output."+name, o.Value, nil)...)
		}
	}
	return out
}

// noSecretsInPlan checks the plan OpenTofu renders as JSON: every resource change before and
// after, every output change, the planned values and the prior state. Values marked sensitive
// may hold a secret; nothing else may. Variables may hold one only when declared sensitive.
type noSecretsInPlan struct{ secrets secretSet }

func (c noSecretsInPlan) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	p := req.Plan
	var found []string
	for _, rc := range p.ResourceChanges {
		if rc.Change == nil {
			continue
		}
		found = append(found, leaks(c.secrets, "plan "+rc.Address+" (before)", rc.Change.Before, rc.Change.BeforeSensitive)...)
		found = append(found, leaks(c.secrets, "plan "+rc.Address+" (after)", rc.Change.After, rc.Change.AfterSensitive)...)
	}
	for name, oc := range p.OutputChanges {
		found = append(found, leaks(c.secrets, "plan output."+name, oc.After, oc.AfterSensitive)...)
	}
	if p.PlannedValues != nil {
		found = append(found, stateLeaks(c.secrets, "planned ", &tfjson.State{Values: p.PlannedValues})...)
	}
	found = append(found, stateLeaks(c.secrets, "prior state ", p.PriorState)...)
	sensitiveVar := map[string]bool{}
	if p.Config != nil && p.Config.RootModule != nil {
		for name, v := range p.Config.RootModule.Variables {
			sensitiveVar[name] = v.Sensitive
		}
	}
	for name, v := range p.Variables {
		if !sensitiveVar[name] {
			found = append(found, leaks(c.secrets, "plan var."+name, v.Value, nil)...)
		}
	}
	if len(found) > 0 {
		resp.Error = fmt.Errorf("secrets outside sensitive values of the plan:\n  %s", strings.Join(found, "\n  "))
	}
}

// noSecretsInState checks every attribute of every resource and data source in the state, and
// every output, against the state's own sensitivity marks.
type noSecretsInState struct{ secrets secretSet }

func (c noSecretsInState) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if found := stateLeaks(c.secrets, "state ", req.State); len(found) > 0 {
		resp.Error = fmt.Errorf("secrets outside sensitive values of the state:\n  %s", strings.Join(found, "\n  "))
	}
}

// sensitiveHolds proves the checks look at real data: the token is where it belongs (the
// pools' kubernetes.join_token and the bootstrap's cloud_init), just marked sensitive.
type sensitiveHolds struct {
	address, attribute, secret string
}

func (c sensitiveHolds) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.address {
			continue
		}
		b, _ := json.Marshal(r.AttributeValues[c.attribute])
		if !strings.Contains(string(b), c.secret) {
			resp.Error = fmt.Errorf("%s.%s does not hold the join token: the audit would prove nothing", c.address, c.attribute)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the state", c.address)
}

// caKeyHeld proves the CA key audit looks at real data: the pool's kubernetes.ca_key_pem is the
// CA's private key, and the pool's kubernetes block is marked sensitive there.
type caKeyHeld struct{ pool, ca string }

func (c caKeyHeld) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	values := map[string]map[string]any{}
	masks := map[string]any{}
	for _, r := range req.State.Values.RootModule.Resources {
		values[r.Address] = r.AttributeValues
		masks[r.Address] = rawMask(r.SensitiveValues)
	}
	key, _ := values[c.ca]["private_key_pem"].(string)
	k8s, _ := values[c.pool]["kubernetes"].(map[string]any)
	if key == "" || k8s == nil || k8s["ca_key_pem"] != key {
		resp.Error = fmt.Errorf("%s.kubernetes.ca_key_pem is not %s.private_key_pem: the CA key audit would prove nothing", c.pool, c.ca)
		return
	}
	mask, _ := masks[c.pool].(map[string]any)
	if km, _ := mask["kubernetes"].(map[string]any); km == nil || km["ca_key_pem"] != true {
		resp.Error = fmt.Errorf("%s.kubernetes.ca_key_pem is not marked sensitive", c.pool)
	}
}

// capturedCA adds the secrets a random-key gpucluster_cluster_ca made at apply to the audit's
// set, so the checks after it (state, post-apply plans, the log) look for them too. It fails
// unless all three are there, marked sensitive: an audit of nothing would pass.
type capturedCA struct {
	address string
	secrets secretSet
}

func (c capturedCA) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.address {
			continue
		}
		mask, _ := rawMask(r.SensitiveValues).(map[string]any)
		for _, attr := range []string{"private_key_pem", "certificate_key", "join_token"} {
			v, _ := r.AttributeValues[attr].(string)
			if v == "" || mask[attr] != true {
				resp.Error = fmt.Errorf("%s.%s is empty or not marked sensitive", c.address, attr)
				return
			}
			c.secrets["random CA's "+attr] = v
		}
		c.secrets["random CA's join token's secret half"] = r.AttributeValues["join_token"].(string)[7:]
		addKeyLines(c.secrets, "random CA's private key", r.AttributeValues["private_key_pem"].(string))
		return
	}
	resp.Error = fmt.Errorf("%s is not in the state", c.address)
}

// addKeyLines adds each base64 line of a PEM key: the log and JSON documents escape a PEM's line
// breaks, so the whole PEM would never match there even when it leaked.
func addKeyLines(ss secretSet, name, keyPEM string) {
	for i, line := range strings.Split(keyPEM, "\n") {
		if len(line) >= 40 && !strings.HasPrefix(line, "-----") {
			ss[fmt.Sprintf("%s (line %d)", name, i)] = line
		}
	}
}

// absentFrom fails when any of the secrets is anywhere in doc (a state or a plan) once encoded,
// sensitive or not: what is derived from a write-only seed or opened ephemerally must not be
// stored at all.
func absentFrom(ss secretSet, what string, doc any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if found := ss.find(string(b)); len(found) > 0 {
		return fmt.Errorf("in the %s, though never to be stored: %s", what, strings.Join(found, ", "))
	}
	return nil
}

type absentFromState struct{ secrets secretSet }

func (c absentFromState) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = absentFrom(c.secrets, "state", req.State)
}

type absentFromPlan struct{ secrets secretSet }

func (c absentFromPlan) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = absentFrom(c.secrets, "plan", req.Plan)
}

// seededCASecrets are the secrets a seed derives, which only the ephemeral resource may return.
func seededCASecrets(ca acctest.SeededCA) secretSet {
	ss := secretSet{
		"CA seed":                              ca.Seed,
		"seeded CA's certificate key":          ca.CertificateKey,
		"seeded CA's join token":               ca.JoinToken,
		"seeded CA's join token's secret half": ca.JoinToken[7:],
	}
	addKeyLines(ss, "seeded CA's private key", ca.KeyPEM)
	return ss
}

// randomToken is a kubeadm bootstrap token nobody else uses, so any match is this run's.
func randomToken(t *testing.T) string {
	t.Helper()
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 22)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:6]) + "." + string(b[6:])
}

// stsCredentials asks the emulator's STS for temporary credentials: a key, a secret and a
// security token, all three for the audit to look for.
func stsCredentials(t *testing.T, emu *acctest.Emulator) sts.Credentials {
	t.Helper()
	client, err := sts.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(emu.URL)
	client.Domain = u.Host
	client.GetConfig().Scheme = "HTTP"
	req := sts.CreateAssumeRoleRequest()
	req.RoleArn = "acs:ram::1234567890:role/gpu-research"
	req.RoleSessionName = "secrets-audit"
	out, err := client.AssumeRole(req)
	if err != nil {
		t.Fatalf("AssumeRole on the emulator: %v", err)
	}
	if out.Credentials.SecurityToken == "" || out.Credentials.AccessKeySecret == "" {
		t.Fatalf("AssumeRole returned no token or secret (request %s)", out.RequestId)
	}
	return out.Credentials
}

const secretsAuditConfig = `
variable "join_token" {
  type      = string
  sensitive = true
}

variable "ca_seed" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "gpucluster_cluster_ca" "random" {}

resource "gpucluster_cluster_ca" "seeded" {
  seed_wo         = var.ca_seed
  seed_wo_version = 1
}

ephemeral "gpucluster_cluster_ca" "seeded" {
  seed     = var.ca_seed
  cert_pem = gpucluster_cluster_ca.seeded.cert_pem
}

# The echo provider stores what it is given: here the ephemeral resource's public hash only, so the
# resource is opened (and its secrets pass through the provider and the CLI) in every run.
provider "echo" {
  data = ephemeral.gpucluster_cluster_ca.seeded.ca_cert_hash
}

resource "echo" "seeded_hash" {}

resource "gpucluster_rdma_network" "net" {
  name        = "audit-net"
  cidr_block  = "10.50.0.0/16"
  zone_ids    = ["cn-wulanchabu-a"]
  admin_cidrs = ["10.99.0.0/24"]
}

resource "gpucluster_node_pool" "control" {
  name          = "control"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  instance_type = "ecs.g7.2xlarge"
  size          = 1
  kubernetes = {
    role       = "control_plane"
    join_token = var.join_token
    pod_subnet = "10.244.0.0/16"
    # The provider-made CA goes to the first control-plane node: its key and the certificate
    # key are audited like the token.
    ca_cert_pem     = gpucluster_cluster_ca.random.cert_pem
    ca_key_pem      = gpucluster_cluster_ca.random.private_key_pem
    ca_cert_hash    = gpucluster_cluster_ca.random.ca_cert_hash
    certificate_key = gpucluster_cluster_ca.random.certificate_key
    api_endpoint    = "10.50.0.10:6443"
  }
}

resource "gpucluster_node_pool" "workers" {
  name          = "workers"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  size          = 2
  user_data     = "#!/bin/bash\necho audit\n"
  kubernetes = {
    api_endpoint = "${gpucluster_node_pool.control.nodes[0].private_ip}:6443"
    join_token   = var.join_token
    ca_cert_hash = gpucluster_cluster_ca.random.ca_cert_hash
  }
}

# An autoscaling pool: its join token travels in the scaling configuration's user data.
resource "gpucluster_node_pool" "burst" {
  name          = "burst"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  autoscaling   = { min_size = 1, max_size = 3 }
  kubernetes = {
    api_endpoint = "${gpucluster_node_pool.control.nodes[0].private_ip}:6443"
    join_token   = var.join_token
    ca_cert_hash = gpucluster_cluster_ca.random.ca_cert_hash
  }
}

# A pool whose bootstrap leaves its user data: its nodes' user data is a stub without the join
# token, which sits in the bundle. The bundle is in the cold tier's bucket, which has no policy:
# the emulator models no RAM policies, so a bucket policy (gpucluster_bootstrap_bucket's) would
# leave this run's own role, the provider's credentials, only what the policy grants it
# (TestAccBootstrapBucket_readers covers the policy).
resource "gpucluster_node_pool" "bundled" {
  name          = "bundled"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  size          = 1
  ram_role_name = "audit-workers"
  bootstrap_bundle = {
    bucket     = gpucluster_storage_tier.cold.bucket
    key_prefix = "gpucluster-bundles/bundled"
  }
  kubernetes = {
    api_endpoint = "${gpucluster_node_pool.control.nodes[0].private_ip}:6443"
    join_token   = var.join_token
    ca_cert_hash = gpucluster_cluster_ca.random.ca_cert_hash
  }
}

resource "gpucluster_storage_tier" "cold" {
  name          = "audit-cold-bucket"
  tier          = "cold"
  capacity_tib  = 1
  force_destroy = true
}

data "gpucluster_node_bootstrap" "worker" {
  role = "gpu_worker"
  kubernetes = {
    api_endpoint = "${gpucluster_node_pool.control.nodes[0].private_ip}:6443"
    join_token   = var.join_token
    ca_cert_hash = gpucluster_cluster_ca.random.ca_cert_hash
  }
}

output "worker_role" {
  value = data.gpucluster_node_bootstrap.worker.role
}

output "worker_nodes" {
  value = gpucluster_node_pool.workers.nodes
}
`

// noSecretsInUserData checks the user data of every node of the pool as ECS holds it (every process
// on a node can read it from the metadata service), decoded with every file it writes: none of
// the secrets, and the bundle stub's fetch script in their place.
func noSecretsInUserData(emu *acctest.Emulator, pool string, secrets secretSet) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		rs, ok := st.RootModule().Resources[pool]
		if !ok {
			return fmt.Errorf("%s is not in the state", pool)
		}
		ids := nodeIDs(rs.Primary.Attributes)
		if len(ids) == 0 {
			return fmt.Errorf("%s has no nodes: the user data audit would check nothing", pool)
		}
		for _, id := range ids {
			doc, err := userDataText(emu, id)
			if err != nil {
				return err
			}
			if found := secrets.find(doc); len(found) > 0 {
				return fmt.Errorf("the user data of %s (pool %s) holds the %s", id, pool, strings.Join(found, ", "))
			}
			if !strings.Contains(doc, bundle.FetchScriptPath) {
				return fmt.Errorf("the user data of %s (pool %s) is no bundle stub:\n%.2000s", id, pool, doc)
			}
		}
		return nil
	}
}

// nodeIDs are the ids in a node pool's nodes list, from its flat state attributes.
func nodeIDs(attrs map[string]string) []string {
	var ids []string
	for k, v := range attrs {
		if strings.HasPrefix(k, "nodes.") && strings.HasSuffix(k, ".id") {
			ids = append(ids, v)
		}
	}
	return ids
}

// TestAccSecretsAudit applies and destroys a cluster (network, control plane and worker pools
// joining with a kubeadm token, a cold storage tier, a bootstrap document, a cluster CA with a
// random key and one from a write-only seed opened through the ephemeral resource) with STS
// credentials and TF_LOG=TRACE, then looks for the secret key, the security token, the join
// token and the CAs' keys, certificate keys and tokens in the trace log, in the plan and in the
// state. They may sit only in values marked sensitive, and the seeded CA's nowhere at all.
func TestAccSecretsAudit(t *testing.T) {
	emu := acctest.StartEmulator(t)
	creds := stsCredentials(t, emu)
	token := randomToken(t)
	secrets := secretSet{
		"secret key":                  creds.AccessKeySecret,
		"security token":              creds.SecurityToken,
		"join token":                  token,
		"join token's secret half":    token[7:],
		"emulator's long-term secret": acctest.SecretKey,
	}
	// The seeded CA's secrets may not be anywhere but the ephemeral resource's result: not in
	// the log, the plan or the state, not even marked sensitive.
	seeded := seededCASecrets(acctest.NewSeededCA(t))
	for name, v := range seeded {
		secrets[name] = v
	}

	logFile := filepath.Join(t.TempDir(), "trace.log")
	t.Setenv("TF_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logFile)
	// Credentials from the environment, as CI hands them out; the token through a sensitive
	// variable. Written into the configuration, the testing framework's own trace of the
	// configuration would carry them, proving nothing about the provider.
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", creds.AccessKeyId)
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", creds.AccessKeySecret)
	t.Setenv("ALIBABA_CLOUD_SECURITY_TOKEN", creds.SecurityToken)
	t.Setenv("TF_VAR_join_token", token)
	t.Setenv("TF_VAR_ca_seed", seeded["CA seed"])
	config := envCredentialsProvider(emu.URL) + secretsAuditConfig

	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: withEcho(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{noSecretsInPlan{secrets}, absentFromPlan{seeded}},
					PostApplyPostRefresh: []plancheck.PlanCheck{noSecretsInPlan{secrets}, absentFromPlan{seeded}, plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					// First: the random CA's secrets join the set the later checks look for.
					capturedCA{"gpucluster_cluster_ca.random", secrets},
					noSecretsInState{secrets},
					absentFromState{seeded},
					sensitiveHolds{"gpucluster_node_pool.workers", "kubernetes", token},
					sensitiveHolds{"gpucluster_node_pool.control", "kubernetes", token},
					sensitiveHolds{"data.gpucluster_node_bootstrap.worker", "cloud_init", token},
					// The CA key is really in the first control-plane pool, marked sensitive.
					caKeyHeld{"gpucluster_node_pool.control", "gpucluster_cluster_ca.random"},
				},
				Check: noSecretsInUserData(emu, "gpucluster_node_pool.bundled", secrets),
			},
		},
	})

	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatalf("reading the captured log: %v", err)
	}
	log := string(data)
	// The log must be the real thing, apply and destroy: the provider's own API-call lines.
	for _, want := range []string{"alibaba cloud API call", "RunInstances", "PutBucket", "DeleteInstances", "DeleteVpc"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the captured TRACE log (%d bytes) lacks %q; the audit would prove nothing", len(data), want)
		}
	}
	for _, name := range secrets.find(log) {
		i := strings.Index(log, secrets[name])
		from, to := max(0, i-300), min(len(log), i+100)
		t.Errorf("the TRACE log contains the %s, first here:\n%s", name, log[from:to])
	}
	t.Logf("audited a %d-byte TRACE log, the plans and the state", len(data))
}
