package provider_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/upload"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/core"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
)

const (
	bundleBucket = "pool-bundles"
	bundlePrefix = "gpucluster-bundles/train/" // the default key_prefix of pool "train"
	bundleRole   = "gpucluster-worker"
)

// bundlePool is a GPU worker pool whose bootstrap goes in a bundle; role "" leaves ram_role_name
// out; labels change the bundle's files.
func bundlePool(role, label string) string {
	roleLine := ""
	if role != "" {
		roleLine = fmt.Sprintf("ram_role_name = %q", role)
	}
	return poolNetworkConfig("") + fmt.Sprintf(`
resource "gpucluster_node_pool" "train" {
  name          = "train"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  size          = 1
  %s
  bootstrap_bundle = { bucket = %q }
  user_data = "#cloud-config\nruncmd:\n  - echo users-own-part\n"
  kubernetes = {
    api_endpoint                  = "10.20.0.200:6443"
    join_token                    = %q
    insecure_skip_ca_verification = true
    labels                        = { "example.org/team" = %q }
  }
}
`, roleLine, bundleBucket, testJoinToken, label)
}

// bundleClient is the account owner's client of the emulator, as the modules would set the bucket
// up: the bucket and a policy that lets bundleRole's sessions read the pools' bundles.
func bundleClient(t *testing.T, emu *acctest.Emulator) *cloud.Client {
	t.Helper()
	c, err := cloud.New(context.Background(), cloud.Config{Region: acctest.Region, Endpoint: emu.URL, UserAgent: "gpucluster-acctest/0",
		Credentials: cloud.Credentials{AccessKeyID: acctest.AccessKey, AccessKeySecret: acctest.SecretKey}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func makeBundleBucket(t *testing.T, c *cloud.Client) {
	t.Helper()
	ctx := context.Background()
	if err := c.CreateBucket(ctx, cloud.BucketInput{Name: bundleBucket}); err != nil {
		t.Fatal(err)
	}
	policy := `{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:GetObject"],` +
		`"Principal":["arn:sts::` + core.AccountID + `:assumed-role/` + bundleRole + `/*"],"Resource":["acs:oss:*:*:` + bundleBucket + `/gpucluster-bundles/*"]}]}`
	if err := c.PutBucketPolicy(ctx, bundleBucket, policy); err != nil {
		t.Fatal(err)
	}
}

// nodeUserData is the user data ECS holds for the pool's first node, decoded.
func nodeUserData(emu *acctest.Emulator, s *terraform.State) (id, doc string, err error) {
	id = s.RootModule().Resources["gpucluster_node_pool.train"].Primary.Attributes["nodes.0.id"]
	req := ecs.CreateDescribeUserDataRequest()
	req.RegionId, req.InstanceId = acctest.Region, id
	resp, err := emulatorECS(emu).DescribeUserData(req)
	if err != nil {
		return id, "", err
	}
	raw, err := base64.StdEncoding.DecodeString(resp.UserData)
	if err != nil {
		return id, "", err
	}
	doc, err = bootstrap.UnpackUserData(string(raw))
	return id, doc, err
}

// checkStubbed: the node's user data is the stub (at most 4 KiB before the user's part) and the
// user's part, naming one of the bundles in the bucket under the pool's prefix, of which there
// are bundles; the user data holds no join token or PEM block; the bundle's digest is its key's
// and it holds the join token.
func checkStubbed(emu *acctest.Emulator, c *cloud.Client, bundles int) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, doc, err := nodeUserData(emu, s)
		if err != nil {
			return fmt.Errorf("user data of %s: %w", id, err)
		}
		if strings.Contains(doc, testJoinToken) || strings.Contains(doc, "BEGIN") {
			return fmt.Errorf("node %s's user data carries the join token or a PEM block", id)
		}
		if !strings.Contains(doc, bundle.FetchScriptPath) || !strings.Contains(doc, "users-own-part") {
			return fmt.Errorf("node %s's user data is not the stub and the user's part:\n%.1500s", id, doc)
		}
		ctx := context.Background()
		versions, err := c.ListObjectVersions(ctx, bundleBucket, 0)
		if err != nil {
			return err
		}
		named := upload.NamedIn(doc, strings.TrimSuffix(bundlePrefix, "/"))
		if len(versions) != bundles || len(named) != 1 || !slices.ContainsFunc(versions, func(v cloud.ObjectVersion) bool { return v.Key == named[0] }) {
			return fmt.Errorf("the bucket holds %v, want %d bundles under %s, one of them %v, the one the node names", versions, bundles, bundlePrefix, named)
		}
		key := named[0]
		digest := bundle.DigestPrefix + strings.TrimSuffix(strings.TrimPrefix(key, bundlePrefix), ".tar.gz")
		stub := stubPart(doc)
		if len(stub) > bundle.MaxStubBytes || !strings.Contains(stub, key) || !strings.Contains(stub, digest) || !strings.Contains(stub, bundleRole) && !strings.Contains(stub, "gpucluster-other") {
			return fmt.Errorf("the stub (%d bytes) does not name %s and its digest, or is over %d bytes", len(stub), key, bundle.MaxStubBytes)
		}
		var archive []byte
		err = c.OSS(ctx, "GetObject", func(ctx context.Context, cl *oss.Client) error {
			res, err := cl.GetObject(ctx, &oss.GetObjectRequest{Bucket: oss.Ptr(bundleBucket), Key: oss.Ptr(key)})
			if err == nil {
				defer func() { _ = res.Body.Close() }()
				archive = make([]byte, res.ContentLength)
				_, err = io.ReadFull(res.Body, archive)
			}
			return err
		})
		if err != nil {
			return err
		}
		files, err := bundle.Unpack(archive, digest)
		if err != nil {
			return fmt.Errorf("bundle %s: %w", key, err)
		}
		if !strings.Contains(string(files[bootstrap.KubeadmPath].Content), testJoinToken) {
			return fmt.Errorf("bundle %s has no kubeadm join configuration with the token", key)
		}
		return nil
	}
}

// stubPart is the first part of a merged user data document: the stub's #cloud-config.
func stubPart(doc string) string {
	if strings.HasPrefix(doc, "#cloud-config\n") {
		return doc
	}
	i := strings.Index(doc, "#cloud-config\n")
	if i < 0 {
		return doc
	}
	rest := doc[i:]
	if j := strings.Index(rest, "\n--"); j >= 0 {
		rest = rest[:j+1]
	}
	return rest
}

// checkAgent runs a node agent round over the emulator, its OSS read as the instances' roles
// would read it, and wants the pool's node's fetch to end as want says: "" for a node played
// from its bundle (its status names its role and no bundle failure; it still does not join, as
// no API server answers at the pool's endpoint), else the reason and console the fetch gives.
func checkAgent(emu *acctest.Emulator, want string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id := s.RootModule().Resources["gpucluster_node_pool.train"].Primary.Attributes["nodes.0.id"]
		a := nodeagent.New(emu.View, nopKube{}, nil)
		a.ReadObjectsWith(emu.ReadObjectAsInstance)
		consoles := map[string]string{}
		a.WriteConsoles(func(id, out string) { consoles[id] = out })
		a.Sync(context.Background())
		var st nodeagent.NodeStatus
		for _, x := range a.Statuses() {
			if x.InstanceID == id {
				st = x
			}
		}
		switch {
		case st.InstanceID == "":
			return fmt.Errorf("the agent says nothing of %s", id)
		case want == "" && (strings.Contains(st.Reason, "bootstrap bundle") || st.Role != nodeagent.RoleWorker):
			return fmt.Errorf("node %s was not played from its bundle: %+v", id, st)
		case want != "" && (!strings.Contains(st.Reason, want) || !strings.Contains(consoles[id], "gpucluster-bundle: giving up") || st.Node != ""):
			return fmt.Errorf("node %s: %+v, console %q; want it refused for %q", id, st, consoles[id], want)
		}
		return nil
	}
}

// A pool with bootstrap_bundle: refused at plan without a role; with one, the bundle is in the
// bucket before the node runs, the node's user data is the stub and the user's part and holds no
// secret, and the node agent plays the node from the bundle it fetches as the instance's role; a
// change of the files that replaces no node keeps the bundle the node names, a change that
// replaces it prunes the older one; a role the bucket policy does not name gets its node refused
// by the agent (AccessDenied); destroy leaves no bundle.
func TestAccNodePool_bootstrapBundle(t *testing.T) {
	emu := acctest.StartEmulator(t)
	c := bundleClient(t, emu)
	makeBundleBucket(t, c)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy: func(s *terraform.State) error {
			versions, err := c.ListObjectVersions(context.Background(), bundleBucket, 0)
			if err != nil || len(versions) != 0 {
				return fmt.Errorf("after destroy the bucket holds %v (%v), want no bundle", versions, err)
			}
			if err := c.DeleteBucket(context.Background(), bundleBucket); err != nil {
				return err
			}
			return checkNothingLeft(emu)(s)
		},
		Steps: []resource.TestStep{
			{
				Config: emu.Config() + bundlePool("", "a"), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)bootstrap_bundle needs ram_role_name.*"pool-bundles".*Fix: set\s+ram_role_name`),
			},
			{Config: emu.Config() + bundlePool(bundleRole, "a"), Check: resource.ComposeTestCheckFunc(checkStubbed(emu, c, 1), checkAgent(emu, ""))},
			// New labels are new files, so a new bundle, but no new node: the node keeps the stub
			// of the first bundle, which stays.
			{Config: emu.Config() + bundlePool(bundleRole, "b"), Check: resource.ComposeTestCheckFunc(checkStubbed(emu, c, 2), checkAgent(emu, ""))},
			// A new role replaces the node: the first bundle is named no more and goes.
			{Config: emu.Config() + bundlePool("gpucluster-other", "b"), Check: resource.ComposeTestCheckFunc(checkStubbed(emu, c, 1), checkAgent(emu, "AccessDenied"))},
		},
	})
}

// nopKube is an API server that takes every node: the test reads the agent's statuses.
type nopKube struct{}

func (nopKube) RegisterNode(context.Context, *corev1.Node) error                       { return nil }
func (nopKube) DeleteNode(context.Context, string) error                               { return nil }
func (nopKube) SetKubeletRunning(context.Context, string, bool) error                  { return nil }
func (nopKube) ApplyAddons(context.Context, []nodeagent.Addon) []nodeagent.AddonResult { return nil }
func (nopKube) ShutdownNode(context.Context, string, nodeagent.ShutdownSettings) (nodeagent.ShutdownReport, error) {
	return nodeagent.ShutdownReport{}, nil
}
func (nopKube) PodsRunningOn(context.Context, string) ([]string, error) { return nil, nil }
func (nopKube) SetUnschedulable(context.Context, string, bool) error    { return nil }
func (nopKube) DrainablePods(context.Context, string) ([]string, error) { return nil, nil }
func (nopKube) Evict(context.Context, string) error                     { return nil }

// withBundleAttr adds attr (HCL) to bundlePool's bootstrap_bundle.
func withBundleAttr(cfg, attr string) string {
	return strings.Replace(cfg, fmt.Sprintf("bootstrap_bundle = { bucket = %q }", bundleBucket),
		fmt.Sprintf("bootstrap_bundle = { bucket = %q, %s }", bundleBucket, attr), 1)
}

// checkBundleReadsStoredToken: the node's bundle holds no join token, and its script reads the
// stored one from key before kubeadm join.
func checkBundleReadsStoredToken(emu *acctest.Emulator, c *cloud.Client, key string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		_, doc, err := nodeUserData(emu, s)
		if err != nil {
			return err
		}
		named := upload.NamedIn(doc, strings.TrimSuffix(bundlePrefix, "/"))
		if len(named) != 1 {
			return fmt.Errorf("the user data names bundles %v, want one", named)
		}
		var archive []byte
		err = c.OSS(context.Background(), "GetObject", func(ctx context.Context, cl *oss.Client) error {
			res, err := cl.GetObject(ctx, &oss.GetObjectRequest{Bucket: oss.Ptr(bundleBucket), Key: oss.Ptr(named[0])})
			if err == nil {
				defer func() { _ = res.Body.Close() }()
				archive, err = io.ReadAll(res.Body)
			}
			return err
		})
		if err != nil {
			return err
		}
		files, err := bundle.Unpack(archive, bundle.DigestPrefix+strings.TrimSuffix(strings.TrimPrefix(named[0], bundlePrefix), ".tar.gz"))
		if err != nil {
			return err
		}
		for path, f := range files {
			if strings.Contains(string(f.Content), testJoinToken) {
				return fmt.Errorf("the bundle's %s holds the join token", path)
			}
		}
		script, err := bootstrap.UnpackUserData(string(files[bootstrap.ScriptPath].Content))
		if err != nil || !strings.Contains(script, "get ") || !strings.Contains(script, " "+key+" ") || !strings.Contains(script, "stored_token "+bootstrap.KubeadmPath) {
			return fmt.Errorf("the bundle's script does not read the stored token at %s (%v)", key, err)
		}
		return nil
	}
}

// A worker pool with bootstrap_bundle.join_token_key: its bundle holds no join token and its
// script reads the stored one; publish_join_token_keys and etcd_backup, a control plane's, are
// refused at plan on a worker pool, naming the attribute.
func TestAccNodePool_joinTokenKey(t *testing.T) {
	emu := acctest.StartEmulator(t)
	c := bundleClient(t, emu)
	makeBundleBucket(t, c)
	const key = "gpucluster-bundles/train/join-token"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{
			{
				Config: emu.Config() + withBundleAttr(bundlePool(bundleRole, "a"), `publish_join_token_keys = ["`+key+`"]`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)bootstrap_bundle.publish_join_token_keys.*only for control-plane nodes`),
			},
			{
				// etcd snapshots are a control plane's (issue #34).
				Config: emu.Config() + withBundleAttr(bundlePool(bundleRole, "a"), `etcd_backup = { key_prefix = "etcd-snapshots/a" }`), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)bootstrap_bundle.etcd_backup "etcd-snapshots/a" is only for control-plane\s+nodes`),
			},
			{
				// The control plane's size is for control-plane pools only (issue #31).
				Config: emu.Config() + strings.Replace(bundlePool(bundleRole, "a"), "insecure_skip_ca_verification = true",
					"insecure_skip_ca_verification = true\n    control_plane_size = 3", 1), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)kubernetes.control_plane_size.*only for control-plane nodes`),
			},
			{Config: emu.Config() + withBundleAttr(bundlePool(bundleRole, "a"), `join_token_key = "`+key+`"`),
				Check: checkBundleReadsStoredToken(emu, c, key)},
		},
	})
}
