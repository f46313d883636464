package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/upload"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// bootstrapBucketConfig is a bootstrap bucket named bundleBucket with readers (HCL list
// elements), and, withPool, the bundle pool of TestAccNodePool_bootstrapBundle (role
// bundleRole, default prefix gpucluster-bundles/train) putting its bundle in it.
func bootstrapBucketConfig(readers string, withPool bool) string {
	cfg := fmt.Sprintf(`
resource "gpucluster_bootstrap_bucket" "b" {
  name    = %q
  readers = [%s]
}
`, bundleBucket, readers)
	if withPool {
		cfg += strings.Replace(bundlePool(bundleRole, "a"), fmt.Sprintf("bucket = %q", bundleBucket), "bucket = gpucluster_bootstrap_bucket.b.id", 1)
	}
	return cfg
}

// withWriters lets the control-plane role write the join token under the swapped readers' prefix,
// and expires the etcd snapshots after 30 days.
func withWriters(cfg string) string {
	return strings.Replace(cfg, "  readers = [", `  writers = [{ key = "gpucluster-bundles/else/join-token", ram_role_name = "gpucluster-cp" }]
  expirations = [{ key_prefix = "etcd-snapshots/train", days = 30 }]
  readers = [`, 1)
}

// checkSnapshotExpiry: OSS holds the expiration as one lifecycle rule on the prefix, for current
// and noncurrent versions.
func checkSnapshotExpiry(c *cloud.Client) resource.TestCheckFunc {
	return func(*terraform.State) error {
		rules, err := c.PrefixExpiries(context.Background(), bundleBucket)
		if err != nil || len(rules) != 1 || rules[0].Prefix != "etcd-snapshots/train/" || rules[0].Days != 30 {
			return fmt.Errorf("lifecycle rules %+v (%v); want one expiring etcd-snapshots/train/ after 30 days", rules, err)
		}
		return nil
	}
}

// checkBootstrapBucket: the bucket is private, versioned, public access blocked and KMS-encrypted.
func checkBootstrapBucket(c *cloud.Client) resource.TestCheckFunc {
	return func(*terraform.State) error {
		b, err := c.FindBucket(context.Background(), bundleBucket)
		if err != nil {
			return err
		}
		if b.ACL != "private" || b.Versioning != "Enabled" || !b.BlockPublicAccess || b.SSEAlgorithm != "KMS" {
			return fmt.Errorf("bucket %s is %+v, want private, versioned, public access blocked, KMS", bundleBucket, *b)
		}
		return nil
	}
}

// checkBundleKeyNamed: the pool's bootstrap_bundle_key is the one bundle its node's user data names.
func checkBundleKeyNamed(emu *acctest.Emulator) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, doc, err := nodeUserData(emu, s)
		if err != nil {
			return err
		}
		key := s.RootModule().Resources["gpucluster_node_pool.train"].Primary.Attributes["bootstrap_bundle_key"]
		if named := upload.NamedIn(doc, strings.TrimSuffix(bundlePrefix, "/")); len(named) != 1 || named[0] != key {
			return fmt.Errorf("bootstrap_bundle_key = %q, but node %s's user data names %v", key, id, named)
		}
		return nil
	}
}

// A bootstrap bucket: overlapping readers are refused at plan; made private, versioned and
// KMS-encrypted with a policy that lets the pool's role read its prefix, the pool's node is
// played from its bundle; readers changed in place so that the pool's role reads another prefix
// only, the node's fetch is refused (AccessDenied); import reads the readers back from the
// policy; destroy leaves no bucket and nothing else.
func TestAccBootstrapBucket_readers(t *testing.T) {
	emu := acctest.StartEmulator(t)
	c := bundleClient(t, emu)
	own := fmt.Sprintf(`{ key_prefix = "gpucluster-bundles/train", ram_role_name = %q }`, bundleRole)
	swapped := fmt.Sprintf(`{ key_prefix = "gpucluster-bundles/train", ram_role_name = "gpucluster-other" },
    { key_prefix = "gpucluster-bundles/else", ram_role_name = %q }`, bundleRole)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy: func(s *terraform.State) error {
			if _, err := c.FindBucket(context.Background(), bundleBucket); !cloud.IsNotFound(err) {
				return fmt.Errorf("after destroy bucket %s is still there (%v)", bundleBucket, err)
			}
			return checkNothingLeft(emu)(s)
		},
		Steps: []resource.TestStep{
			{
				Config:   emu.Config() + bootstrapBucketConfig(`{ key_prefix = "gpucluster-bundles", ram_role_name = "gpucluster-other" }, `+own, false),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Bootstrap bucket readers overlap.*"gpucluster-other".*"gpucluster-bundles".*` +
					`"gpucluster-bundles/train".*Fix:`),
			},
			{
				// An expiration inside a reader's prefix would delete bundles.
				Config: emu.Config() + strings.Replace(bootstrapBucketConfig(own, false), "  readers = [",
					`  expirations = [{ key_prefix = "gpucluster-bundles", days = 7 }]
  readers = [`, 1), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)expiration overlaps the bundles.*"gpucluster-bundles".*Fix:`),
			},
			{
				// A prefix writer (etcd snapshots) inside a reader's prefix could replace its bundles.
				Config: emu.Config() + strings.Replace(bootstrapBucketConfig(own, false), "  readers = [",
					`  writers = [{ key = "gpucluster-bundles/train/snapshots/*", ram_role_name = "gpucluster-cp" }]
  readers = [`, 1), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)writer overlaps the bundles.*"gpucluster-bundles/train/snapshots/\*".*Fix:`),
			},
			{
				Config: emu.Config() + bootstrapBucketConfig(own, true),
				Check: resource.ComposeTestCheckFunc(checkBootstrapBucket(c), checkStubbed(emu, c, 1), checkAgent(emu, ""),
					checkBundleKeyNamed(emu),
					resource.TestCheckResourceAttr("gpucluster_bootstrap_bucket.b", "encryption", "KMS"),
					resource.TestMatchResourceAttr("gpucluster_bootstrap_bucket.b", "policy",
						regexp.MustCompile(`assumed-role/`+bundleRole+`/\*"\],"Resource":\["acs:oss:\*:\d+:`+bundleBucket+`/gpucluster-bundles/train/\*"\]`))),
			},
			{
				Config: emu.Config() + withWriters(bootstrapBucketConfig(swapped, true)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_bootstrap_bucket.b", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeTestCheckFunc(checkBootstrapBucket(c), checkAgent(emu, "AccessDenied"), checkSnapshotExpiry(c),
					resource.TestCheckResourceAttr("gpucluster_bootstrap_bucket.b", "expirations.#", "1"),
					resource.TestCheckResourceAttr("gpucluster_bootstrap_bucket.b", "readers.#", "2"),
					// The control-plane role puts exactly the join token's key, nothing under a prefix.
					resource.TestCheckResourceAttr("gpucluster_bootstrap_bucket.b", "writers.#", "1"),
					resource.TestMatchResourceAttr("gpucluster_bootstrap_bucket.b", "policy",
						regexp.MustCompile(`"Action":\["oss:PutObject"\],"Principal":\["arn:sts::\d+:assumed-role/gpucluster-cp/\*"\],"Resource":\["acs:oss:\*:\d+:`+bundleBucket+`/gpucluster-bundles/else/join-token"\]`))),
			},
			// Public access unblocked outside Terraform: the plan shows it, the apply blocks it again.
			{
				PreConfig: func() {
					err := c.OSS(context.Background(), "PutBucketPublicAccessBlock", func(ctx context.Context, cl *oss.Client) error {
						_, err := cl.PutBucketPublicAccessBlock(ctx, &oss.PutBucketPublicAccessBlockRequest{Bucket: oss.Ptr(bundleBucket),
							PublicAccessBlockConfiguration: &oss.PublicAccessBlockConfiguration{BlockPublicAccess: oss.Ptr(false)}})
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: emu.Config() + withWriters(bootstrapBucketConfig(swapped, true)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_bootstrap_bucket.b", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(checkBootstrapBucket(c), resource.TestCheckResourceAttr("gpucluster_bootstrap_bucket.b", "block_public_access", "true")),
			},
			{ResourceName: "gpucluster_bootstrap_bucket.b", ImportState: true, ImportStateVerify: true},
		},
	})
}
