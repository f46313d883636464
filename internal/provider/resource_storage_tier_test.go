package provider_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
	"provisioned_capacity_tib",
	"estimated_hourly_price", // from capacity_tib, which an imported bucket does not have
}

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

// deleteFileSystemsExcept removes, with the SDK, every file system but keep (mount targets first).
func deleteFileSystemsExcept(t *testing.T, emu *acctest.Emulator, keep string) {
	t.Helper()
	c := nasClient(t, emu)
	for _, fs := range emu.Resources().FileSystems {
		id := fs["id"].(string)
		if id == keep {
			continue
		}
		mreq := nas.CreateDescribeMountTargetsRequest()
		mreq.FileSystemId = id
		mresp, err := c.DescribeMountTargets(mreq)
		if err != nil {
			t.Error(err)
			continue
		}
		for _, mt := range mresp.MountTargets.MountTarget {
			d := nas.CreateDeleteMountTargetRequest()
			d.FileSystemId, d.MountTargetDomain = id, mt.MountTargetDomain
			if _, err := c.DeleteMountTarget(d); err != nil {
				t.Error(err)
			}
		}
		d := nas.CreateDeleteFileSystemRequest()
		d.FileSystemId = id
		if _, err := c.DeleteFileSystem(d); err != nil {
			t.Error(err)
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
		// CPFS advance_200 at 1.4 CNY per GiB-month, 720 hours a month.
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("estimated_hourly_price"),
			knownvalue.Float64Exact(float64(capTiB*1024)*1.4/720)),
	}
}

func TestAccStorageTier_hotBasic(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{
				Config: tierConfig(emu, fmt.Sprintf(hotBody, 10)),
				// The price is known at plan, from the capacity alone.
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(tierAddr, tfjsonpath.New("estimated_hourly_price"), knownvalue.Float64Exact(10*1024*1.4/720))}},
				ConfigStateChecks: hotChecks(10, 2),
			},
			{
				Config:           tierConfig(emu, fmt.Sprintf(hotBody, 10)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			// A bucket has no size to import, so the shared list ignores the price; a file system's
			// capacity is imported, and so must its price be.
			{ResourceName: tierAddr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: slices.DeleteFunc(slices.Clone(tierImportIgnore),
				func(a string) bool { return a == "estimated_hourly_price" })},
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
		{"reserved tag key", coldConfig(emu, `
  name = "cold-x"
  tier = "cold"
  capacity_tib = 1
  tags = { "gpucluster:storage-tier" = "other" }`), regexp.MustCompile(`(?s)Reserved tag key.*gpucluster:storage-tier`)},
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

// The tags the provider puts on every file system and bucket of a tier, besides the user's.
func tierSystemTags(name string) map[string]string {
	return map[string]string{"gpucluster:managed-by": "terraform-provider-gpucluster", "gpucluster:storage-tier": name}
}

func withTags(base map[string]string, more map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{base, more} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// checkFileSystemTags asserts, through the NAS SDK, the tags of the only file system: both as
// DescribeFileSystems shows them and as ListTagResources lists them.
func checkFileSystemTags(t *testing.T, emu *acctest.Emulator, want map[string]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		c := nasClient(t, emu)
		resp, err := c.DescribeFileSystems(nas.CreateDescribeFileSystemsRequest())
		if err != nil {
			return err
		}
		if len(resp.FileSystems.FileSystem) != 1 {
			return fmt.Errorf("file systems: %+v", resp.FileSystems.FileSystem)
		}
		fs := resp.FileSystems.FileSystem[0]
		got := map[string]string{}
		for _, tg := range fs.Tags.Tag {
			got[tg.Key] = tg.Value
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("DescribeFileSystems tags of %s: %v, want %v", fs.FileSystemId, got, want)
		}
		lreq := nas.CreateListTagResourcesRequest()
		lreq.ResourceType, lreq.ResourceId = "filesystem", &[]string{fs.FileSystemId}
		lresp, err := c.ListTagResources(lreq)
		if err != nil {
			return err
		}
		listed := map[string]string{}
		for _, tr := range lresp.TagResources.TagResource {
			listed[tr.TagKey] = tr.TagValue
		}
		if !reflect.DeepEqual(listed, want) {
			return fmt.Errorf("ListTagResources of %s: %v, want %v", fs.FileSystemId, listed, want)
		}
		return nil
	}
}

// checkBucketTags asserts the only bucket's tags, through the OSS SDK and the emulator's view.
func checkBucketTags(emu *acctest.Emulator, bucket string, want map[string]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		res, err := ossClient(emu).GetBucketTags(context.Background(), &oss.GetBucketTagsRequest{Bucket: oss.Ptr(bucket)})
		if err != nil {
			return err
		}
		got := map[string]string{}
		if res.Tagging != nil && res.Tagging.TagSet != nil {
			for _, tg := range res.Tagging.TagSet.Tags {
				got[oss.ToString(tg.Key)] = oss.ToString(tg.Value)
			}
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("tags of bucket %s: %v, want %v", bucket, got, want)
		}
		if b := emu.Resources().Buckets; len(b) != 1 || !reflect.DeepEqual(b[0]["tags"], want) {
			return fmt.Errorf("emulator's buckets: %v", b)
		}
		return nil
	}
}

const warmTaggedBody = `
  name         = %q
  tier         = "warm"
  vswitch_id   = gpucluster_rdma_network.net.vswitch_ids["cn-wulanchabu-a"]
  capacity_tib = 200
  tags         = %s
`

func TestAccStorageTier_warmTags(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{
				Config: tierConfig(emu, fmt.Sprintf(warmTaggedBody, "warm-data", `{ team = "md", project = "lipids" }`)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("tags"), knownvalue.MapExact(map[string]knownvalue.Check{
						"team": knownvalue.StringExact("md"), "project": knownvalue.StringExact("lipids")})),
				},
				Check: checkFileSystemTags(t, emu, withTags(tierSystemTags("warm-data"), map[string]string{"team": "md", "project": "lipids"})),
			},
			{ResourceName: tierAddr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: tierImportIgnore},
			{
				// Tags change in place: one changed, one removed, one added; the reserved tag follows the name.
				Config: tierConfig(emu, fmt.Sprintf(warmTaggedBody, "warm-renamed", `{ team = "cfd", cost = "4711" }`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate)}},
				Check: resource.ComposeTestCheckFunc(
					checkFileSystemTags(t, emu, withTags(tierSystemTags("warm-renamed"), map[string]string{"team": "cfd", "cost": "4711"})),
					func(*terraform.State) error {
						if n := emu.Stats().Calls["CreateFileSystem"]; n != 1 {
							return fmt.Errorf("CreateFileSystem called %d times, want 1 (tags change in place)", n)
						}
						return nil
					}),
			},
		},
	})
}

const coldTaggedBody = `
  name          = "cold-tagged-test"
  tier          = "cold"
  capacity_tib  = 10
  force_destroy = true
  tags          = %s
`

func TestAccStorageTier_coldTags(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{
				Config: coldConfig(emu, fmt.Sprintf(coldTaggedBody, `{ team = "md", project = "lipids" }`)),
				Check:  checkBucketTags(emu, "cold-tagged-test", withTags(tierSystemTags("cold-tagged-test"), map[string]string{"team": "md", "project": "lipids"})),
			},
			{ResourceName: tierAddr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: append([]string{"tags"}, tierImportIgnore...)},
			{
				Config: coldConfig(emu, fmt.Sprintf(coldTaggedBody, `{ team = "cfd", cost = "4711" }`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate)}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("tags"), knownvalue.MapExact(map[string]knownvalue.Check{
						"team": knownvalue.StringExact("cfd"), "cost": knownvalue.StringExact("4711")})),
				},
				Check: checkBucketTags(emu, "cold-tagged-test", withTags(tierSystemTags("cold-tagged-test"), map[string]string{"team": "cfd", "cost": "4711"})),
			},
			{
				// Tags removed outside Terraform: the plan shows them and the apply puts them back.
				PreConfig: func() {
					if _, err := ossClient(emu).DeleteBucketTags(context.Background(), &oss.DeleteBucketTagsRequest{Bucket: oss.Ptr("cold-tagged-test")}); err != nil {
						t.Fatal(err)
					}
				},
				Config: coldConfig(emu, fmt.Sprintf(coldTaggedBody, `{ team = "cfd", cost = "4711" }`)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate)}},
				Check: checkBucketTags(emu, "cold-tagged-test", withTags(tierSystemTags("cold-tagged-test"), map[string]string{"team": "cfd", "cost": "4711"})),
			},
		},
	})
}

// TestAccStorageTier_warmAdoptsInterrupted: an apply interrupted after the file system and its
// mount target were created, before the state was saved, left them tagged; the next apply adopts
// them instead of creating a second file system.
func TestAccStorageTier_warmAdoptsInterrupted(t *testing.T) {
	emu := acctest.StartEmulator(t)
	var leftID, otherID string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: emu.Config() + tierNetwork},
			{
				PreConfig: func() {
					sw := emu.Resources().VSwitches
					if len(sw) != 1 {
						t.Fatalf("vSwitches: %v", sw)
					}
					vsw, vpcID := sw[0]["id"].(string), sw[0]["vpc_id"].(string)
					c := nasClient(t, emu)
					cf := nas.CreateCreateFileSystemRequest()
					cf.FileSystemType, cf.StorageType, cf.ProtocolType, cf.ZoneId, cf.Description = "standard", "Capacity", "NFS", "cn-wulanchabu-a", "warm-data"
					cf.EncryptType = "1"
					fs, err := c.CreateFileSystem(cf)
					if err != nil {
						t.Fatal(err)
					}
					leftID = fs.FileSystemId
					tr := nas.CreateTagResourcesRequest()
					tr.ResourceType, tr.ResourceId = "filesystem", &[]string{leftID}
					var tags []nas.TagResourcesTag
					for k, v := range tierSystemTags("warm-data") {
						tags = append(tags, nas.TagResourcesTag{Key: k, Value: v})
					}
					tr.Tag = &tags
					if _, err := c.TagResources(tr); err != nil {
						t.Fatal(err)
					}
					// A file system of the same name in another configuration (another backend) is not taken.
					other := nas.CreateCreateFileSystemRequest()
					other.FileSystemType, other.StorageType, other.ProtocolType, other.ZoneId = "standard", "Performance", "NFS", "cn-wulanchabu-a"
					ofs, err := c.CreateFileSystem(other)
					if err != nil {
						t.Fatal(err)
					}
					tr.ResourceId = &[]string{ofs.FileSystemId}
					if _, err := c.TagResources(tr); err != nil {
						t.Fatal(err)
					}
					// Wait until the left-behind file system is Running, then give it its mount target.
					for i := 0; ; i++ {
						d := nas.CreateDescribeFileSystemsRequest()
						d.FileSystemId = leftID
						r, err := c.DescribeFileSystems(d)
						if err != nil {
							t.Fatal(err)
						}
						if r.FileSystems.FileSystem[0].Status == "Running" {
							break
						}
						if i > 100 {
							t.Fatal("file system never Running")
						}
						time.Sleep(50 * time.Millisecond)
					}
					cm := nas.CreateCreateMountTargetRequest()
					cm.FileSystemId, cm.NetworkType, cm.VpcId, cm.VSwitchId = leftID, "Vpc", vpcID, vsw
					if _, err := c.CreateMountTarget(cm); err != nil {
						t.Fatal(err)
					}
					otherID = ofs.FileSystemId
				},
				Config: tierConfig(emu, fmt.Sprintf(warmBody, "warm-data")),
				ConfigStateChecks: append(warmChecks("warm-data"),
					statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("file_system_id"), knownvalue.StringFunc(func(v string) error {
						if v != leftID {
							return fmt.Errorf("file_system_id %s, want the adopted %s", v, leftID)
						}
						return nil
					}))),
				Check: func(st *terraform.State) error {
					// Whatever the outcome, file systems other than the tier's go now (mount targets
					// first), so that the destroy can remove the network and CheckDestroy sees the rest.
					defer deleteFileSystemsExcept(t, emu, st.RootModule().Resources[tierAddr].Primary.ID)
					if otherID == "" {
						return fmt.Errorf("PreConfig did not run")
					}
					n := 0
					for _, fs := range emu.Resources().FileSystems {
						if fs["storage_type"] == "Capacity" {
							n++
							if fs["id"] != leftID || fs["mount_targets"] != 1 {
								return fmt.Errorf("file system %v, want %s with one mount target", fs, leftID)
							}
						}
					}
					stats := emu.Stats()
					if n != 1 || stats.Calls["CreateFileSystem"] != 2 || stats.Calls["CreateMountTarget"] != 1 {
						return fmt.Errorf("%d Capacity file systems, CreateFileSystem %d calls (2 by the test), CreateMountTarget %d (1 by the test)",
							n, stats.Calls["CreateFileSystem"], stats.Calls["CreateMountTarget"])
					}
					return nil
				},
			},
		},
	})
}

// TestAccStorageTier_coldAdoptsInterrupted: a bucket of the tier's name that is not the tier's
// and holds data is refused; an empty one (what an apply interrupted right after PutBucket
// leaves) is adopted and brought to the tier's settings and tags.
func TestAccStorageTier_coldAdoptsInterrupted(t *testing.T) {
	emu := acctest.StartEmulator(t)
	ctx := context.Background()
	cfg := coldConfig(emu, fmt.Sprintf(coldBody, false, 90))
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					c := ossClient(emu)
					if _, err := c.PutBucket(ctx, &oss.PutBucketRequest{Bucket: oss.Ptr("cold-archive-test"), Acl: oss.BucketACLPublicRead}); err != nil {
						t.Fatal(err)
					}
					if _, err := c.PutObject(ctx, &oss.PutObjectRequest{Bucket: oss.Ptr("cold-archive-test"), Key: oss.Ptr("someone-elses.csv"),
						Body: strings.NewReader("x")}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      cfg,
				ExpectError: regexp.MustCompile(`(?s)bucket cold-archive-test already exists.*someone-elses.csv.*not taken over.*import`),
			},
			{
				PreConfig: func() {
					if _, err := ossClient(emu).DeleteObject(ctx, &oss.DeleteObjectRequest{Bucket: oss.Ptr("cold-archive-test"), Key: oss.Ptr("someone-elses.csv")}); err != nil {
						t.Fatal(err)
					}
				},
				Config:            cfg,
				ConfigStateChecks: coldChecks(90),
				Check: resource.ComposeTestCheckFunc(
					checkBucket(emu),
					checkBucketTags(emu, "cold-archive-test", tierSystemTags("cold-archive-test")),
					func(*terraform.State) error {
						if n := emu.Stats().Calls["PutBucket"]; n != 1 {
							return fmt.Errorf("PutBucket called %d times, want 1 (by the test; the provider adopts)", n)
						}
						return nil
					}),
			},
		},
	})
}

// TestAccStorageTier_coldSettingsDrift: ACL, versioning and Block Public Access changed through
// the OSS SDK behind Terraform's back show in the plan and are restored by the apply.
func TestAccStorageTier_coldSettingsDrift(t *testing.T) {
	emu := acctest.StartEmulator(t)
	ctx := context.Background()
	cfg := coldConfig(emu, fmt.Sprintf(coldBody, true, 90))
	settings := []statecheck.StateCheck{
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("bucket_acl"), knownvalue.StringExact("private")),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("bucket_versioning"), knownvalue.StringExact("Enabled")),
		statecheck.ExpectKnownValue(tierAddr, tfjsonpath.New("bucket_block_public_access"), knownvalue.Bool(true)),
	}
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkTiersDestroyed(emu),
		Steps: []resource.TestStep{
			{Config: cfg, ConfigStateChecks: settings, Check: checkBucket(emu)},
			{
				PreConfig: func() {
					c, b := ossClient(emu), oss.Ptr("cold-archive-test")
					// Versioned data: an overwritten object, and a deleted one (a delete marker).
					for _, body := range []string{"v1", "v2"} {
						if _, err := c.PutObject(ctx, &oss.PutObjectRequest{Bucket: b, Key: oss.Ptr("ckpt/step-100"), Body: strings.NewReader(body)}); err != nil {
							t.Fatal(err)
						}
					}
					if _, err := c.PutObject(ctx, &oss.PutObjectRequest{Bucket: b, Key: oss.Ptr("tmp/x"), Body: strings.NewReader("x")}); err != nil {
						t.Fatal(err)
					}
					if _, err := c.DeleteObject(ctx, &oss.DeleteObjectRequest{Bucket: b, Key: oss.Ptr("tmp/x")}); err != nil {
						t.Fatal(err)
					}
					if _, err := c.PutBucketPublicAccessBlock(ctx, &oss.PutBucketPublicAccessBlockRequest{Bucket: b,
						PublicAccessBlockConfiguration: &oss.PublicAccessBlockConfiguration{BlockPublicAccess: oss.Ptr(false)}}); err != nil {
						t.Fatal(err)
					}
					if _, err := c.PutBucketAcl(ctx, &oss.PutBucketAclRequest{Bucket: b, Acl: oss.BucketACLPublicRead}); err != nil {
						t.Fatal(err)
					}
					if _, err := c.PutBucketVersioning(ctx, &oss.PutBucketVersioningRequest{Bucket: b,
						VersioningConfiguration: &oss.VersioningConfiguration{Status: oss.VersionSuspended}}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(tierAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(tierAddr, tfjsonpath.New("bucket_acl"), knownvalue.StringExact("private")),
					plancheck.ExpectKnownValue(tierAddr, tfjsonpath.New("bucket_versioning"), knownvalue.StringExact("Enabled")),
					plancheck.ExpectKnownValue(tierAddr, tfjsonpath.New("bucket_block_public_access"), knownvalue.Bool(true)),
				}},
				ConfigStateChecks: settings,
				Check: resource.ComposeTestCheckFunc(checkBucket(emu), func(*terraform.State) error {
					if b := emu.Resources().Buckets; len(b) != 1 || b[0]["version_count"] != 4 {
						return fmt.Errorf("want 4 versions and markers kept (2 of ckpt/step-100, tmp/x and its marker): %v", b)
					}
					return nil
				}),
			},
			// Destroy (force_destroy) lists every version and delete marker and deletes each by id;
			// CheckDestroy then finds no bucket.
		},
	})
}
