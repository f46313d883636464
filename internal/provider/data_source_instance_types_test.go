package provider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
)

func TestAccInstanceTypes_batchedWithStock(t *testing.T) {
	emu := acctest.StartEmulator(t)
	const soldOut = "ecs.gn7e-c16g1.32xlarge"
	emu.SetCapacity(map[string]map[string]int{acctest.Region + "-b": {soldOut: 0}})

	gpuTypes := len(catalog.GPUInstanceTypes())
	all := "data.gpucluster_instance_types.all"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + `
data "gpucluster_instance_types" "all" {}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(all, tfjsonpath.New("region"), knownvalue.StringExact(acctest.Region)),
				statecheck.ExpectKnownValue(all, tfjsonpath.New("names"), knownvalue.ListSizeExact(gpuTypes)),
				statecheck.ExpectKnownValue(all, tfjsonpath.New("not_offered"), knownvalue.ListSizeExact(0)),
				statecheck.ExpectKnownValue(all, tfjsonpath.New("unknown_instance_types"), knownvalue.ListSizeExact(0)),
				statecheck.ExpectKnownValue(all, tfjsonpath.New("instance_types").AtSliceIndex(0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
					"name":     knownvalue.StringExact("ecs.gn6i-c4g1.xlarge"),
					"vcpu":     knownvalue.Int64Exact(4),
					"gpus":     knownvalue.Int64Exact(1),
					"gpu_spec": knownvalue.StringExact("NVIDIA T4"),
					"zones": knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{"zone_id": knownvalue.StringExact(acctest.Region + "-a"), "status": knownvalue.StringExact("Available"), "status_category": knownvalue.StringExact("WithStock")}),
						knownvalue.ObjectExact(map[string]knownvalue.Check{"zone_id": knownvalue.StringExact(acctest.Region + "-b"), "status": knownvalue.StringExact("Available"), "status_category": knownvalue.StringExact("WithStock")}),
						knownvalue.ObjectExact(map[string]knownvalue.Check{"zone_id": knownvalue.StringExact(acctest.Region + "-c"), "status": knownvalue.StringExact("Available"), "status_category": knownvalue.StringExact("WithStock")}),
					}),
				})),
			},
		}, {
			Config: emu.Config() + `
data "gpucluster_instance_types" "gn7e" {
  family   = "gn7e"
  min_gpus = 8
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.gpucluster_instance_types.gn7e", tfjsonpath.New("instance_types"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"name":          knownvalue.StringExact(soldOut),
						"gpu_memory_gb": knownvalue.Int64Exact(80),
						"gpu_spec":      knownvalue.StringExact("model not stated (A100 80 GB class)"),
						"zones": knownvalue.ListPartial(map[int]knownvalue.Check{
							1: knownvalue.ObjectExact(map[string]knownvalue.Check{"zone_id": knownvalue.StringExact(acctest.Region + "-b"), "status": knownvalue.StringExact("SoldOut"), "status_category": knownvalue.StringExact("WithoutStock")}),
						}),
						"available_zone_ids": knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(acctest.Region + "-a"), knownvalue.StringExact(acctest.Region + "-c")}),
					}),
				})),
			},
		}},
	})

	// Every read asks DescribeAvailableResource once and DescribeInstanceTypes once (one sweep, or
	// one family): the same number of calls, far fewer than one per type.
	stats := emu.Stats()
	dit, dar := stats.Calls["DescribeInstanceTypes"], stats.Calls["DescribeAvailableResource"]
	t.Logf("DescribeInstanceTypes %d calls, DescribeAvailableResource %d, for %d GPU types", dit, dar, gpuTypes)
	if dar == 0 || dit != dar {
		t.Fatalf("DescribeInstanceTypes %d calls, DescribeAvailableResource %d: want one of each per read", dit, dar)
	}
	if dit > 12 || dit >= int64(gpuTypes) {
		t.Fatalf("%d DescribeInstanceTypes calls for %d types over a few reads: the data source is not batching", dit, gpuTypes)
	}
}

// pagingFront sits in front of the emulator and splits DescribeInstanceTypes answers into pages
// of pageSize with NextToken, as the real API does for large answers; it counts the pages it
// served. The emulator pages natively once a NextToken is sent (its token is the offset of the
// next entry in base 36), so the front hands out the emulator's tokens and cuts each page from
// the head of what the emulator answered from that offset.
func pagingFront(t *testing.T, emuURL string, pageSize int) (string, *atomic.Int64) {
	t.Helper()
	target, _ := url.Parse(emuURL)
	var pages atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Header.Get("x-acs-action") != "DescribeInstanceTypes" || resp.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(body, &doc); err != nil {
			return fmt.Errorf("paging front: %w", err)
		}
		list, _ := doc["InstanceTypes"].(map[string]any)["InstanceType"].([]any)
		var offset int64
		if tok := resp.Request.URL.Query().Get("NextToken"); tok != "" {
			if offset, err = strconv.ParseInt(tok, 36, 32); err != nil {
				return fmt.Errorf("paging front: bad NextToken %q", tok)
			}
		}
		end := min(pageSize, len(list))
		doc["InstanceTypes"] = map[string]any{"InstanceType": list[:end]}
		doc["NextToken"] = ""
		if end < len(list) {
			doc["NextToken"] = strconv.FormatInt(offset+int64(end), 36)
		}
		pages.Add(1)
		out, _ := json.Marshal(doc)
		resp.Body = io.NopCloser(bytes.NewReader(out))
		resp.ContentLength = int64(len(out))
		resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	return front.URL, &pages
}

func TestAccInstanceTypes_pagedPerFamily(t *testing.T) {
	emu := acctest.StartEmulator(t)
	// ebmgn8v sold out everywhere: in_stock_only drops it.
	emu.SetCapacity(map[string]map[string]int{
		acctest.Region + "-a": {"ecs.ebmgn8v.48xlarge": 0},
		acctest.Region + "-b": {"ecs.ebmgn8v.48xlarge": 0},
		acctest.Region + "-c": {"ecs.ebmgn8v.48xlarge": 0},
	})
	frontURL, pages := pagingFront(t, emu.URL, 5)
	h100 := "data.gpucluster_instance_types.h100"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: acctest.ProviderBlock(frontURL, acctest.AccessKey, acctest.SecretKey) + `
data "gpucluster_instance_types" "h100" {
  gpu_model     = "H100"
  in_stock_only = true
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				// gn8v has 8 sizes: two pages of 5 and 3, all collected; then gn8v-tee's 4 in one page.
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("names"), knownvalue.ListSizeExact(12)),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("names").AtSliceIndex(11), knownvalue.StringExact("ecs.gn8v-tee-8x.48xlarge")),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("names").AtSliceIndex(7), knownvalue.StringExact("ecs.gn8v-8x.48xlarge")),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("instance_types").AtSliceIndex(0).AtMapKey("gpu_spec"),
					knownvalue.StringRegexp(regexp.MustCompile(`^model not stated \(Hopper class`))),
				statecheck.ExpectKnownValue(h100, tfjsonpath.New("findings").AtSliceIndex(0).AtMapKey("message"),
					knownvalue.StringRegexp(regexp.MustCompile(`publishes no FP64 or tensor throughput`))),
			},
		}},
	})
	// Per read: gn8v in 2 pages, ebmgn8v and gn8v-tee in 1 each, and one DescribeAvailableResource.
	stats := emu.Stats()
	dit, dar := stats.Calls["DescribeInstanceTypes"], stats.Calls["DescribeAvailableResource"]
	t.Logf("DescribeInstanceTypes %d calls (%d pages served), DescribeAvailableResource %d", dit, pages.Load(), dar)
	if dar == 0 || dit != 4*dar || pages.Load() != dit {
		t.Fatalf("DescribeInstanceTypes %d calls (%d pages served), DescribeAvailableResource %d: want 4 pages per read", dit, pages.Load(), dar)
	}
}

func TestAccInstanceTypes_unknownModel(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + `
data "gpucluster_instance_types" "x" {
  gpu_model = "RTX4090"
}
`,
			ExpectError: regexp.MustCompile(`(?s)Unknown GPU model.*"RTX4090".*known models are H100`),
		}},
	})
	if got := emu.Stats().Total; got != 0 {
		t.Fatalf("the emulator saw %d calls; an unknown model must fail before any API call", got)
	}
}

func TestAccInstanceTypes_example(t *testing.T) {
	emu := acctest.StartEmulator(t)
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		Steps: []resource.TestStep{{
			Config: emu.Config() + exampleConfig(t, "data-sources/gpucluster_instance_types/data-source.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("hopper_stock", knownvalue.MapPartial(map[string]knownvalue.Check{
					"ecs.gn8v-8x.48xlarge": knownvalue.ListSizeExact(3),
				})),
				statecheck.ExpectKnownOutputValue("not_offered", knownvalue.ListSizeExact(0)),
			},
		}},
	})
}
