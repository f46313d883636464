package provider_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	"github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	osscredentials "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss/credentials"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

const tierAddr = "gpucluster_storage_tier.test"

// tierNetwork is a one-zone gpucluster_rdma_network the file-system tiers mount into.
const tierNetwork = `
resource "gpucluster_rdma_network" "net" {
  name        = "storage-net"
  cidr_block  = "10.30.0.0/16"
  zone_ids    = ["cn-wulanchabu-a"]
  admin_cidrs = ["10.30.0.0/24"]
}
`

func tierConfig(emu *acctest.Emulator, body string) string {
	return emu.Config() + tierNetwork + "\nresource \"gpucluster_storage_tier\" \"test\" {\n" + body + "\n}\n"
}

func coldConfig(emu *acctest.Emulator, body string) string {
	return emu.Config() + "\nresource \"gpucluster_storage_tier\" \"test\" {\n" + body + "\n}\n"
}

// Attributes that live only in the configuration (or follow from it) and so cannot come back
// from an import.
var tierImportIgnore = []string{"network_id", "min_throughput_gbps", "min_iops", "cache", "force_destroy", "timeouts",
	"capacity_tib", "expected_throughput_gbps", "expected_iops", "sizing_notes", "data_disk_hint", "alluxio_properties",
	"provisioned_capacity_tib"}

// checkTiersDestroyed is the CheckDestroy of every test here: no file system, no bucket left.
func checkTiersDestroyed(emu *acctest.Emulator) func(*terraform.State) error {
	return func(*terraform.State) error {
		res := emu.Resources()
		if len(res.FileSystems) > 0 || len(res.Buckets) > 0 {
			return fmt.Errorf("left behind after destroy: file systems %v, buckets %v", res.FileSystems, res.Buckets)
		}
		return nil
	}
}

func nasClient(t *testing.T, emu *acctest.Emulator) *nas.Client {
	t.Helper()
	c, err := nas.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(emu.URL)
	c.Domain = u.Host
	c.GetConfig().Scheme = "HTTP"
	return c
}

func ossClient(emu *acctest.Emulator) *oss.Client {
	cfg := oss.LoadDefaultConfig().
		WithRegion(acctest.Region).
		WithEndpoint(emu.URL).
		WithUsePathStyle(true).
		WithDisableSSL(true).
		WithCredentialsProvider(osscredentials.NewStaticCredentialsProvider(acctest.AccessKey, acctest.SecretKey))
	return oss.NewClient(cfg)
}

// deleteFileSystemBehindTerraform removes every file system (mount targets first) with the SDK.
func deleteFileSystemBehindTerraform(t *testing.T, emu *acctest.Emulator) {
	t.Helper()
	c := nasClient(t, emu)
	for _, fs := range emu.Resources().FileSystems {
		id := fs["id"].(string)
		mreq := nas.CreateDescribeMountTargetsRequest()
		mreq.FileSystemId = id
		mresp, err := c.DescribeMountTargets(mreq)
		if err != nil {
			t.Fatal(err)
		}
		for _, mt := range mresp.MountTargets.MountTarget {
			d := nas.CreateDeleteMountTargetRequest()
			d.FileSystemId, d.MountTargetDomain = id, mt.MountTargetDomain
			if _, err := c.DeleteMountTarget(d); err != nil {
				t.Fatal(err)
			}
		}
		d := nas.CreateDeleteFileSystemRequest()
		d.FileSystemId = id
		if _, err := c.DeleteFileSystem(d); err != nil {
			t.Fatal(err)
		}
	}
}

// renameFileSystemBehindTerraform changes every file system's description (the tier's name).
func renameFileSystemBehindTerraform(t *testing.T, emu *acctest.Emulator) {
	t.Helper()
	c := nasClient(t, emu)
	for _, fs := range emu.Resources().FileSystems {
		req := nas.CreateModifyFileSystemRequest()
		req.FileSystemId, req.Description = fs["id"].(string), "tampered"
		if _, err := c.ModifyFileSystem(req); err != nil {
			t.Fatal(err)
		}
	}
}

// driftStep changes the file system behind Terraform's back; the plan shows it, the apply
// restores it in place.
func driftStep(t *testing.T, emu *acctest.Emulator, cfg string, checks []statecheck.StateCheck) resource.TestStep {
	return resource.TestStep{
		PreConfig: func() { renameFileSystemBehindTerraform(t, emu) },
		Config:    cfg,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate)}},
		ConfigStateChecks: checks,
		Check: func(*terraform.State) error {
			resp, err := nasClient(t, emu).DescribeFileSystems(nas.CreateDescribeFileSystemsRequest())
			if err != nil {
				return err
			}
			if len(resp.FileSystems.FileSystem) != 1 {
				return fmt.Errorf("file systems: %+v", resp.FileSystems.FileSystem)
			}
			if d := resp.FileSystems.FileSystem[0].Description; d == "tampered" {
				return fmt.Errorf("description not restored: %q", d)
			}
			return nil
		},
	}
}

const hotBody = `
  name                = "hot-data"
  tier                = "hot"
  network_id          = gpucluster_rdma_network.net.id
  capacity_tib        = %d
  min_throughput_gbps = 1.5
  min_iops            = 1000000
`

func hotChecks(capTiB int64, throughput float64) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("backend"), knownvalue.StringExact("cpfs_advance_200")),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("provisioned_capacity_tib"), knownvalue.Int64Exact(capTiB)),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("expected_throughput_gbps"), knownvalue.Float64Exact(throughput)),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("expected_iops"), knownvalue.Null()),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("data_disk_hint"), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"category": knownvalue.StringExact("cloud_essd"), "performance_level": knownvalue.StringExact("PL3"),
			"size_gib": knownvalue.Int64Exact(19964), "iops": knownvalue.Int64Exact(1000000), "throughput_mbps": knownvalue.Int64Exact(4000),
		})),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("file_system_id"), knownvalue.StringRegexp(regexp.MustCompile(`^cpfs-`))),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("mount_command"), knownvalue.StringRegexp(regexp.MustCompile(`mount -t cpfs-nfs -o vers=3,.*rsize=1048576.*:/share /mnt/hot-data$`))),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("fstab_line"), knownvalue.StringRegexp(regexp.MustCompile(`:/share /mnt/hot-data cpfs-nfs .*,_netdev 0 0$`))),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("vswitch_id"), knownvalue.StringRegexp(regexp.MustCompile(`^vsw-`))),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("bucket"), knownvalue.Null()),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("encryption"), knownvalue.Bool(true)),
	}
}

func TestAccStorageTier_hotBasic(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: tierConfig(emu, fmt.Sprintf(hotBody, 10)), ConfigStateChecks: hotChecks(10, 2)},
			{ResourceName: tierAddr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: tierImportIgnore},
		},
	})
	fs := emu.Resources().FileSystems
	if len(fs) != 0 {
		t.Fatalf("file systems left: %v", fs)
	}
}

func TestAccStorageTier_hotUpdate(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: tierConfig(emu, fmt.Sprintf(hotBody, 10)), ConfigStateChecks: hotChecks(10, 2)},
			{
				// Growing is UpgradeFileSystem in place.
				Config: tierConfig(emu, fmt.Sprintf(hotBody, 20)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: hotChecks(20, 4),
				Check: func(*terraform.State) error {
					if n := emu.Stats().Calls["UpgradeFileSystem"]; n != 1 {
						return fmt.Errorf("UpgradeFileSystem called %d times, want 1", n)
					}
					if fs := emu.Resources().FileSystems; len(fs) != 1 {
						return fmt.Errorf("file systems: %v", fs)
					}
					return nil
				},
			},
			{
				// Shrinking replaces, and the plan says so.
				Config: tierConfig(emu, fmt.Sprintf(hotBody, 10)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionDestroyBeforeCreate)}},
				ConfigStateChecks: hotChecks(10, 2),
			},
			driftStep(t, emu, tierConfig(emu, fmt.Sprintf(hotBody, 10)), hotChecks(10, 2)),
		},
	})
}

func TestAccStorageTier_hotDisappears(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cfg := tierConfig(emu, fmt.Sprintf(hotBody, 10))
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() { deleteFileSystemBehindTerraform(t, emu) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionCreate)}},
				ConfigStateChecks: hotChecks(10, 2),
			},
		},
	})
}

const warmBody = `
  name         = %q
  tier         = "warm"
  vswitch_id   = gpucluster_rdma_network.net.vswitch_ids["cn-wulanchabu-a"]
  capacity_tib = 200
`

func warmChecks(name string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("backend"), knownvalue.StringExact("nas_capacity")),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("expected_throughput_gbps"), knownvalue.Null()),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("sizing_notes"), knownvalue.ListPartial(map[int]knownvalue.Check{
			1: knownvalue.StringRegexp(regexp.MustCompile(`no per-capacity formula.*up to 10 GB/s`)),
		})),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("data_disk_hint"), knownvalue.Null()),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("mount_command"), knownvalue.StringRegexp(regexp.MustCompile(`mount -t nfs -o .*nas.aliyuncs.com:/ /mnt/`+name+`$`))),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("name"), knownvalue.StringExact(name)),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("zone_id"), knownvalue.StringExact("cn-wulanchabu-a")),
	}
}

func TestAccStorageTier_warmBasicUpdate(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: tierConfig(emu, fmt.Sprintf(warmBody, "warm-data")), ConfigStateChecks: warmChecks("warm-data")},
			{ResourceName: tierAddr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: tierImportIgnore},
			{
				// The name is the file system's description: changed in place, mount point follows.
				Config: tierConfig(emu, fmt.Sprintf(warmBody, "warm-renamed")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: warmChecks("warm-renamed"),
			},
			driftStep(t, emu, tierConfig(emu, fmt.Sprintf(warmBody, "warm-renamed")), warmChecks("warm-renamed")),
		},
	})
}

func TestAccStorageTier_warmDisappears(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cfg := tierConfig(emu, fmt.Sprintf(warmBody, "warm-data"))
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() { deleteFileSystemBehindTerraform(t, emu) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionCreate)}},
				ConfigStateChecks: warmChecks("warm-data"),
			},
		},
	})
}

const coldBody = `
  name          = "cold-archive-test"
  tier          = "cold"
  capacity_tib  = 1024
  force_destroy = %t
  object_lifecycle = {
    ia_after_days           = 30
    archive_after_days      = %d
    cold_archive_after_days = 365
    expire_after_days       = 730
  }
  cache = {
    size_gib        = 2048
    hot_dataset_gib = 2000
  }
`

func coldChecks(archiveDays int64) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("id"), knownvalue.StringExact("cold-archive-test")),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("bucket"), knownvalue.StringExact("cold-archive-test")),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("backend"), knownvalue.StringExact("oss")),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("object_lifecycle").AtMapKey("archive_after_days"), knownvalue.Int64Exact(archiveDays)),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("alluxio_properties"), knownvalue.StringRegexp(regexp.MustCompile(
			`(?s)alluxio.master.mount.table.root.ufs=oss://cold-archive-test/\n.*level0.dirs.quota=2048GB\n`))),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("file_system_id"), knownvalue.Null()),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("mount_command"), knownvalue.Null()),
	}
}

// checkBucket asserts the bucket's settings in the emulator: private, versioned, encrypted,
// public access blocked, one lifecycle rule.
func checkBucket(emu *acctest.Emulator) func(*terraform.State) error {
	return func(*terraform.State) error {
		b := emu.Resources().Buckets
		if len(b) != 1 {
			return fmt.Errorf("buckets: %v", b)
		}
		want := map[string]any{"acl": "private", "versioning": "Enabled", "encryption": "AES256", "block_public_access": true, "lifecycle_rules": 1}
		for k, v := range want {
			if fmt.Sprint(b[0][k]) != fmt.Sprint(v) {
				return fmt.Errorf("bucket %s = %v, want %v (bucket %v)", k, b[0][k], v, b[0])
			}
		}
		return nil
	}
}

func TestAccStorageTier_coldBasicUpdateDrift(t *testing.T) {
	emu := acctest.StartEmulator(t)
	ctx := context.Background()
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: coldConfig(emu, fmt.Sprintf(coldBody, false, 90)), ConfigStateChecks: coldChecks(90), Check: checkBucket(emu)},
			{ResourceName: tierAddr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: tierImportIgnore},
			{
				Config: coldConfig(emu, fmt.Sprintf(coldBody, false, 120)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: coldChecks(120),
			},
			{
				// Someone rewrites the lifecycle behind Terraform's back: the plan shows it and the
				// apply restores it.
				PreConfig: func() {
					_, err := ossClient(emu).PutBucketLifecycle(ctx, &oss.PutBucketLifecycleRequest{
						Bucket: oss.Ptr("cold-archive-test"),
						LifecycleConfiguration: &oss.LifecycleConfiguration{Rules: []oss.LifecycleRule{{
							ID: oss.Ptr("gpucluster-tiering"), Prefix: oss.Ptr(""), Status: oss.Ptr("Enabled"),
							Expiration: &oss.LifecycleRuleExpiration{Days: oss.Ptr(int32(7))},
						}}},
					})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: coldConfig(emu, fmt.Sprintf(coldBody, false, 120)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(tierAddr, tfjsonpath.New("object_lifecycle").AtMapKey("expire_after_days"), knownvalue.Int64Exact(730)),
				}},
				ConfigStateChecks: coldChecks(120),
				Check: func(*terraform.State) error {
					res, err := ossClient(emu).GetBucketLifecycle(ctx, &oss.GetBucketLifecycleRequest{Bucket: oss.Ptr("cold-archive-test")})
					if err != nil {
						return err
					}
					r := res.LifecycleConfiguration.Rules
					if len(r) != 1 || len(r[0].Transitions) != 3 || r[0].Expiration == nil || *r[0].Expiration.Days != 730 {
						return fmt.Errorf("lifecycle not restored: %+v", r)
					}
					return nil
				},
			},
		},
	})
}

func TestAccStorageTier_coldDisappears(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cfg := coldConfig(emu, fmt.Sprintf(coldBody, false, 90))
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					if _, err := ossClient(emu).DeleteBucket(context.Background(), &oss.DeleteBucketRequest{Bucket: oss.Ptr("cold-archive-test")}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionCreate)}},
				ConfigStateChecks: coldChecks(90),
				Check:             checkBucket(emu),
			},
		},
	})
}

func TestAccStorageTier_coldNonEmptyBucket(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: coldConfig(emu, fmt.Sprintf(coldBody, false, 90))},
			{
				PreConfig: func() {
					_, err := ossClient(emu).PutObject(context.Background(), &oss.PutObjectRequest{
						Bucket: oss.Ptr("cold-archive-test"), Key: oss.Ptr("datasets/shard-0001.tar"), Body: strings.NewReader("weights")})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config:      coldConfig(emu, fmt.Sprintf(coldBody, false, 90)),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)bucket is not empty.*datasets/shard-0001.tar.*force_destroy`),
			},
			// With force_destroy the same bucket goes, objects and all (CheckDestroy).
			{Config: coldConfig(emu, fmt.Sprintf(coldBody, true, 90))},
		},
	})
}

// TestAccStorageTier_planTimeErrors: what cannot work fails at plan, and nothing is created.
func TestAccStorageTier_planTimeErrors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	cases := []struct {
		name, config string
		want         *regexp.Regexp
	}{
		{"unreachable IOPS", coldConfig(emu, `
  name = "hot-x"
  tier = "hot"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 10
  min_iops = 2000000`), regexp.MustCompile(`(?s)min_iops = 2000000 cannot be met.*best reachable.*1000000 IOPS`)},
		{"unreachable throughput", coldConfig(emu, `
  name = "warm-x"
  tier = "warm"
  backend = "nas_capacity"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 100
  min_throughput_gbps = 12`), regexp.MustCompile(`(?s)min_throughput_gbps = 12 cannot be met.*best\s+reachable\s+is\s+10\s+GB/s`)},
		{"capacity above the type's maximum", coldConfig(emu, `
  name = "hot-x"
  tier = "hot"
  backend = "nas_extreme_advance"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 300`), regexp.MustCompile(`(?s)at most 256 TiB,\s+300 TiB asked`)},
		{"bad lifecycle order", coldConfig(emu, `
  name = "cold-x"
  tier = "cold"
  capacity_tib = 1
  object_lifecycle = { ia_after_days = 60, archive_after_days = 30 }`), regexp.MustCompile(`(?s)out\s+of\s+order:\s+archive_after_days\s+=\s+30\s+is\s+not\s+after\s+ia_after_days\s+=\s+60`)},
		{"lifecycle minimum duration", coldConfig(emu, `
  name = "cold-x"
  tier = "cold"
  capacity_tib = 1
  object_lifecycle = { cold_archive_after_days = 200, expire_after_days = 300 }`), regexp.MustCompile(`(?s)set\s+expire_after_days\s+to\s+380\s+or\s+more`)},
		{"cache on a non-cold tier", coldConfig(emu, `
  name = "hot-x"
  tier = "hot"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 10
  cache = { size_gib = 100 }`), regexp.MustCompile(`(?s)cache on a non-cold tier`)},
		{"oss backend on a warm tier", coldConfig(emu, `
  name = "warm-x"
  tier = "warm"
  backend = "oss"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 10`), regexp.MustCompile(`(?s)Backend does not serve this tier`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
				Steps:                    []resource.TestStep{{Config: tc.config, PlanOnly: true, ExpectError: tc.want}},
			})
		})
	}
	st := emu.Stats()
	for _, action := range []string{"CreateFileSystem", "CreateMountTarget", "PutBucket"} {
		if st.Calls[action] != 0 {
			t.Fatalf("%s called %d times by plans that must fail first", action, st.Calls[action])
		}
	}
	if res := emu.Resources(); len(res.FileSystems)+len(res.Buckets) > 0 {
		t.Fatalf("created by failing plans: %v %v", res.FileSystems, res.Buckets)
	}
}
