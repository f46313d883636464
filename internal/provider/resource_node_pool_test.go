package provider_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// poolNetworkConfig is a two-zone network the pools of these tests live in.
func poolNetworkConfig(extra string) string {
	return fmt.Sprintf(`
resource "gpucluster_rdma_network" "net" {
  name        = "pool-net"
  cidr_block  = "10.20.0.0/16"
  zone_ids    = ["cn-wulanchabu-a", "cn-wulanchabu-b"]
  admin_cidrs = ["10.99.0.0/24"]
  %s
}
`, extra)
}

func poolConfig(size int, extra string) string {
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "train" {
  name          = "train"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 8
  size          = %d
  %s
}
`, size, extra)
}

// emulatorLive counts the emulator's live instances.
func emulatorLive(emu *acctest.Emulator) int {
	return len(emu.Resources().Instances)
}

func checkInstances(emu *acctest.Emulator, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := emulatorLive(emu); got != want {
			return fmt.Errorf("the emulator holds %d instances, want %d", got, want)
		}
		return nil
	}
}

func checkNothingLeft(emu *acctest.Emulator) resource.TestCheckFunc {
	return func(*terraform.State) error {
		// Counts covers every kind the emulator serves, so a new product cannot leak unseen.
		if left := emu.Resources().Counts(); len(left) != 0 {
			return fmt.Errorf("resources left behind after destroy: %v", left)
		}
		return nil
	}
}

func TestAccNodePool_basicScaleAndImport(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: emu.Config() + poolNetworkConfig("") + poolConfig(3, `tags = { team = "nlp" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// The plan shows the type the catalog picked, before anything is created.
					plancheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("instance_type"), knownvalue.StringRegexp(regexp.MustCompile(`^ecs\.(gn7e|ebmgn7e|ebmgn7ex|sccgn7ex)`))),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(3)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes").AtSliceIndex(0).AtMapKey("status"), knownvalue.StringExact("Running")),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("gpu_count"), knownvalue.Int64Exact(24)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("min_size"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("node_labels").AtMapKey("nvidia.com/gpu.present"), knownvalue.StringExact("true")),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("node_taints").AtSliceIndex(0), knownvalue.StringExact("nvidia.com/gpu:NoSchedule")),
				},
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 3),
					resource.TestMatchResourceAttr("gpucluster_node_pool.train", "id", regexp.MustCompile(`^np-[0-9a-f]{12}$`)),
					resource.TestCheckResourceAttrWith("gpucluster_node_pool.train", "estimated_hourly_price", positiveNumber),
				),
			},
			{
				ResourceName:      "gpucluster_node_pool.train",
				ImportState:       true,
				ImportStateVerify: true,
				// Import rebuilds the pool from its nodes' tags; what only the configuration says
				// (how the type was asked for, defaults the plan derives) comes back on the next plan.
				ImportStateVerifyIgnore: []string{"gpu_model", "gpus_per_node", "findings", "node_labels", "node_taints",
					"estimated_hourly_price", "zone_ids", "timeouts", "instance_type_fallback"},
			},
			{
				// Scale up in place: the same pool, more nodes.
				Config: emu.Config() + poolNetworkConfig("") + poolConfig(5, `tags = { team = "vision" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(5)),
				},
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 5), checkEveryInstanceTagged(emu, "team", "vision")),
			},
			{
				// Scale down in place: the newest nodes go.
				Config: emu.Config() + poolNetworkConfig("") + poolConfig(2, `tags = { team = "vision" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(2)),
				},
				Check: checkInstances(emu, 2),
			},
		},
	})
}

func positiveNumber(v string) error {
	if v == "" || v == "0" || strings.HasPrefix(v, "-") {
		return fmt.Errorf("want a positive price, got %q", v)
	}
	return nil
}

func checkEveryInstanceTagged(emu *acctest.Emulator, key, value string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		client := emulatorECS(emu)
		req := ecs.CreateDescribeInstancesRequest()
		req.MaxResults = "100"
		resp, err := client.DescribeInstances(req)
		if err != nil {
			return err
		}
		for _, in := range resp.Instances.Instance {
			found := false
			for _, tag := range in.Tags.Tag {
				if (tag.TagKey == key && tag.TagValue == value) || (tag.Key == key && tag.Value == value) {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("instance %s lacks tag %s=%s", in.InstanceId, key, value)
			}
		}
		return nil
	}
}

// emulatorECS is a real ECS SDK client pointed at the emulator, for changes behind Terraform's back.
func emulatorECS(emu *acctest.Emulator) *ecs.Client {
	client, err := ecs.NewClientWithAccessKey(acctest.Region, acctest.AccessKey, acctest.SecretKey)
	if err != nil {
		panic(err)
	}
	toEmulator(emu, &client.Client)
	return client
}

// toEmulator points an SDK client at the emulator, over plain HTTP.
func toEmulator(emu *acctest.Emulator, c *sdk.Client) {
	u, _ := url.Parse(emu.URL)
	c.Domain = u.Host
	c.GetConfig().Scheme = "HTTP"
}

func TestAccNodePool_disappearingNodesComeBack(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := emu.Config() + poolNetworkConfig("") + poolConfig(4, "")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: config, Check: checkInstances(emu, 4)},
			{
				// Two nodes deleted behind Terraform's back: the plan shows it, the apply restores the size.
				PreConfig: func() { deleteSomeInstances(t, emu, 2) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(4)),
				},
				Check: checkInstances(emu, 4),
			},
			{
				// Every node gone: the pool grows back from nothing, as at its create, and must not
				// reuse the create's ClientTokens (the service would answer with the deleted nodes).
				PreConfig: func() { deleteSomeInstances(t, emu, 4) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(4)),
				},
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 4), checkStateHoldsLiveInstances(emu, "gpucluster_node_pool.train")),
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

func deleteSomeInstances(t *testing.T, emu *acctest.Emulator, n int) {
	t.Helper()
	client := emulatorECS(emu)
	req := ecs.CreateDescribeInstancesRequest()
	req.MaxResults = "100"
	resp, err := client.DescribeInstances(req)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, in := range resp.Instances.Instance[:n] {
		ids = append(ids, in.InstanceId)
	}
	del := ecs.CreateDeleteInstancesRequest()
	del.InstanceId = &ids
	del.Force = "true"
	if _, err := client.DeleteInstances(del); err != nil {
		t.Fatal(err)
	}
}

// wrapped compiles an expected-error pattern whose spaces also match the line breaks the CLI puts
// into long diagnostics.
func wrapped(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}

// plannedType is the instance type the catalog plans for the pools of these tests (poolConfig):
// the type whose stock the stock-out tests take away.
func plannedType(t *testing.T) string {
	t.Helper()
	cands, _, err := catalog.Select(catalog.SelectRequest{Scenario: "ai_training", GPUModel: "A100", GPUsPerNode: 8, Nodes: 5})
	if err != nil || len(cands) == 0 {
		t.Fatalf("the catalog plans no type for ai_training on 8 x A100: %v", err)
	}
	return cands[0].InstanceType.Name
}

// callRecorder sits in front of an emulator and keeps every RPC call's parameters, so a test can
// check how the provider asked (batch sizes, tokens), not only what came out.
type callRecorder struct {
	mu    sync.Mutex
	calls map[string][]url.Values
	URL   string
}

func startCallRecorder(t *testing.T, emu *acctest.Emulator) *callRecorder {
	t.Helper()
	rec := &callRecorder{calls: map[string][]url.Values{}}
	next := emu.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		params := r.URL.Query()
		if form, err := url.ParseQuery(string(body)); err == nil {
			for k, v := range form {
				params[k] = v
			}
		}
		if action := params.Get("Action"); action != "" {
			rec.mu.Lock()
			rec.calls[action] = append(rec.calls[action], params)
			rec.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL
	return rec
}

// Config is a provider block that goes through the recorder.
func (rec *callRecorder) Config() string {
	return acctest.ProviderBlock(rec.URL, acctest.AccessKey, acctest.SecretKey)
}

// listSizes returns, per call of action, how many elements of the repeated parameter prefix
// ("InstanceId") it carried.
func (rec *callRecorder) listSizes(action, prefix string) []int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []int
	for _, p := range rec.calls[action] {
		n := 0
		for k := range p {
			if strings.HasPrefix(k, prefix+".") {
				n++
			}
		}
		out = append(out, n)
	}
	return out
}

func (rec *callRecorder) reset() {
	rec.mu.Lock()
	rec.calls = map[string][]url.Values{}
	rec.mu.Unlock()
}

// runningSampler watches the emulator while an apply runs and keeps the fewest Running instances
// it saw: how far a roll took the pool down.
type runningSampler struct {
	stop     chan struct{}
	done     chan struct{}
	minimum  atomic.Int64
	samples  atomic.Int64
	stopOnce sync.Once
}

func startRunningSampler(emu *acctest.Emulator) *runningSampler {
	s := &runningSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s.minimum.Store(1 << 30)
	go func() {
		defer close(s.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			running := int64(0)
			for _, in := range emu.Resources().Instances {
				if in["status"] == "Running" {
					running++
				}
			}
			if running < s.minimum.Load() {
				s.minimum.Store(running)
			}
			s.samples.Add(1)
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *runningSampler) finish() (minimum, samples int64) {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	return s.minimum.Load(), s.samples.Load()
}

// Must show: a changed image rolls the pool in place, at most max_unavailable nodes down at once.
func TestAccNodePool_rollingReplace(t *testing.T) {
	const newImage = "aliyun_3_x64_20G_alibase_20240101.vhd"
	emu := acctest.StartEmulator(t, acctest.WithBootTime(time.Second))
	rec := startCallRecorder(t, emu)
	strategy := `update_strategy = { max_unavailable = 2 }`
	var (
		sampler *runningSampler
		oldIDs  []string
	)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: rec.Config() + poolNetworkConfig("") + poolConfig(5, strategy),
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 5), checkImages(emu, defaultTestImage, 5),
					func(*terraform.State) error { oldIDs = liveInstanceIDs(emu); return nil }),
			},
			{
				PreConfig: func() {
					rec.reset()
					sampler = startRunningSampler(emu)
				},
				Config: rec.Config() + poolNetworkConfig("") + poolConfig(5, strategy+"\n  image_id = \""+newImage+"\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("gpucluster_node_pool.train", plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(5)),
					statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("image_id"), knownvalue.StringExact(newImage)),
				},
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 5),
					checkImages(emu, newImage, 5),
					func(*terraform.State) error {
						minimum, samples := sampler.finish()
						t.Logf("roll: fewest running nodes seen %d in %d samples; DeleteInstances batches %v", minimum, samples, rec.listSizes("DeleteInstances", "InstanceId"))
						if minimum < 3 {
							return fmt.Errorf("only %d of 5 nodes were running at one point of the roll: more than max_unavailable = 2 were down", minimum)
						}
						deletes := rec.listSizes("DeleteInstances", "InstanceId")
						removed := 0
						for _, n := range deletes {
							if n > 2 {
								return fmt.Errorf("a DeleteInstances call took %d nodes at once, more than max_unavailable = 2 (calls: %v)", n, deletes)
							}
							removed += n
						}
						if removed != 5 {
							return fmt.Errorf("the roll deleted %d nodes, want all 5 old ones (calls: %v)", removed, deletes)
						}
						for _, id := range liveInstanceIDs(emu) {
							if slices.Contains(oldIDs, id) {
								return fmt.Errorf("old node %s is still there after the roll", id)
							}
						}
						return nil
					},
				),
			},
			{
				Config: rec.Config() + poolNetworkConfig("") + poolConfig(5, strategy+"\n  image_id = \""+newImage+"\""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
		},
	})
}

const defaultTestImage = "ubuntu_22_04_x64_20G_alibase_20240101.vhd"

func liveInstanceIDs(emu *acctest.Emulator) []string {
	var ids []string
	for _, in := range emu.Resources().Instances {
		ids = append(ids, in["id"].(string))
	}
	return ids
}

// checkImages asserts that want instances exist and every one runs image.
func checkImages(emu *acctest.Emulator, image string, want int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		req := ecs.CreateDescribeInstancesRequest()
		req.MaxResults = "100"
		resp, err := emulatorECS(emu).DescribeInstances(req)
		if err != nil {
			return err
		}
		if got := len(resp.Instances.Instance); got != want {
			return fmt.Errorf("%d instances, want %d", got, want)
		}
		for _, in := range resp.Instances.Instance {
			if in.ImageId != image || in.Status != "Running" {
				return fmt.Errorf("instance %s runs %s (%s), want %s (Running)", in.InstanceId, in.ImageId, in.Status, image)
			}
		}
		return nil
	}
}

// checkZones asserts that every instance lives in zone.
func checkZones(emu *acctest.Emulator, zone string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, in := range emu.Resources().Instances {
			if in["zone"] != zone {
				return fmt.Errorf("instance %s landed in %s, want %s", in["id"], in["zone"], zone)
			}
		}
		return nil
	}
}

// checkRefusedWith checks the emulator answered code at least once: the fallback was exercised,
// not avoided.
func checkRefusedWith(emu *acctest.Emulator, code string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if emu.Stats().Errors[code] == 0 {
			return fmt.Errorf("the emulator never answered %s (errors seen: %v)", code, emu.Stats().Errors)
		}
		return nil
	}
}

// Must show: no stock of the planned type in the first zone, the pool lands in the second.
func TestAccNodePool_stockOutFirstZone(t *testing.T) {
	// The vendor says "no stock here" three ways: OperationDenied.NoStock (sold out for now),
	// Zone.NotOnSale and InvalidResourceType.NotSupported (not sold in that zone at all). Each
	// must move the pool to the next zone.
	for _, code := range []string{"OperationDenied.NoStock", "Zone.NotOnSale", "InvalidResourceType.NotSupported"} {
		t.Run(code, func(t *testing.T) {
			emu := acctest.StartEmulator(t)
			typ := plannedType(t)
			if code == "OperationDenied.NoStock" {
				emu.SetCapacity(map[string]map[string]int{acctest.Region + "-a": {typ: 0}})
			} else if err := emu.SetUnavailable(map[string]map[string]string{acctest.Region + "-a": {typ: code}}); err != nil {
				t.Fatal(err)
			}
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
				CheckDestroy:             checkNothingLeft(emu),
				Steps: []resource.TestStep{
					{
						Config: emu.Config() + poolNetworkConfig("") + poolConfig(4, ""),
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("instance_type"), knownvalue.StringExact(typ)),
							statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(4)),
							statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes").AtSliceIndex(3).AtMapKey("zone_id"), knownvalue.StringExact(acctest.Region+"-b")),
						},
						Check: resource.ComposeTestCheckFunc(checkInstances(emu, 4), checkZones(emu, acctest.Region+"-b"), checkRefusedWith(emu, code)),
					},
					{
						Config: emu.Config() + poolNetworkConfig("") + poolConfig(4, ""),
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectEmptyPlan(),
						}},
					},
				},
			})
		})
	}
}

// Must show: stock everywhere below min_size fails the apply with every zone and type tried, and
// the nodes that were created are in the state (and go with the destroy).
func TestAccNodePool_stockOutBelowMinSize(t *testing.T) {
	emu := acctest.StartEmulator(t)
	typ := plannedType(t)
	emu.SetCapacity(map[string]map[string]int{acctest.Region + "-a": {typ: 2}, acctest.Region + "-b": {typ: 1}})
	config := emu.Config() + poolNetworkConfig("") + poolConfig(5, "min_size = 5")
	quoted := regexp.QuoteMeta(typ)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: wrapped(`(?s)reached 3 nodes, below min_size = 5.*` + quoted + ` in ` + acctest.Region + `-a: 2 of 5.*` +
					quoted + ` in ` + acctest.Region + `-b: 1 of 3.*recorded in the state`),
			},
			{
				// The failed create left a tainted pool that knows all three nodes (the next plan
				// replaces it).
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 3),
					resource.TestCheckResourceAttr("gpucluster_node_pool.train", "nodes.#", "3"),
					checkStateHoldsLiveInstances(emu, "gpucluster_node_pool.train"),
				),
			},
		},
	})
}

// checkStateHoldsLiveInstances asserts that the pool's nodes in state are exactly the emulator's
// live instances: nothing orphaned, nothing invented.
func checkStateHoldsLiveInstances(emu *acctest.Emulator, addr string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[addr]
		if !ok {
			return fmt.Errorf("%s is not in the state", addr)
		}
		var inState []string
		for k, v := range rs.Primary.Attributes {
			if strings.HasPrefix(k, "nodes.") && strings.HasSuffix(k, ".id") {
				inState = append(inState, v)
			}
		}
		live := liveInstanceIDs(emu)
		sort.Strings(inState)
		sort.Strings(live)
		if !slices.Equal(inState, live) {
			return fmt.Errorf("state holds nodes %v, the emulator %v", inState, live)
		}
		return nil
	}
}

// planErrorNetworks are the networks the plan-time checks look at: plain (no HPC cluster),
// low-latency placement, eRDMA.
const planErrorNetworks = `
resource "gpucluster_rdma_network" "plain" {
  name       = "plain"
  cidr_block = "10.30.0.0/16"
  zone_ids   = ["cn-wulanchabu-a", "cn-wulanchabu-b"]
}

resource "gpucluster_rdma_network" "lowlat" {
  name       = "lowlat"
  cidr_block = "10.31.0.0/16"
  zone_ids   = ["cn-wulanchabu-a"]
  placement  = "low_latency"
}

resource "gpucluster_rdma_network" "erdma" {
  name       = "erdma"
  cidr_block = "10.32.0.0/16"
  zone_ids   = ["cn-wulanchabu-a"]
  erdma      = true
}
`

// badPool is a pool on one of planErrorNetworks with the given attribute lines.
func badPool(network, attrs string) string {
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "bad" {
  name       = "bad"
  network_id = gpucluster_rdma_network.%s.id
  size       = 5
  %s
}
`, network, attrs)
}

// Must show: what cannot work stops the plan, names the attribute and what would work, and
// nothing is created. The networks exist before the pools are planned, so the checks that depend
// on them run at plan time.
func TestAccNodePool_planTimeErrors(t *testing.T) {
	emu := acctest.StartEmulator(t)
	base := emu.Config() + planErrorNetworks
	step := func(pool string, want string) resource.TestStep {
		return resource.TestStep{Config: base + pool, ExpectError: wrapped(want)}
	}
	a100 := "scenario = \"ai_training\"\n  gpu_model = \"A100\"\n  gpus_per_node = 8\n"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{Config: base, Check: checkInstances(emu, 0)},
			// Spot nodes cannot join a LowLatency deployment set.
			step(badPool("lowlat", a100+`spot = { strategy = "SpotAsPriceGo" }`),
				`(?s)spot_low_latency.*Spot instances cannot join a deployment set.*Fix: Use pay-as-you-go`),
			// eRDMA network, type without an elastic RDMA interface.
			step(badPool("erdma", `scenario = "molecular_dynamics"
  instance_type = "ecs.gn7i-c8g1.2xlarge"`),
				`(?s)erdma_unsupported.*gn7i-c8g1.2xlarge has no elastic RDMA interface.*Fix: Turn eRDMA off, or use a family with ERI`),
			// SCC type on a network without an HPC cluster.
			step(badPool("plain", `scenario = "ai_training"
  instance_type = "ecs.sccgn7ex.32xlarge"`),
				`(?s)hpc_cluster_required.*cannot be launched without an HPC cluster`),
			// Training on a 24 GB GPU.
			step(badPool("plain", `scenario = "ai_training"
  gpu_model = "A10"`),
				`(?s)needs at least 80 GB per GPU.*24 GB.*families that fit: ebmgn7ex`),
			// Unknown GPU model: the known ones are listed.
			step(badPool("plain", `scenario = "ai_training"
  gpu_model = "Z900"`),
				`(?s)Unknown GPU model "Z900".*known models are H100,.*A100-80GB.*T4`),
			// A GPU count the model is not offered in: the sizes that exist are listed.
			step(badPool("plain", `scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 3`),
				`(?s)A100 is not offered with 3 GPUs per node.*gn7e: 1, 2, 4, 8`),
			// ESSD PL3 below its minimum size.
			step(badPool("plain", a100+`data_disks = [{ category = "cloud_essd", performance_level = "PL3", size_gib = 1000 }]`),
				`(?s)PL3 needs at least 1261 GiB, got 1000 GiB`),
			// auto_release_after: not a duration, and below the service's 30 minutes.
			step(badPool("plain", a100+`auto_release_after = "soon"`), `(?s)Invalid auto_release_after.*not a duration`),
			step(badPool("plain", a100+`auto_release_after = "10m"`), `(?s)Invalid auto_release_after.*between 30m and 26280h`),
			// A floor above the pool.
			step(badPool("plain", a100+`min_size = 6`), `(?s)min_size above size.*min_size = 6 is more than size = 5`),
			{
				Config: base,
				Check: resource.ComposeTestCheckFunc(checkInstances(emu, 0), func(*terraform.State) error {
					if n := emu.Stats().Calls["RunInstances"]; n != 0 {
						return fmt.Errorf("plans that failed still sent %d RunInstances calls", n)
					}
					return nil
				}),
			},
		},
	})
}

// Must show: the GPU quota. The emulator (like ECS) exposes no API that reads the elastic GPU
// quota, so it cannot be checked at plan time; the apply fails with an error that says so and
// what to do, and the nodes that fitted stay in the state.
func TestAccNodePool_gpuQuota(t *testing.T) {
	emu := acctest.StartEmulator(t, func(c *emulator.Config) { c.GPUQuota = 16 })
	config := emu.Config() + poolNetworkConfig("") + poolConfig(3, "")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: wrapped(`(?s)GPU quota ran out after 2 of 3 nodes.*cannot be checked at plan time.*QuotaExceed.ElasticQuota`),
			},
			{
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 2),
					checkStateHoldsLiveInstances(emu, "gpucluster_node_pool.train"),
				),
			},
		},
	})
}

// TestAccNodePool_unknownNestedValues plans a pool whose nested attributes are unknown as a whole
// until the network exists (as they are in for_each over module variables): the plan must not
// fail, and the apply builds the nodes with the values once known.
func TestAccNodePool_unknownNestedValues(t *testing.T) {
	emu := acctest.StartEmulator(t)
	config := emu.Config() + poolNetworkConfig("") + `
locals {
  ready = gpucluster_rdma_network.net.id != ""
}
resource "gpucluster_node_pool" "train" {
  name          = "train"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  gpu_model     = "T4"
  gpus_per_node = 1
  size          = 2
  system_disk     = local.ready ? { category = "cloud_essd", performance_level = "PL1", size_gib = 120 } : null
  data_disks      = local.ready ? [{ category = "cloud_essd", performance_level = "PL3", size_gib = 1300 }] : null
  spot            = local.ready ? { strategy = "SpotAsPriceGo" } : null
  update_strategy = local.ready ? { max_unavailable = 1 } : null
  kubernetes      = local.ready ? { labels = { "example.org/team" = "cfd" } } : null
  mounts          = [for z in gpucluster_rdma_network.net.zone_ids : "nas-${z}.example:/ /mnt/${z} nfs vers=3 0 0"]
  bootstrap       = false
}
`
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("nodes"), knownvalue.ListSizeExact(2)),
				statecheck.ExpectKnownValue("gpucluster_node_pool.train", tfjsonpath.New("node_labels").AtMapKey("example.org/team"), knownvalue.StringExact("cfd")),
			},
			Check: checkInstances(emu, 2),
		}, {
			Config:           config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		}},
	})
}

// TestAccNodePool_dataDisksUnknownAtPlan gives a pool data_disks that are unknown at plan time
// (terraform_data's output is unknown whenever its input changes, as a module variable computed
// from another resource is). The plan still picks the instance type; the disk checks wait for the
// apply and stop a bad disk before any node is asked for; adding a disk to a running pool is an
// in-place update that rolls the nodes max_unavailable at a time, never a new pool.
func TestAccNodePool_dataDisksUnknownAtPlan(t *testing.T) {
	emu := acctest.StartEmulator(t, acctest.WithBootTime(time.Second))
	rec := startCallRecorder(t, emu)
	want := plannedType(t)
	config := func(disks string) string {
		return rec.Config() + poolNetworkConfig("") + `
resource "terraform_data" "disks" {
  input = ` + disks + `
}
` + poolConfig(2, `data_disks      = terraform_data.disks.output
  update_strategy = { max_unavailable = 1 }`)
	}
	const pool = "gpucluster_node_pool.train"
	typeKnownDisksNot := []plancheck.PlanCheck{
		plancheck.ExpectUnknownValue(pool, tfjsonpath.New("data_disks")),
		plancheck.ExpectKnownValue(pool, tfjsonpath.New("instance_type"), knownvalue.StringExact(want)),
	}
	var (
		poolID string
		oldIDs []string
	)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				// PL3 starts at 1,261 GiB: unknown at plan, refused at apply.
				Config:           config(`[{ category = "cloud_essd", performance_level = "PL3", size_gib = 100 }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append([]plancheck.PlanCheck{plancheck.ExpectResourceAction(pool, plancheck.ResourceActionCreate)}, typeKnownDisksNot...)},
				ExpectError:      wrapped(`Invalid disk: cloud_essd PL3 of 100 GiB`),
			},
			{
				PreConfig: func() {
					if n := len(rec.listSizes("RunInstances", "Amount")); n != 0 || emulatorLive(emu) != 0 {
						t.Fatalf("the refused disk still reached the cloud: %d RunInstances calls, %d instances", n, emulatorLive(emu))
					}
				},
				Config:           config(`null`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: typeKnownDisksNot},
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 2),
					checkRunDataDiskSizes(rec, nil),
					resource.TestCheckResourceAttrWith(pool, "id", func(v string) error { poolID = v; return nil }),
					func(*terraform.State) error { oldIDs = liveInstanceIDs(emu); return nil },
				),
			},
			{
				PreConfig: rec.reset,
				Config:    config(`[{ category = "cloud_essd", performance_level = "PL3", size_gib = 1300 }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append([]plancheck.PlanCheck{
					plancheck.ExpectResourceAction(pool, plancheck.ResourceActionUpdate),
				}, typeKnownDisksNot...)},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(pool, tfjsonpath.New("data_disks").AtSliceIndex(0).AtMapKey("size_gib"), knownvalue.Int64Exact(1300)),
				},
				Check: resource.ComposeTestCheckFunc(
					checkInstances(emu, 2),
					checkRunDataDiskSizes(rec, []string{"1300"}),
					resource.TestCheckResourceAttrWith(pool, "id", func(v string) error {
						if v != poolID {
							return fmt.Errorf("the pool is %s after adding a disk, was %s: it was replaced, not updated", v, poolID)
						}
						return nil
					}),
					func(*terraform.State) error {
						for _, id := range liveInstanceIDs(emu) {
							if slices.Contains(oldIDs, id) {
								return fmt.Errorf("node %s has no data disk: it was not rolled", id)
							}
						}
						if deletes := rec.listSizes("DeleteInstances", "InstanceId"); len(deletes) != 2 || deletes[0] != 1 || deletes[1] != 1 {
							return fmt.Errorf("the roll deleted nodes in waves %v, want two waves of max_unavailable = 1", deletes)
						}
						return nil
					},
				),
			},
			{
				Config:           config(`[{ category = "cloud_essd", performance_level = "PL3", size_gib = 1300 }]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// checkRunDataDiskSizes asserts that every RunInstances call the recorder saw asked for exactly
// these data disk sizes (DataDisk.N.Size, in order); nil means no data disk.
func checkRunDataDiskSizes(rec *callRecorder, want []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.calls["RunInstances"]) == 0 {
			return fmt.Errorf("no RunInstances call was recorded")
		}
		for _, p := range rec.calls["RunInstances"] {
			var got []string
			for i := 1; p.Has(fmt.Sprintf("DataDisk.%d.Size", i)); i++ {
				got = append(got, p.Get(fmt.Sprintf("DataDisk.%d.Size", i)))
			}
			if !slices.Equal(got, want) {
				return fmt.Errorf("RunInstances asked for data disks %v, want %v", got, want)
			}
		}
		return nil
	}
}
