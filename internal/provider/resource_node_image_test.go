package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/acctest"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator/nodeagent"
)

// playBuilders plays the guest side of every image builder the emulator runs, as its bootstrap
// would once done: it prints "baked" on the serial console (ECS GetInstanceConsoleOutput), which
// is all the provider reads of a builder. It stops with the test.
func playBuilders(t *testing.T, emu *acctest.Emulator, console string) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			for _, in := range emu.View().Instances {
				if strings.HasSuffix(in.HostName, "-builder") {
					emu.SetConsoleOutput(in.ID, console)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
}

func nodeImageConfig(emu *acctest.Emulator, driver, tags string) string {
	return emu.Config() + poolNetworkConfig("") + fmt.Sprintf(`
resource "gpucluster_node_image" "gpu" {
  name                  = "gpu-node-v1"
  network_id            = gpucluster_rdma_network.net.id
  builder_instance_type = "ecs.gn7i-c8g1.2xlarge"
  versions              = { driver = %q }
  copy_to_regions       = ["cn-beijing"]
  tags                  = { %s }
}

resource "gpucluster_node_pool" "train" {
  name          = "train"
  network_id    = gpucluster_rdma_network.net.id
  scenario      = "engineering_simulation"
  instance_type = "ecs.gn7i-c8g1.2xlarge"
  size          = 1
  bootstrap     = false
  image_id      = gpucluster_node_image.gpu.id
}
`, driver, tags)
}

// The image is baked through the ECS API (builder, CreateImage, copy), a pool boots from it, tags
// change in place, a new driver bakes a new image, and destroy leaves nothing.
func TestAccNodeImage_bakeBootRebakeDestroy(t *testing.T) {
	emu := acctest.StartEmulator(t)
	playBuilders(t, emu, bootstrap.ConsolePrefix+"phase seal ok\n"+bootstrap.ConsolePrefix+bootstrap.StateBaked+"\n")
	const addr = "gpucluster_node_image.gpu"
	var first string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: nodeImageConfig(emu, "535.183.01", `team = "ml"`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^m-`))),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("package_mirror"), knownvalue.StringExact("alibaba_vpc")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("image_registry"), knownvalue.StringExact("registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("copies").AtMapKey("cn-beijing"), knownvalue.StringRegexp(regexp.MustCompile(`^m-`))),
				},
				Check: func(s *terraform.State) error {
					first = s.RootModule().Resources[addr].Primary.ID
					v := emu.View()
					for _, in := range v.Instances {
						if strings.HasSuffix(in.HostName, "-builder") {
							return fmt.Errorf("the builder %s was left", in.ID)
						}
						if in.ImageID != first {
							return fmt.Errorf("pool node %s boots from %s, want the baked image %s", in.ID, in.ImageID, first)
						}
					}
					for _, img := range v.Images {
						if img.ID == first && img.Status != "Available" {
							return fmt.Errorf("image %s is %s", img.ID, img.Status)
						}
					}
					return nil
				},
			},
			{
				// Tags in place: the same image.
				Config: nodeImageConfig(emu, "535.183.01", `team = "research"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)}},
			},
			{
				// Another driver is another image: replaced, and the pool rolls onto it (the old image
				// goes after the pool moved: the vendor refuses to delete an image in use).
				Config: strings.Replace(nodeImageConfig(emu, "535.161.08", `team = "research"`), `tags                  = { team = "research" }`,
					"tags = { team = \"research\" }\n  lifecycle {\n    create_before_destroy = true\n  }", 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreateBeforeDestroy)}},
				Check: func(s *terraform.State) error {
					if id := s.RootModule().Resources[addr].Primary.ID; id == first {
						return fmt.Errorf("a new driver kept image %s", id)
					}
					for _, img := range emu.View().Images {
						if img.ID == first {
							return fmt.Errorf("the old image %s was left", first)
						}
					}
					return nil
				},
			},
		},
	})
}

// A builder whose bootstrap fails fails the apply with the phase and its console, and is deleted.
func TestAccNodeImage_failedBake(t *testing.T) {
	emu := acctest.StartEmulator(t)
	playBuilders(t, emu, bootstrap.ConsolePrefix+"phase driver failed (attempt 8/8)\n")
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{{
			Config:      strings.SplitN(nodeImageConfig(emu, "535.183.01", ""), `resource "gpucluster_node_pool"`, 2)[0],
			ExpectError: regexp.MustCompile(`(?s)failed at phase driver.*phase driver failed`),
		}},
	})
}

// Bad settings are refused at plan, naming the attribute.
func TestAccNodeImage_badInput(t *testing.T) {
	emu := acctest.StartEmulator(t)
	for _, c := range []struct{ set, want string }{
		{`name = "gpu.node"`, `(?s)name.*must be 2-119 characters`},
		{`versions = { driver = "latest" }`, `(?s)Node image settings.*driver version "latest" is not MAJOR\.MINOR`},
		{`images = ["ok/image:1", "bad image; rm -rf /"]`, `(?s)images\[1\].*is not an image reference`},
		{`builder_instance_type = "ecs.g7.2xlarge"`, `(?s)has no GPU.*builder_instance_type: the builder loads the NVIDIA driver.*Use a GPU type`},
		{`builder_instance_type = "ecs.nope.large"`, `(?s)Unknown instance type "ecs.nope.large".*builder_instance_type: unknown instance type`},
		{"role = \"control_plane\"\n  nvswitch = true", `(?s)nvswitch "true" installs Fabric Manager, which a control-plane image.*leave nvswitch unset or false`},
		{`role = "etcd"`, `(?s)role.*value must be one of`},
	} {
		t.Run(strings.Fields(c.set)[0], func(t *testing.T) {
			cfg := emu.Config() + poolNetworkConfig("") + `
resource "gpucluster_node_image" "gpu" {
  name                  = "gpu-node"
  network_id            = gpucluster_rdma_network.net.id
  builder_instance_type = "ecs.gn7i-c8g1.2xlarge"
}`
			builder := `  builder_instance_type = "ecs.gn7i-c8g1.2xlarge"`
			if strings.HasPrefix(c.set, "builder_instance_type") {
				builder = ""
			}
			cfg = strings.Replace(cfg, `  builder_instance_type = "ecs.gn7i-c8g1.2xlarge"`, builder+"\n  "+c.set, 1)
			if strings.HasPrefix(c.set, "name") {
				cfg = strings.Replace(cfg, `  name                  = "gpu-node"`+"\n", "", 1)
			}
			resource.Test(t, resource.TestCase{
				PreCheck:                 func() { acctest.PreCheck(t) },
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
				Steps:                    []resource.TestStep{{Config: cfg, PlanOnly: true, ExpectError: regexp.MustCompile(c.want)}},
			})
		})
	}
}

// Unset, the builder's type is the catalog's smallest GPU type for what the image is baked for,
// and nvswitch follows a builder type that is set: an NVSwitch type bakes Fabric Manager in,
// which is another image. A setting not known at plan (as a module's mounts are before the file
// system exists) leaves the content digest to the apply.
func TestAccNodeImage_builderDefaults(t *testing.T) {
	emu := acctest.StartEmulator(t)
	playBuilders(t, emu, bootstrap.ConsolePrefix+bootstrap.StateBaked+"\n")
	image := func(builder string) string {
		return emu.Config() + poolNetworkConfig("") + fmt.Sprintf(`
resource "gpucluster_node_image" "gpu" {
  name       = "gpu-node"
  network_id = gpucluster_rdma_network.net.id
  # Not known until the network is made: the digest is planned at apply then, not guessed.
  nfs_client = length(gpucluster_rdma_network.net.id) > 0
  %s
}`, builder)
	}
	addr := "gpucluster_node_image.gpu"
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{
			{
				Config: image(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("builder_instance_type"), knownvalue.StringExact("ecs.gn6i-c4g1.xlarge")),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("nvswitch"), knownvalue.Bool(false)),
				},
			},
			{
				Config: image(`builder_instance_type = "ecs.ebmgn7ex.32xlarge"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("nvswitch"), knownvalue.Bool(true)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("nvswitch"), knownvalue.Bool(true)),
				},
			},
		},
	})
}

// A control-plane image is baked on the smallest CPU type by default and pre-pulls no GPU
// DaemonSet; its builder's user data pulls kubeadm's control-plane images at the release it
// installs.
func TestAccNodeImage_controlPlane(t *testing.T) {
	emu := acctest.StartEmulator(t)
	playBuilders(t, emu, bootstrap.ConsolePrefix+bootstrap.StateBaked+"\n")
	addr := "gpucluster_node_image.cp"
	var builderUserData string
	resource.Test(t, resource.TestCase{
		PreCheck:                 func() { acctest.PreCheck(t) },
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories(),
		CheckDestroy:             checkNothingLeft(emu),
		Steps: []resource.TestStep{{
			Config: emu.Config() + poolNetworkConfig("") + `
resource "gpucluster_node_image" "cp" {
  name       = "cp-node"
  role       = "control_plane"
  network_id = gpucluster_rdma_network.net.id
}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("builder_instance_type"), knownvalue.StringExact(catalog.ControlPlaneImageBuilderType().Name)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("nvswitch"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(addr, tfjsonpath.New("images"), knownvalue.ListSizeExact(4)),
			},
			Check: func(*terraform.State) error {
				for _, img := range emu.View().Images {
					builderUserData = img.SourceUserData
				}
				return nil
			},
		}},
	})
	if catalog.ControlPlaneImageBuilderType().IsGPU() {
		t.Error("the control-plane builder has a GPU")
	}
	doc, err := nodeagent.DecodeUserData(builderUserData)
	if err != nil {
		t.Fatalf("the image's builder user data: %v", err)
	}
	script := doc.Files[bootstrap.ScriptPath]
	if !strings.Contains(script, "kubeadm config images pull --image-repository") || strings.Contains(script, "nvidia") {
		t.Errorf("the control-plane builder's script does not pull kubeadm's images, or installs NVIDIA software:\n%s", script)
	}
}
