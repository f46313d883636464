package nodeagent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodeimage"
)

// bakeSpec is the bake of a GPU node image in the scenario's network, with the builder user data
// the provider renders for opts.
func (s *cloudScenario) bakeSpec(t *testing.T, opts bootstrap.BakeOptions) nodeimage.Spec {
	t.Helper()
	doc, err := bootstrap.RenderBake(opts)
	if err != nil {
		t.Fatal(err)
	}
	return nodeimage.Spec{Name: "agent-image", Content: "0123456789abcdef", BaseImageID: testImage, InstanceType: "ecs.gn7i-c8g1.2xlarge",
		ZoneID: testZone, VSwitchID: s.vswID, SecurityGroupID: s.sgID, SystemDiskGiB: 100, UserData: bootstrap.PackUserData(doc)}
}

// An image builder is played like a node: with the in-region defaults it fetches everything,
// says baked on its console and powers itself off, and the workflow makes the image; with the
// upstream sources in cn-wulanchabu it fails at the phase fetching from a blocked host, the
// workflow reports that phase and deletes the builder, and no image is made.
func TestBuilderThroughTheSDK(t *testing.T) {
	registry := images.DefaultRegistry("cn-wulanchabu")
	inRegion := bootstrap.BakeOptions{Region: "cn-wulanchabu", ImageRegistry: registry, PackageMirror: bootstrap.MirrorAlibabaVPC,
		Images: []string{images.RefIn(images.Pause, registry), images.RefIn(images.Flannel, registry)}}
	start := func(t *testing.T, kube ...Kube) *cloudScenario {
		s := startCloud(t, true)
		k := Kube(newFakeKube())
		if len(kube) > 0 {
			k = kube[0]
		}
		a := s.startAgent(t, k)
		a.PowerOffWith(s.srv.PowerOffFromGuest)
		go a.Run(t.Context(), 50*time.Millisecond)
		return s
	}
	t.Run("baked", func(t *testing.T) {
		s := start(t)
		res, err := nodeimage.Bake(t.Context(), s.c, s.bakeSpec(t, inRegion))
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, img := range s.srv.View().Images {
			if img.ID == res.ImageID && img.Status == "Available" {
				found = true
			}
		}
		if !found {
			t.Errorf("no Available image %s in the emulator", res.ImageID)
		}
	})
	// The emulator program without --kubeconfig runs the agent with no Kubernetes API: builders
	// still bake, so node images can be made in tests that run no cluster.
	t.Run("no Kubernetes API", func(t *testing.T) {
		s := start(t, nil)
		if _, err := nodeimage.Bake(t.Context(), s.c, s.bakeSpec(t, inRegion)); err != nil {
			t.Fatal(err)
		}
	})
	// A control-plane image pulls kubeadm's images from imageRepository: registry.k8s.io does not
	// answer from a mainland region, so that bake fails at its images phase, naming it.
	t.Run("control plane from registry.k8s.io", func(t *testing.T) {
		s := start(t)
		cp := inRegion
		cp.Role, cp.ImageRegistry, cp.Images = bootstrap.RoleControlPlane, "", nil
		_, err := nodeimage.Bake(t.Context(), s.c, s.bakeSpec(t, cp))
		var be *nodeimage.BakeError
		if !errors.As(err, &be) {
			t.Fatalf("Bake = %v, want a failed bake", err)
		}
		if be.Phase != bootstrap.PhaseImages || !strings.Contains(be.Console, "registry.k8s.io/kube-apiserver:v") {
			t.Errorf("failed at %s, console:\n%s\nwant the images phase, naming kube-apiserver from registry.k8s.io", be.Phase, be.Console)
		}
	})
	t.Run("upstream sources", func(t *testing.T) {
		s := start(t)
		upstream := inRegion
		upstream.PackageMirror, upstream.ImageRegistry = bootstrap.MirrorInternet, ""
		upstream.Images = []string{images.RefIn(images.Flannel, "")}
		_, err := nodeimage.Bake(t.Context(), s.c, s.bakeSpec(t, upstream))
		var be *nodeimage.BakeError
		if !errors.As(err, &be) {
			t.Fatalf("Bake = %v, want a failed bake", err)
		}
		if be.Phase != bootstrap.PhaseContainerRuntime || !strings.Contains(be.Console, "nvidia.github.io is") {
			t.Errorf("failed at %s, console:\n%s\nwant the container-runtime phase, naming nvidia.github.io", be.Phase, be.Console)
		}
		for _, img := range s.srv.View().Images {
			t.Errorf("image %s made from a failed bake", img.ID)
		}
		for _, in := range s.srv.View().Instances {
			t.Errorf("instance %s (%s) left", in.ID, in.HostName)
		}
	})
}
