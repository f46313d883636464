package provider_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
)

// badInput is one wrong configuration of the matrix. It must fail at plan (or validate) time
// with a diagnostic that names attr and says how to fix it (fix), and leave the emulator as it
// found it: no resource appears or goes, and no create call is sent.
type badInput struct {
	name string
	// setup is applied in a first step, for checks that need something to exist already (a
	// network whose placement a pool's plan checks). The snapshot is taken after it.
	setup string
	// emulator, when set, prepares the emulator's catalog after its reset (a type sold without
	// spot).
	emulator func(*acctest.Emulator)
	// config is the wrong configuration (with setup in front of it when there is one).
	config string
	// provider replaces the emulator's provider block (wrong credentials, dead endpoint).
	provider string
	// module rows call a module of modules/ and need the provider under its registry name.
	module bool
	// attr and fix are regular expressions: the attribute the diagnostic names and the words
	// that say what to do instead. Spaces match any run of white space (the CLI wraps lines).
	attr, fix string
}

// planOnlyNetworkID is a network id for rows that fail before anything looks it up.
const planOnlyNetworkID = "vpc-never-looked-up"

func badNetwork(attrs string) string {
	return `
resource "gpucluster_rdma_network" "bad" {
` + attrs + `
}
`
}

func badNet(extra string) string {
	return badNetwork(`  name       = "bad-net"
  cidr_block = "10.0.0.0/16"
  zone_ids   = ["cn-wulanchabu-a", "cn-wulanchabu-b"]
  ` + extra)
}

func badNodePool(network, attrs string) string {
	return fmt.Sprintf(`
resource "gpucluster_node_pool" "bad" {
  network_id = %s
  %s
}
`, network, attrs)
}

// a100Pool is a valid pool body but for extra, on a network id nothing looks up.
func a100Pool(extra string) string {
	return badNodePool(fmt.Sprintf("%q", planOnlyNetworkID), `name          = "bad"
  scenario      = "ai_training"
  gpu_model     = "A100"
  gpus_per_node = 8
  size          = 2
  `+extra)
}

// controlPlanePool is a control-plane pool on a network id nothing looks up; extra goes in the
// pool, k8s in its kubernetes block.
func controlPlanePool(extra string, k8s ...string) string {
	return badNodePool(fmt.Sprintf("%q", planOnlyNetworkID), `name          = "cp"
  scenario      = "engineering_simulation"
  instance_type = "ecs.g7.2xlarge"
  `+extra+`
  kubernetes = {
    role = "control_plane"
    `+strings.Join(k8s, "\n    ")+`
  }`)
}

// badEndpoint is a control plane endpoint on a network that does not exist, with attrs.
func badEndpoint(attrs string) string {
	return `
resource "gpucluster_control_plane_endpoint" "bad" {
  network_id = "sg-doesnotexist"
  ` + attrs + `
}
`
}

// onNewNetwork is a pool on a network planned in the same run: its id is unknown at plan time,
// so the pool's plan runs the checks that need no network (the catalog's) and stops there.
func onNewNetwork(attrs string) string {
	return `
resource "gpucluster_rdma_network" "new" {
  name       = "new-net"
  cidr_block = "10.40.0.0/16"
  zone_ids   = ["cn-wulanchabu-a"]
}
` + badNodePool("gpucluster_rdma_network.new.id", attrs)
}

func badTier(body string) string {
	return "\nresource \"gpucluster_storage_tier\" \"bad\" {\n" + body + "\n}\n"
}

const (
	matrixPlainNet = `
resource "gpucluster_rdma_network" "plain" {
  name       = "plain"
  cidr_block = "10.30.0.0/16"
  zone_ids   = ["cn-wulanchabu-a"]
}
`
	matrixLowLatNet = `
resource "gpucluster_rdma_network" "lowlat" {
  name       = "lowlat"
  cidr_block = "10.31.0.0/16"
  zone_ids   = ["cn-wulanchabu-a"]
  placement  = "low_latency"
}
`
	matrixERDMANet = `
resource "gpucluster_rdma_network" "erdma" {
  name       = "erdma"
  cidr_block = "10.32.0.0/16"
  zone_ids   = ["cn-wulanchabu-a"]
  erdma      = true
}
`
	matrixNoEgressNet = `
resource "gpucluster_rdma_network" "closed" {
  name       = "closed"
  cidr_block = "10.33.0.0/16"
  zone_ids   = ["cn-wulanchabu-a"]
  egress     = { mode = "none" }
}
`
	matrixToken = "abcdef.0123456789abcdef"
)

// matrixSeed is a well-formed cluster CA seed for rows that break something else.
const matrixSeed = "0123456789abcdef0123456789abcdef"

func badCA(attrs string) string {
	return "\nresource \"gpucluster_cluster_ca\" \"bad\" {\n  " + attrs + "\n}\n"
}

// badEphemeralCA is an ephemeral gpucluster_cluster_ca; the CLI opens it during the plan.
func badEphemeralCA(attrs string) string {
	return "\nephemeral \"gpucluster_cluster_ca\" \"bad\" {\n  " + attrs + "\n}\n"
}

func badModule(module, inputs string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    gpucluster = { source = "gpucluster/gpucluster" }
  }
}

module "bad" {
  source = "%s/%s"
  %s
}
`, acctest.ModulesDir(), module, inputs)
}

func badInputs(deadEndpoint string) []badInput {
	long := strings.Repeat("n", 65)
	return []badInput{
		// --- gpucluster_rdma_network
		{name: "network/malformed cidr_block", config: badNetwork(`  name = "bad-net"
  cidr_block = "10.0.0/16"
  zone_ids = ["cn-wulanchabu-a"]`),
			attr: `Invalid cidr_block`, fix: `such as 10\.0\.0\.0/16`},
		{name: "network/public cidr_block", config: badNetwork(`  name = "bad-net"
  cidr_block = "8.8.0.0/16"
  zone_ids = ["cn-wulanchabu-a"]`),
			attr: `Invalid cidr_block`, fix: `must lie inside 10\.0\.0\.0/8, 172\.16\.0\.0/12 or 192\.168\.0\.0/16`},
		{name: "network/cidr_block host bits", config: badNetwork(`  name = "bad-net"
  cidr_block = "10.0.0.1/16"
  zone_ids = ["cn-wulanchabu-a"]`),
			attr: `Invalid cidr_block`, fix: `host bits set; the block is 10\.0\.0\.0/16`},
		{name: "network/cidr_block too small for its zones", config: badNetwork(`  name = "bad-net"
  cidr_block = "10.0.0.0/28"
  zone_ids = ["cn-wulanchabu-a", "cn-wulanchabu-b", "cn-wulanchabu-c"]`),
			attr: `cidr_block cannot hold the zones`, fix: `give a larger cidr_block or set vswitch_cidrs`},
		{name: "network/overlapping vswitch_cidrs", config: badNet(`vswitch_cidrs = { "cn-wulanchabu-a" = "10.0.0.0/20", "cn-wulanchabu-b" = "10.0.8.0/24" }`),
			attr: `Invalid vswitch_cidrs`, fix: `vSwitch blocks must not overlap`},
		{name: "network/vswitch_cidrs outside cidr_block", config: badNet(`vswitch_cidrs = { "cn-wulanchabu-a" = "10.0.0.0/24", "cn-wulanchabu-b" = "10.1.0.0/24" }`),
			attr: `Invalid vswitch_cidrs`, fix: `each vSwitch block must lie inside it`},
		{name: "network/vswitch_cidrs for a zone not in zone_ids", config: badNet(`vswitch_cidrs = { "cn-wulanchabu-a" = "10.0.0.0/24", "cn-wulanchabu-c" = "10.0.1.0/24" }`),
			attr: `vswitch_cidrs`, fix: `every key of vswitch_cidrs must be a zone of zone_ids`},
		{name: "network/egress mode unknown", config: badNet(`egress = { mode = "open" }`),
			attr: `egress\.mode`, fix: `value must be one of: \["nat" "none" "existing"\]`},
		{name: "network/egress charge type unknown", config: badNet(`egress = { internet_charge_type = "PayByHour" }`),
			attr: `egress\.internet_charge_type`, fix: `value must be one of: \["PayByBandwidth" "PayByTraffic"\]`},
		{name: "network/egress bandwidth above one EIP", config: badNet(`egress = { bandwidth_mbps = 1000 }`),
			attr: `egress\.bandwidth_mbps = 1000`, fix: `outside 1-500 Mbit/s.*Internet Shared Bandwidth plan`},
		{name: "network/egress bandwidth above PayByTraffic's ceiling", config: badNet(`egress = { internet_charge_type = "PayByTraffic", bandwidth_mbps = 300 }`),
			attr: `egress\.bandwidth_mbps = 300`, fix: `outside 1-200 Mbit/s.*PayByBandwidth allows up to 500`},
		{name: "network/egress bandwidth zero", config: badNet(`egress = { bandwidth_mbps = 0 }`),
			attr: `egress\.bandwidth_mbps = 0`, fix: `choose a bandwidth in that range`},
		{name: "network/egress bandwidth without a NAT gateway", config: badNet(`egress = { mode = "none", bandwidth_mbps = 100 }`),
			attr: `egress\.bandwidth_mbps`, fix: `Remove egress\.bandwidth_mbps, or set egress\.mode = "nat"`},
		{name: "network/zone outside the region", config: badNetwork(`  name = "bad-net"
  cidr_block = "10.0.0.0/16"
  zone_ids = ["cn-hangzhou-a"]`),
			attr: `zone_ids`, fix: `Use zones of cn-wulanchabu \(the gpucluster_zones data source lists them\)`},
		{name: "network/unknown zone of the region", config: badNetwork(`  name = "bad-net"
  cidr_block = "10.0.0.0/16"
  zone_ids = ["cn-wulanchabu-q"]`),
			attr: `zone_ids`, fix: `its zones are \[cn-wulanchabu-a`},
		{name: "network/malformed zone id", config: badNetwork(`  name = "bad-net"
  cidr_block = "10.0.0.0/16"
  zone_ids = ["zone1"]`),
			attr: `zone_ids`, fix: `zone ids look like cn-wulanchabu-a`},
		{name: "network/public SSH without opt-in", config: badNet(`admin_cidrs = ["0.0.0.0/0"]`),
			attr: `admin_cidrs`, fix: `set allow_public_ssh = true to accept the exposure`},
		{name: "network/malformed admin_cidrs", config: badNet(`admin_cidrs = ["203.0.113.7"]`),
			attr: `Invalid admin_cidrs`, fix: `such as 10\.0\.0\.0/16`},
		{name: "network/placement_groups without placement", config: badNet(`placement_groups = 2`),
			attr: `placement_groups`, fix: `needs placement = "low_latency" or "spread"`},
		{name: "network/reserved tag key", config: badNet(`tags = { "gpucluster:network" = "mine" }`),
			attr: `tags`, fix: `are the provider's own; rename "gpucluster:network"`},
		{name: "network/empty name", config: badNetwork(`  name = ""
  cidr_block = "10.0.0.0/16"
  zone_ids = ["cn-wulanchabu-a"]`),
			attr: `Attribute name`, fix: `2-64 characters`},
		{name: "network/name over 64 characters", config: badNetwork(`  name = "` + long + `"
  cidr_block = "10.0.0.0/16"
  zone_ids = ["cn-wulanchabu-a"]`),
			attr: `Attribute name`, fix: `2-64 characters`},
		{name: "network/vpc_id that does not exist", config: badNet(`vpc_id = "vpc-doesnotexist"`),
			attr: `vpc_id`, fix: `Give an existing VPC's id, or leave vpc_id out to create one`},

		// --- gpucluster_node_pool
		{name: "pool/unknown GPU model", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "bad"
  scenario = "ai_training"
  gpu_model = "Z900"
  size = 2`),
			attr: `gpu_model`, fix: `known models are H100`},
		{name: "pool/gpus_per_node the model is not offered in", config: onNewNetwork(`name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 3
  size = 2`),
			attr: `gpus_per_node`, fix: `sizes that exist \(GPUs per node by family\): .*gn7e: 1, 2, 4, 8`},
		{name: "pool/gpus_per_node zero", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 0
  size = 2`),
			attr: `gpus_per_node`, fix: `must be between 1 and 16`},
		{name: "pool/size zero", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  size = 0`),
			attr: `Attribute size`, fix: `must be between 1 and 10000`},
		{name: "pool/size above the limit", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  size = 10001`),
			attr: `Attribute size`, fix: `must be between 1 and 10000`},
		{name: "pool/min_size above size", config: a100Pool(`min_size = 3`),
			attr: `min_size`, fix: `Lower min_size or raise size`},
		{name: "pool/PL3 below its minimum size", config: a100Pool(`data_disks = [{ category = "cloud_essd", performance_level = "PL3", size_gib = 1000 }]`),
			attr: `data_disks`, fix: `PL3 needs at least 1261 GiB`},
		{name: "pool/system disk below its minimum", config: a100Pool(`system_disk = { category = "cloud_essd", performance_level = "PL1", size_gib = 10 }`),
			attr: `system_disk`, fix: `use PL0 for 10 GiB or grow the disk to 20 GiB`},
		{name: "pool/acceptance without kubernetes", config: a100Pool(`acceptance = { control_plane_pool = "cp" }`),
			attr: `acceptance`, fix: `the checks run as Kubernetes Jobs on the pool's nodes. Add the kubernetes block`},
		{name: "pool/acceptance without control_plane_pool", config: a100Pool(`acceptance = {}
  kubernetes = { api_endpoint = "10.0.0.1:6443", join_token = "abcdef.0123456789abcdef", insecure_skip_ca_verification = true }`),
			attr: `acceptance.control_plane_pool`, fix: `Set it to the control-plane pool's name`},
		{name: "pool/acceptance timeout too short", config: a100Pool(`acceptance = { control_plane_pool = "cp", timeout = "1m" }
  kubernetes = { api_endpoint = "10.0.0.1:6443", join_token = "abcdef.0123456789abcdef", insecure_skip_ca_verification = true }`),
			attr: `acceptance.timeout`, fix: `Give one such as "30m"`},
		{name: "pool/join_timeout not a duration", config: a100Pool(`update_strategy = { max_unavailable = 1, join_timeout = "20 minutes" }`),
			attr: `update_strategy.join_timeout`, fix: `write it like "20m" or "1h"`},
		{name: "pool/join_timeout over a day", config: a100Pool(`update_strategy = { max_unavailable = 1, join_timeout = "25h" }`),
			attr: `update_strategy.join_timeout`, fix: `"0s" rolls without waiting`},
		{name: "pool/drain_timeout negative", config: a100Pool(`update_strategy = { max_unavailable = 1, drain_timeout = "-5m" }`),
			attr: `update_strategy.drain_timeout`, fix: `write it like "15m" or "1h"`},
		{name: "pool/malformed auto_release_after", config: a100Pool(`auto_release_after = "3 days"`),
			attr: `auto_release_after`, fix: `write it like "72h" or "90m"`},
		{name: "pool/auto_release_after below 30 minutes", config: a100Pool(`auto_release_after = "10m"`),
			attr: `auto_release_after`, fix: `give between 30m and 26280h`},
		{name: "pool/empty name", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = ""
  scenario = "ai_training"
  gpu_model = "A100"
  size = 2`),
			attr: `Attribute name`, fix: `length must be between 2 and 64`},
		{name: "pool/name over 64 characters", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "`+long+`"
  scenario = "ai_training"
  gpu_model = "A100"
  size = 2`),
			attr: `Attribute name`, fix: `length must be between 2 and 64`},
		{name: "pool/gpu_model and instance_type both", config: a100Pool(`instance_type = "ecs.gn7e-c16g1.32xlarge"`),
			attr: `gpu_model.*instance_type|instance_type.*gpu_model`, fix: `(?i)exactly one`},
		{name: "pool/unknown instance type", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "bad"
  scenario = "ai_training"
  instance_type = "ecs.gn7e-c16g1.64xlarge"
  size = 2`),
			attr: `instance_type`, fix: `family gn7e has ecs\.gn7e-c16g1\.4xlarge`},
		{name: "pool/spot price limit without a price", config: a100Pool(`spot = { strategy = "SpotWithPriceLimit" }`),
			attr: `max_hourly_price`, fix: `Set spot\.max_hourly_price`},
		{name: "pool/malformed join token", config: onNewNetwork(`name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 8
  size = 2
  kubernetes = { api_endpoint = "10.0.0.10:6443", join_token = "Not-A-Token" }`),
			attr: `kubernetes\.join_token`, fix: `kubeadm token generate`},
		{name: "pool/image_registry with a scheme", config: onNewNetwork(`name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 8
  size = 2
  kubernetes = { api_endpoint = "10.0.0.10:6443", join_token = "` + matrixToken + `", insecure_skip_ca_verification = true, image_registry = "https://example.cn/mirror" }`),
			attr: `kubernetes\.image_registry`, fix: `has a scheme`},
		{name: "pool/reserved tag", config: a100Pool(`tags = { "gpucluster:pool-name" = "other" }`),
			attr: `tags`, fix: `Use another prefix`},
		{name: "pool/built-in label as a tag", config: a100Pool(`tags = { "nvidia.com/gpu.product" = "A100" }`),
			attr: `tags`, fix: `Node labels of your own go in kubernetes\.labels`},
		{name: "pool/more tags than a node can carry", config: onNewNetwork(`name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 8
  size = 2
  tags = {` + manyTags(15) + `}`),
			attr: `tags`, fix: `(?s)Every node of this pool would carry 22 tags: 7 of the provider's own \(one of\s+them kept free for\s+gpucluster:replace-requested.*\) and the 15 of tags\. ECS allows 20\s+per instance: drop 2 of tags`},
		{name: "pool/training on a 24 GB GPU", config: onNewNetwork(`name = "bad"
  scenario = "ai_training"
  gpu_model = "A10"
  size = 2`),
			attr: `gpu_model`, fix: `families that fit: ebmgn7ex`},
		{name: "pool/spot in a low-latency network", setup: matrixLowLatNet,
			config: badNodePool("gpucluster_rdma_network.lowlat.id", `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 8
  size = 2
  spot = { strategy = "SpotAsPriceGo" }`),
			attr: `spot`, fix: `Fix: Use pay-as-you-go`},
		{name: "pool/autoscaling min_size above max_size", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  autoscaling = { min_size = 5, max_size = 3 }`),
			attr: `autoscaling\.min_size`, fix: `Lower min_size or raise max_size`},
		{name: "pool/autoscaling max_size over the scaling group quota", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  autoscaling = { min_size = 0, max_size = 2001 }`),
			attr: `autoscaling\.max_size`, fix: `must be between 1 and 2000`},
		{name: "pool/size and autoscaling both", config: a100Pool(`autoscaling = { min_size = 0, max_size = 3 }`),
			attr: `size.*autoscaling|autoscaling.*size`, fix: `(?i)exactly one`},
		{name: "pool/autoscaling spot mix without spot", config: badNodePool(`"`+planOnlyNetworkID+`"`, `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  autoscaling = { min_size = 0, max_size = 3, on_demand_percentage = 50 }`),
			attr: `autoscaling\.on_demand_percentage`, fix: `Add spot = \{ strategy = "SpotAsPriceGo" \}`},
		{name: "pool/autoscaling spot on a type sold without spot", setup: matrixPlainNet,
			emulator: func(emu *acctest.Emulator) {
				if err := emu.SetNoSpot([]string{"ecs.gn7i-c8g1.2xlarge"}); err != nil {
					panic(err)
				}
			},
			config: badNodePool("gpucluster_rdma_network.plain.id", `name = "bad"
  scenario = "molecular_dynamics"
  instance_type = "ecs.gn7i-c8g1.2xlarge"
  spot = { strategy = "SpotAsPriceGo" }
  autoscaling = { min_size = 0, max_size = 3 }`),
			attr: `spot = \{ strategy = "SpotAsPriceGo" \}`,
			fix:  `sells ecs\.gn7i-c8g1\.2xlarge pay-as-you-go only in zone\(s\) cn-wulanchabu-a.*Pin another instance_type .*remove spot, or set autoscaling\.on_demand_percentage = 100`},
		{name: "pool/autoscaling over budget at max_size", setup: matrixLowLatNet,
			config: badNodePool("gpucluster_rdma_network.lowlat.id", `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 8
  autoscaling = { min_size = 0, max_size = 50, max_hourly_price = 10 }`),
			attr: `autoscaling\.max_hourly_price`, fix: `Lower max_size to \d+ or less, or raise max_hourly_price`},
		{name: "pool/eRDMA network, family without ERI", setup: matrixERDMANet,
			config: badNodePool("gpucluster_rdma_network.erdma.id", `name = "bad"
  scenario = "molecular_dynamics"
  instance_type = "ecs.gn7i-c8g1.2xlarge"
  size = 2`),
			attr: `network_id`, fix: `Fix: Turn eRDMA off, or use a family with ERI`},
		{name: "pool/SCC type without an HPC cluster", setup: matrixPlainNet,
			config: badNodePool("gpucluster_rdma_network.plain.id", `name = "bad"
  scenario = "ai_training"
  instance_type = "ecs.sccgn7ex.32xlarge"
  size = 2`),
			attr: `network_id`, fix: `set hpc_cluster = true on the gpucluster_rdma_network of network_id`},
		{name: "pool/package_mirror unknown", config: a100Pool(`package_mirror = "tsinghua"`),
			attr: `package_mirror`, fix: `value must be one of: \["internet" "alibaba_vpc"\]`},
		{name: "pool/internet bootstrap on a network without egress", setup: matrixNoEgressNet,
			config: badNodePool("gpucluster_rdma_network.closed.id", `name = "bad"
  scenario = "engineering_simulation"
  instance_type = "ecs.g7.2xlarge"
  size = 1
  package_mirror = "alibaba_vpc"
  kubernetes = { role = "control_plane", join_token = "`+matrixToken+`", image_registry = "" }`),
			attr: `package_mirror.*egress\.mode = "none"`, fix: `set egress = \{ mode = "nat" \} on the network`},
		{name: "pool/zone the network does not cover", setup: matrixPlainNet,
			config: badNodePool("gpucluster_rdma_network.plain.id", `name = "bad"
  scenario = "ai_training"
  gpu_model = "A100"
  gpus_per_node = 8
  size = 2
  zone_ids = ["cn-wulanchabu-b"]`),
			attr: `zone_ids`, fix: `Use those zones, or add "cn-wulanchabu-b" to the network's zone_ids`},

		{name: "pool/control plane of 2 nodes", config: controlPlanePool(`size = 2
  bootstrap = false`),
			attr: `size = 2: a control plane runs etcd`, fix: `Use size = 1 \(no high availability\), 3 \(survives one node lost\) or 5`},
		{name: "pool/control plane of 3 without a load balancer", config: controlPlanePool(`size = 3
  bootstrap = false`),
			attr: `kubernetes\.load_balancer_id`, fix: `Add a gpucluster_control_plane_endpoint and set kubernetes\.load_balancer_id`},
		{name: "pool/first control-plane pool of 3 nodes", config: controlPlanePool(`size = 3`),
			attr: `size = 3 on the first control-plane pool`, fix: `Use size = 1 here; for a highly available control plane of 3, add a second control-plane pool of size = 2 with control_plane_init = false`},
		{name: "pool/joining control-plane pool of 3 nodes", config: controlPlanePool(`size = 3`, `control_plane_init = false`, `load_balancer_id = "lb-0123456789"`, `certificate_key = "`+strings.Repeat("ab", 32)+`"`),
			attr: `size = 3 with control_plane_init = false`, fix: `Use size = 2 \(3 members, survives one lost\) or 4`},
		{name: "pool/joining control-plane pool without a load balancer", config: controlPlanePool(`size = 2`, `control_plane_init = false`, `certificate_key = "`+strings.Repeat("ab", 32)+`"`),
			attr: `kubernetes\.load_balancer_id`, fix: `Set kubernetes\.load_balancer_id = gpucluster_control_plane_endpoint\.<name>\.load_balancer_id`},
		{name: "pool/joining control-plane pool without a certificate key", config: controlPlanePool(`size = 2`, `control_plane_init = false`, `load_balancer_id = "lb-0123456789"`),
			attr: `kubernetes\.certificate_key`, fix: `Set kubernetes\.certificate_key = gpucluster_cluster_ca\.<name>\.certificate_key`},
		{name: "pool/load_balancer_id on GPU workers", config: a100Pool(`kubernetes = { load_balancer_id = "lb-0123456789" }`),
			attr: `kubernetes\.load_balancer_id`, fix: `Remove it here, or set kubernetes\.role = "control_plane"`},
		{name: "pool/malformed load_balancer_id", config: controlPlanePool(`size = 1`, `load_balancer_id = "np-0123456789ab"`),
			attr: `kubernetes\.load_balancer_id`, fix: `must be a load balancer id such as lb-`},

		// --- gpucluster_control_plane_endpoint
		{name: "endpoint/empty name", config: badEndpoint(`name = ""`),
			attr: `Attribute name`, fix: `length must be between 2 and 80`},
		{name: "endpoint/name with a space", config: badEndpoint(`name = "api server"`),
			attr: `Attribute name`, fix: `must start with a letter and hold only letters, digits`},
		{name: "endpoint/unknown load_balancer_spec", config: badEndpoint(`name = "api"
  load_balancer_spec = "slb.s9.huge"`),
			attr: `load_balancer_spec`, fix: `value must be one of:.*slb\.s1\.small`},
		{name: "endpoint/reserved tag", config: badEndpoint(`name = "api"
  tags = { "gpucluster:network-id" = "sg-1" }`),
			attr: `tags`, fix: `Use another prefix`},
		{name: "endpoint/network that does not exist", config: badEndpoint(`name = "api"`),
			attr: `network_id`, fix: `create the gpucluster_rdma_network first, or fix network_id`},
		{name: "endpoint/vswitch_id outside the network", setup: matrixPlainNet, config: `
resource "gpucluster_control_plane_endpoint" "bad" {
  name       = "api"
  network_id = gpucluster_rdma_network.plain.id
  vswitch_id = "vsw-elsewhere"
}
`,
			attr: `vswitch_id`, fix: `Use one of those, or leave vswitch_id out for the first`},

		// --- gpucluster_storage_tier
		{name: "storage/capacity above the backend's maximum", config: badTier(`  name = "hot-x"
  tier = "hot"
  backend = "nas_extreme_advance"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 300`),
			attr: `backend`, fix: `allows at most 256 TiB, 300 TiB asked`},
		{name: "storage/capacity zero", config: badTier(`  name = "cold-x"
  tier = "cold"
  capacity_tib = 0`),
			attr: `Attribute capacity_tib`, fix: `must be at least 1`},
		{name: "storage/unreachable IOPS", config: badTier(`  name = "hot-x"
  tier = "hot"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 10
  min_iops = 2000000`),
			attr: `min_iops`, fix: `best reachable`},
		{name: "storage/unreachable throughput", config: badTier(`  name = "warm-x"
  tier = "warm"
  backend = "nas_capacity"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 100
  min_throughput_gbps = 12`),
			attr: `min_throughput_gbps`, fix: `best reachable`},
		{name: "storage/lifecycle out of order", config: badTier(`  name = "cold-x"
  tier = "cold"
  capacity_tib = 1
  object_lifecycle = { ia_after_days = 60, archive_after_days = 30 }`),
			attr: `archive_after_days`, fix: `is not after ia_after_days`},
		{name: "storage/lifecycle minimum storage duration", config: badTier(`  name = "cold-x"
  tier = "cold"
  capacity_tib = 1
  object_lifecycle = { cold_archive_after_days = 200, expire_after_days = 300 }`),
			attr: `expire_after_days`, fix: `set expire_after_days to 380 or more`},
		{name: "storage/cache on a hot tier", config: badTier(`  name = "hot-x"
  tier = "hot"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 10
  cache = { size_gib = 100 }`),
			attr: `cache`, fix: `Remove cache, or use tier = "cold"`},
		{name: "storage/OSS backend for a warm tier", config: badTier(`  name = "warm-x"
  tier = "warm"
  backend = "oss"
  vswitch_id = "vsw-doesnotmatter"
  capacity_tib = 10`),
			attr: `backend`, fix: `hot and warm tiers take a file system \(cpfs_advance_100`},
		{name: "storage/reserved tag key", config: badTier(`  name = "cold-x"
  tier = "cold"
  capacity_tib = 1
  tags = { "gpucluster:storage-tier" = "other" }`),
			attr: `tags`, fix: `gpucluster:storage-tier`},
		{name: "storage/empty name", config: badTier(`  name = ""
  tier = "cold"
  capacity_tib = 1`),
			attr: `Attribute name`, fix: `3-63 lowercase letters, digits and hyphens`},
		{name: "storage/bucket name over 63 characters", config: badTier(`  name = "` + strings.Repeat("b", 64) + `"
  tier = "cold"
  capacity_tib = 1`),
			attr: `Attribute name`, fix: `3-63 lowercase letters, digits and hyphens`},
		{name: "storage/file system tier without a place to mount", config: badTier(`  name = "hot-x"
  tier = "hot"
  capacity_tib = 10`),
			attr: `No network for the mount target`, fix: `set network_id \(a gpucluster_rdma_network id\) or vswitch_id`},

		// --- gpucluster_cluster_ca (resource and ephemeral resource)
		{name: "cluster_ca/unknown key_algorithm", config: badCA(`key_algorithm = "RSA-1024"`),
			attr: `Invalid key_algorithm`, fix: `use one of ECDSA-P256, ECDSA-P384, RSA-2048, RSA-3072, RSA-4096`},
		{name: "cluster_ca/malformed validity_period", config: badCA(`validity_period = "10y"`),
			attr: `Invalid validity_period`, fix: `write hours, such as "87600h" for ten years`},
		{name: "cluster_ca/validity_period under a year", config: badCA(`validity_period = "720h"`),
			attr: `Invalid validity_period`, fix: `give at least 8760h \(one year\)`},
		{name: "cluster_ca/seed_wo too short", config: badCA(`seed_wo = "short"`),
			attr: `seed_wo`, fix: `Generate one with .openssl rand -hex 32.`},
		{name: "cluster_ca/seed_wo_version without seed_wo", config: badCA(`seed_wo_version = 1`),
			attr: `seed_wo_version`, fix: `"seed_wo" must be specified`},
		{name: "cluster_ca/import", config: badCA("") + `
import {
  to = gpucluster_cluster_ca.bad
  id = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
}
`, attr: `gpucluster_cluster_ca cannot be imported`, fix: `let the resource create the CA`},
		{name: "ephemeral cluster_ca/seed too short", config: badEphemeralCA(`seed = "short"`),
			attr: `seed`, fix: `Generate one with .openssl rand -hex 32.`},
		{name: "ephemeral cluster_ca/unknown key_algorithm", config: badEphemeralCA(`seed = "` + matrixSeed + `"
  key_algorithm = "ED25519"`),
			attr: `Invalid key_algorithm`, fix: `use one of ECDSA-P256`},
		{name: "ephemeral cluster_ca/malformed cert_pem", config: badEphemeralCA(`seed = "` + matrixSeed + `"
  cert_pem = "not a certificate"`),
			attr: `Invalid cert_pem`, fix: `give the gpucluster_cluster_ca resource's cert_pem`},
		{name: "ephemeral cluster_ca/seed of another CA", setup: `
resource "gpucluster_cluster_ca" "other" {}
`, config: badEphemeralCA(`seed = "` + matrixSeed + `"
  cert_pem = gpucluster_cluster_ca.other.cert_pem`),
			attr: `seed`, fix: `Give the seed and key_algorithm the gpucluster_cluster_ca resource was made with`},

		// --- data sources
		{name: "data gpu_catalog/unknown GPU model", config: `
data "gpucluster_gpu_catalog" "x" {
  gpu_model = "B200"
}
`, attr: `gpu_model`, fix: `known models are H100`},
		{name: "data instance_types/unknown GPU model", config: `
data "gpucluster_instance_types" "x" {
  gpu_model = "RTX4090"
}
`, attr: `gpu_model`, fix: `known models are H100`},
		{name: "data scenario/unknown scenario", config: `
data "gpucluster_scenario" "x" {
  name = "weather_forecasting"
}
`, attr: `Attribute name`, fix: `value must be one of.*"ai_training"`},
		{name: "data scenario/GPU too small for the scenario", config: `
data "gpucluster_scenario" "x" {
  name      = "ai_training"
  gpu_model = "T4"
}
`, attr: `gpu_model`, fix: `Use a family with enough GPU memory`},
		{name: "data kubernetes_manifests/malformed max_runtime", config: `
data "gpucluster_kubernetes_manifests" "x" {
  scenario      = "ai_training"
  node_count    = 2
  gpus_per_node = 8
  max_runtime   = "3 days"
}
`, attr: `max_runtime`, fix: `write hours, such as "72h"`},
		{name: "data kubernetes_manifests/bad namespace", config: `
data "gpucluster_kubernetes_manifests" "x" {
  scenario           = "ai_training"
  node_count         = 2
  gpus_per_node      = 8
  workload_namespace = "GPU_Work"
}
`, attr: `workload_namespace`, fix: `use lower case letters, digits and '-', such as gpu-system`},
		{name: "data kubernetes_manifests/team quotas over the pool", config: `
data "gpucluster_kubernetes_manifests" "x" {
  scenario      = "molecular_dynamics"
  node_count    = 2
  gpus_per_node = 8
  mpi = {
    pools = { md-gpu = { node_count = 2, gpus_per_node = 8 } }
    teams = { chem = { gpus = 12 }, bio = { gpus = 8 } }
  }
}
`, attr: `mpi\.teams`, fix: `lower the teams' gpus to a sum of at most 16`},
		{name: "data kubernetes_manifests/image_registry with a scheme", config: `
data "gpucluster_kubernetes_manifests" "x" {
  scenario       = "ai_training"
  node_count     = 2
  gpus_per_node  = 8
  image_registry = "https://registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster"
}
`, attr: `image_registry`, fix: `use a registry and namespace such as registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster`},
		{name: "data node_bootstrap/image_registry without a host", config: `
data "gpucluster_node_bootstrap" "x" {
  role       = "control_plane"
  kubernetes = { join_token = "` + matrixToken + `", image_registry = "gpucluster/images" }
}
`, attr: `kubernetes\.image_registry`, fix: `has no registry host`},
		{name: "data node_bootstrap/malformed join token", config: `
data "gpucluster_node_bootstrap" "x" {
  role       = "gpu_worker"
  kubernetes = { api_endpoint = "10.0.0.10:6443", join_token = "Not-A-Token" }
}
`, attr: `kubernetes\.join_token`, fix: `kubeadm token generate`},
		{name: "data node_bootstrap/package_mirror unknown", config: `
data "gpucluster_node_bootstrap" "x" {
  role           = "control_plane"
  package_mirror = "tsinghua"
  kubernetes     = { join_token = "` + matrixToken + `" }
}
`, attr: `package_mirror`, fix: `value must be one of: \["internet" "alibaba_vpc"\]`},
		{name: "data node_bootstrap/worker without api_endpoint", config: `
data "gpucluster_node_bootstrap" "x" {
  role       = "gpu_worker"
  kubernetes = { join_token = "` + matrixToken + `" }
}
`, attr: `kubernetes\.api_endpoint`, fix: `pass the control plane's address and port, such as 10\.0\.0\.10:6443`},
		{name: "data alert_rules/bandwidth zero", config: `
data "gpucluster_alert_rules" "x" {
  scenario              = "ai_training"
  design_bandwidth_gbps = 0
}
`, attr: `design_bandwidth_gbps`, fix: `at least 1`},

		// --- functions
		{name: "function instance_type_for/unknown GPU model", config: `
output "x" {
  value = provider::gpucluster::instance_type_for("B200", 8)
}
`, attr: `"gpu_model" parameter`, fix: `known models are H100`},
		{name: "function instance_type_for/zero GPUs", config: `
output "x" {
  value = provider::gpucluster::instance_type_for("T4", 0)
}
`, attr: `"gpus_per_node" parameter`, fix: `must be at least 1`},
		{name: "function scenario_check/unknown scenario", config: `
output "x" {
  value = provider::gpucluster::scenario_check("weather", "ecs.gn7e-c16g1.32xlarge", 1)
}
`, attr: `"scenario" parameter`, fix: `known scenarios are ai_training`},
		{name: "function scenario_check/unknown instance type", config: `
output "x" {
  value = provider::gpucluster::scenario_check("ai_training", "ecs.gn7e-c16g1.64xlarge", 1)
}
`, attr: `"instance_type" parameter`, fix: `family gn7e has`},

		// --- the provider block
		{name: "provider/wrong secret key", provider: acctest.ProviderBlock("EMULATOR_URL", acctest.AccessKey, "not-the-secret", "max_retries = 1"),
			config: badNet(""), attr: `secret_key`, fix: `the secret key does not belong to this access key`},
		{name: "provider/unknown access key", provider: acctest.ProviderBlock("EMULATOR_URL", "nobody", "x", "max_retries = 1"),
			config: badNet(""), attr: `access_key`, fix: `does not know access key "nobody"`},
		{name: "provider/unreachable endpoint", provider: acctest.ProviderBlock(deadEndpoint, acctest.AccessKey, acctest.SecretKey, "max_retries = 1"),
			config: badNet(""), attr: `endpoint`, fix: `connection refused; check the provider's`},
		{name: "provider/malformed region", provider: `provider "gpucluster" {
  region     = "CN_Wulanchabu!"
  endpoint   = "EMULATOR_URL"
  access_key = "a"
  secret_key = "b"
}
`, config: badNet(""), attr: `region`, fix: `must be an Alibaba Cloud region id`},

		// --- modules (the provider is reached through the module's own required_providers)
		{name: "module ai-training/name with capitals", module: true, config: badModule("ai-training", `name = "LLM_Train"`),
			attr: `var\.name|name must`, fix: `for example "llm-train"`},
		{name: "module ai-training/public admin_cidrs", module: true, config: badModule("ai-training", `name = "llm-train"
  admin_cidrs = ["0.0.0.0/0"]`),
			attr: `admin_cidrs`, fix: `give your office block or bastion address`},
		{name: "module ai-training/GPU count the model lacks", module: true, config: badModule("ai-training", `name = "llm-train"
  gpus_per_node = 3`),
			attr: `gpus_per_node`, fix: `sizes that exist`},
		{name: "module ai-training/malformed join_token", module: true, config: badModule("ai-training", `name = "llm-train"
  join_token = "Not-A-Token"`),
			attr: `join_token`, fix: `kubeadm token generate`},
		{name: "module ai-training/IOPS beyond one disk", module: true, config: badModule("ai-training", `name = "llm-train"
  hot_storage = { min_iops = 2000000 }`),
			attr: `min_iops`, fix: `stripe several disks yourself`},
		{name: "module ai-training/bootstrap bundle without RAM roles", module: true, config: badModule("ai-training", `name = "llm-train"`),
			attr: `control_plane\.ram_role_name is not set, and bootstrap_bundle\.enabled is true \(the default\)`, fix: `ecs\.aliyuncs\.com.*or set bootstrap_bundle = \{ enabled = false \}`},
		{name: "module molecular-dynamics/team quotas over the pool", module: true, config: badModule("molecular-dynamics", `name = "md-lab"
  control_plane = { ram_role_name = "md-lab-control-plane" }
  bootstrap_bundle = { worker_ram_role_name = "md-lab-worker" }
  teams = { chem = { gpus = 12 }, bio = { gpus = 8 } }`),
			attr: `mpi\.teams`, fix: `lower the teams' gpus to a sum of at most 16`},
		{name: "module engineering-simulation/team on no pool", module: true, config: badModule("engineering-simulation", `name = "cfd-lab"
  teams = { cfd = { gpus = 4, pool = "a100" } }`),
			attr: `var\.teams|teams`, fix: `must be a key of worker_pools`},
		{name: "module molecular-dynamics/unknown placement", module: true, config: badModule("molecular-dynamics", `name = "md-lab"
  network = { placement = "tight" }`),
			attr: `network\.placement`, fix: `none, low_latency or spread`},
		{name: "module engineering-simulation/malformed cidr_block", module: true, config: badModule("engineering-simulation", `name = "cfd-lab"
  cidr_block = "10.22.0/16"`),
			attr: `cidr_block`, fix: `such as "10\.[0-9]+\.0\.0/16"`},
		{name: "module scenario-cluster/nodes on a network without egress", module: true, config: badModule("scenario-cluster", `scenario = "ai_training"
  name = "sc-closed"
  cidr_block = "10.23.0.0/16"
  network = { erdma = true, placement = "low_latency", egress_mode = "none" }
  image_registry = ""
  gpu_model = "A100-80GB"
  worker_pools = { gpu = { size = 2 } }
  join_token_salt = "matrix"`),
			attr: `network\.egress_mode = "none"`, fix: `Leave network\.egress_mode unset`},
		{name: "module cluster-core/unknown package_mirror", module: true, config: badModule("cluster-core", `name = "cc-mirror"
  scenario = "ai_training"
  network_id = "`+planOnlyNetworkID+`"
  package_mirror = "tsinghua"
  worker_pools = { gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 } }`),
			attr: `package_mirror`, fix: `internet or alibaba_vpc`},
		{name: "module cluster-core/nodes on a network without egress", module: true, config: badModule("cluster-core", `name = "cc-closed"
  scenario = "ai_training"
  network_id = "`+planOnlyNetworkID+`"
  network_egress_mode = "none"
  image_registry = ""
  control_plane = { enabled = false, api_endpoint = "10.61.0.10:6443" }
  bootstrap_bundle = { worker_ram_role_name = "cc-closed-worker" }
  worker_pools = { gpu = { size = 1, gpu_model = "A100-80GB", gpus_per_node = 8 } }`),
			attr: `network_egress_mode`, fix: `Set egress = \{ mode = "nat" \} on the gpucluster_rdma_network`},
		{name: "module storage-tiers/bad bucket name", module: true, config: badModule("storage-tiers", `name = "lab"
  network_id = "`+planOnlyNetworkID+`"
  cold = { bucket_name = "Bad_Bucket", capacity_tib = 1 }`),
			attr: `bucket_name`, fix: `3-63 lowercase letters`},
	}
}

// matrixCreateActions are the API calls that make something; none may be sent for a bad input.
var matrixCreateActions = regexp.MustCompile(`^(Create|Run|Allocate|Authorize|Put|Tag|Join|Modify|Attach)`)

// emulatorFingerprint is the emulator's live resources as JSON, without the statuses that move on
// by themselves (Pending becomes Available).
func emulatorFingerprint(t *testing.T, emu *acctest.Emulator) string {
	t.Helper()
	r := emu.Resources()
	for _, l := range [][]map[string]any{r.Instances, r.Vpcs, r.VSwitches, r.SecurityGroups, r.DeploymentSets, r.HpcClusters, r.FileSystems, r.Buckets} {
		for _, m := range l {
			delete(m, "status")
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func createCalls(emu *acctest.Emulator) map[string]int64 {
	out := map[string]int64{}
	for action, n := range emu.Stats().Calls {
		if matrixCreateActions.MatchString(action) {
			out[action] = n
		}
	}
	return out
}

// TestAccBadInputMatrix: every wrong configuration fails at plan or validate time with a
// diagnostic naming the attribute and the fix, and the emulator is left as it was.
func TestAccBadInputMatrix(t *testing.T) {
	emu := acctest.StartEmulator(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()

	rows := badInputs(dead)
	if len(rows) < 40 {
		t.Fatalf("the matrix has %d rows; the issue asks for at least 40", len(rows))
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			emu.Reset()
			if row.emulator != nil {
				row.emulator(emu)
			}
			if row.module {
				// Modules ask for gpucluster/gpucluster; serve the in-process provider under that name.
				t.Setenv("TF_ACC_PROVIDER_NAMESPACE", "gpucluster")
			}
			provider := emu.Config()
			if row.provider != "" {
				provider = strings.ReplaceAll(row.provider, "EMULATOR_URL", emu.URL)
			}
			attr, fix := spaced(row.attr), spaced(row.fix)
			want := regexp.MustCompile(`(?s)(?:(?:` + attr + `).*(?:` + fix + `)|(?:` + fix + `).*(?:` + attr + `))`)

			var before string
			var beforeCalls map[string]int64
			snapshot := func() {
				before, beforeCalls = emulatorFingerprint(t, emu), createCalls(emu)
			}
			unchanged := func() {
				t.Helper()
				if after := emulatorFingerprint(t, emu); after != before {
					t.Errorf("the emulator's resources changed:\nbefore %s\nafter  %s", before, after)
				}
				if after := createCalls(emu); fmt.Sprint(after) != fmt.Sprint(beforeCalls) {
					t.Errorf("create calls were sent: before %v, after %v", beforeCalls, after)
				}
			}

			var steps []resource.TestStep
			if row.setup != "" {
				steps = append(steps,
					resource.TestStep{Config: provider + row.setup},
					resource.TestStep{PreConfig: snapshot, Config: provider + row.setup + row.config, PlanOnly: true, ExpectError: want},
					// The setup again, plan only: nothing to do, and the emulator as the snapshot.
					resource.TestStep{PreConfig: unchanged, Config: provider + row.setup, PlanOnly: true},
				)
			} else {
				snapshot()
				steps = append(steps, resource.TestStep{Config: provider + row.config, PlanOnly: true, ExpectError: want})
			}
			tc := resource.TestCase{PreCheck: func() { acctest.PreCheck(t) }, Steps: steps}
			if row.module {
				// The framework runs `tofu init` on a step's configuration only when the step
				// names its providers and its configuration is a file or directory (a raw
				// configuration is initialised with the provider block alone), so the module
				// rows write their configuration to a file: init then installs the module.
				file := filepath.Join(t.TempDir(), "main.tf")
				for i := range tc.Steps {
					if err := os.WriteFile(file, []byte(tc.Steps[i].Config), 0o600); err != nil {
						t.Fatal(err)
					}
					tc.Steps[i].Config = ""
					tc.Steps[i].ConfigFile = config.StaticFile(file)
					tc.Steps[i].ProtoV6ProviderFactories = acctest.ProtoV6ProviderFactories()
				}
			} else {
				tc.ProtoV6ProviderFactories = acctest.ProtoV6ProviderFactories()
			}
			resource.Test(t, tc)
			if row.setup == "" {
				unchanged()
			}
		})
	}
}

// spaced turns each space of a pattern into \s+, since the CLI wraps diagnostics.
func spaced(pattern string) string { return strings.ReplaceAll(pattern, " ", `\s+`) }
