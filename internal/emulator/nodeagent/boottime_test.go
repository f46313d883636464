package nodeagent

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/manifests"
)

// The boot model's tests run the agent over goodView with the GPU worker booted from a custom image
// whose builder user data internal/bootstrap renders (RenderBake), registered in the view as
// CreateImage records it: the builder's user data as RunInstances took it.

// bakedImages are what gpucluster_node_image pre-pulls unless told otherwise (internal/provider,
// node_image_model.go): the pod sandbox, the pod network, the GPU DaemonSets.
var bakedImages = []string{images.Pause, images.Flannel, images.FlannelCNIPlugin, images.DevicePlugin, images.DCGMExporter, images.NodeExporter}

// workerBake is the bake of gpuWorker's install phases: in testRegion, on the region's defaults.
func workerBake() bootstrap.BakeOptions {
	b := bootstrap.BakeOptions{Region: testRegion, ImageRegistry: inRegionRegistry}
	for _, name := range bakedImages {
		b.Images = append(b.Images, images.RefIn(name, b.ImageRegistry))
	}
	return b
}

// bakedImage is custom image id, made of a builder that ran b.
func bakedImage(t testing.TB, id string, b bootstrap.BakeOptions) emulator.ImageView {
	t.Helper()
	doc, err := bootstrap.RenderBake(b)
	if err != nil {
		t.Fatal(err)
	}
	return emulator.ImageView{ID: id, Region: testRegion, Status: "Available", SourceImageID: testImage,
		SourceUserData: base64.StdEncoding.EncodeToString([]byte(bootstrap.PackUserData(doc)))}
}

// fromImage boots instance id of v from a custom image made of b.
func fromImage(t *testing.T, v *emulator.View, id string, b bootstrap.BakeOptions) {
	t.Helper()
	img := bakedImage(t, "m-"+id, b)
	v.Images = append(v.Images, img)
	instanceByID(t, v, id).ImageID = img.ID
}

// syncConsoles is syncOnce that also returns what the agent wrote on the serial consoles.
func syncConsoles(t *testing.T, v emulator.View) (map[string]NodeStatus, map[string]string) {
	t.Helper()
	a := New(func() emulator.View { return v }, newFakeKube(), t.Logf)
	consoles := map[string]string{}
	a.WriteConsoles(func(id, out string) { consoles[id] = out })
	a.Sync(context.Background())
	got := map[string]NodeStatus{}
	for _, st := range a.Statuses() {
		got[st.InstanceID] = st
	}
	return got, consoles
}

func stepOf(t *testing.T, st NodeStatus, phase string) BootStep {
	t.Helper()
	for _, s := range st.Boot {
		if s.Phase == phase {
			return s
		}
	}
	t.Fatalf("%s: no boot step %q in %+v", st.InstanceID, phase, st.Boot)
	return BootStep{}
}

// installPhases are the install phases of gpuWorker's script, in order.
var workerInstallPhases = []string{bootstrap.PhaseMirrors, bootstrap.PhasePackages, bootstrap.PhaseDriver, bootstrap.PhaseContainerRuntime, bootstrap.PhaseKubelet}

// A GPU worker booted from an image baked with its own install phases skips every one of them and
// pulls none of the images the builder pre-pulled: it boots, joins and is Ready in about a minute.
// Its console, as the real script's, says nothing of the phases it skipped.
func TestBakedWorkerModelsAboutAMinute(t *testing.T) {
	v := goodView(t)
	fromImage(t, &v, "i-gpu1", workerBake())
	got, consoles := syncConsoles(t, v)
	st := got["i-gpu1"]
	if st.Node == "" || st.Reason != "" {
		t.Fatalf("baked worker: node %q, reason %q; want it Ready", st.Node, st.Reason)
	}
	for _, phase := range workerInstallPhases {
		if s := stepOf(t, st, phase); !s.Held || s.Seconds != 0 {
			t.Errorf("phase %s = %+v, want held by the image, 0 s", phase, s)
		}
	}
	if s := stepOf(t, st, bootstrap.PhaseJoin); s.Held || s.Seconds == 0 {
		t.Errorf("join = %+v: the image holds no join, the node runs it", s)
	}
	if st.ModeledReadySeconds < 45 || st.ModeledReadySeconds > 90 {
		t.Errorf("baked worker modeled Ready at %.0f s, want about a minute (45 to 90 s): %+v", st.ModeledReadySeconds, st.Boot)
	}
	if s := stepOf(t, st, StepReady); strings.Contains(s.DominatedBy, "flannel") || strings.Contains(s.DominatedBy, "pause") {
		t.Errorf("ready step %+v pulls an image the builder pre-pulled", s)
	}
	console := consoles["i-gpu1"]
	if !strings.HasPrefix(console, bootstrap.ConsolePrefix+"phase join ok\n"+bootstrap.ConsolePrefix+"joined\n"+modelPrefix+"modeled time to Ready ") {
		t.Errorf("baked worker's console:\n%s\nwant only join ok, joined, then the model's line", console)
	}
	if out := bootstrap.ParseConsole(console); !out.Joined || out.LastOK != bootstrap.PhaseJoin {
		t.Errorf("console outcome %+v, want joined after join", out)
	}
}

// controlPlaneBake is the bake of firstControlPlane's install phases, pre-pulling the pod network.
func controlPlaneBake() bootstrap.BakeOptions {
	return bootstrap.BakeOptions{Role: bootstrap.RoleControlPlane, Region: testRegion, ImageRegistry: inRegionRegistry,
		Images: []string{images.RefIn(images.Pause, inRegionRegistry), images.RefIn(images.Flannel, inRegionRegistry), images.RefIn(images.FlannelCNIPlugin, inRegionRegistry)}}
}

// The first control-plane node from a control-plane image skips its install phases and kubeadm's
// image pulls (the image holds them at the release it installs): its init step is kubeadm's own
// work only, and it is Ready well before the same node from the public image.
func TestBakedControlPlaneSkipsInstallAndKubeadmPulls(t *testing.T) {
	public := syncOnce(t, goodView(t), newFakeKube())["i-cp"]
	v := goodView(t)
	fromImage(t, &v, "i-cp", controlPlaneBake())
	baked := syncOnce(t, v, newFakeKube())["i-cp"]
	if baked.Node == "" || baked.Reason != "" {
		t.Fatalf("baked control plane: node %q, reason %q; want it Ready", baked.Node, baked.Reason)
	}
	for _, phase := range []string{bootstrap.PhaseMirrors, bootstrap.PhasePackages, bootstrap.PhaseContainerRuntime, bootstrap.PhaseKubelet} {
		if s := stepOf(t, baked, phase); !s.Held {
			t.Errorf("phase %s = %+v, want held by the control-plane image", phase, s)
		}
	}
	if s := stepOf(t, baked, bootstrap.PhaseInit); strings.Contains(s.DominatedBy, "control-plane images") {
		t.Errorf("init step %+v pulls kubeadm's images, which the image holds", s)
	}
	if s := stepOf(t, public, bootstrap.PhaseInit); s.Seconds <= stepOf(t, baked, bootstrap.PhaseInit).Seconds {
		t.Errorf("init from the public image %+v is not longer than from the image", s)
	}
	// What is left is the instance's boot, kubeadm init itself and the pod network's start.
	if baked.ModeledReadySeconds > 120 || baked.ModeledReadySeconds >= public.ModeledReadySeconds {
		t.Errorf("baked control plane Ready at %.0f s, public at %.0f s: want about two minutes at most, and less than public\n%+v", baked.ModeledReadySeconds, public.ModeledReadySeconds, baked.Boot)
	}

	// A control-plane image made for another Kubernetes release holds kubeadm's images of that
	// release: the node pulls its own.
	other := controlPlaneBake()
	other.Versions.Kubernetes = "1.30"
	v = goodView(t)
	fromImage(t, &v, "i-cp", other)
	st := syncOnce(t, v, newFakeKube())["i-cp"]
	if s := stepOf(t, st, bootstrap.PhaseInit); s.Seconds <= stepOf(t, baked, bootstrap.PhaseInit).Seconds {
		t.Errorf("init from an image of Kubernetes 1.32 = %+v, not longer than from the matching image's %+v", s, stepOf(t, baked, bootstrap.PhaseInit))
	}
}

// The same worker from the public image installs everything: minutes (over four), the driver
// phase the longest, dominated by the DKMS build of the kernel module.
func TestPublicImageWorkerModelsMinutes(t *testing.T) {
	got, consoles := syncConsoles(t, goodView(t))
	st := got["i-gpu1"]
	if st.ModeledReadySeconds < 240 {
		t.Errorf("worker from the public image modeled Ready at %.0f s, want minutes (over 240 s): %+v", st.ModeledReadySeconds, st.Boot)
	}
	driver := stepOf(t, st, bootstrap.PhaseDriver)
	if driver.Held || !strings.Contains(driver.DominatedBy, "DKMS build") {
		t.Errorf("driver step %+v, want run, dominated by the DKMS build", driver)
	}
	for _, s := range st.Boot {
		if s.Seconds > driver.Seconds {
			t.Errorf("step %+v takes longer than the driver's %.0f s", s, driver.Seconds)
		}
	}
	mustContain(t, "console", consoles["i-gpu1"], bootstrap.ConsolePrefix+"phase driver ok\n")
	mustContain(t, "console", consoles["i-gpu1"], "longest: driver (the DKMS build of the nvidia kernel module, 115 s)")
}

// An image baked with another driver holds a driver phase whose function differs from the node's
// (another version pinned): its marker's digest is not the node's, so the node runs the driver phase
// again, and only that one.
func TestImageWithAnotherDriverRunsTheDriverPhase(t *testing.T) {
	v := goodView(t)
	other := workerBake()
	other.Versions.Driver = "550.54.15"
	fromImage(t, &v, "i-gpu1", other)
	st := syncOnce(t, v, newFakeKube())["i-gpu1"]
	for _, phase := range workerInstallPhases {
		s := stepOf(t, st, phase)
		if held := phase != bootstrap.PhaseDriver; s.Held != held {
			t.Errorf("phase %s held = %v, want %v", phase, s.Held, held)
		}
	}
	baked := syncOnce(t, func() emulator.View { v := goodView(t); fromImage(t, &v, "i-gpu1", workerBake()); return v }(), newFakeKube())["i-gpu1"]
	if st.ModeledReadySeconds < baked.ModeledReadySeconds+dkmsBuildSeconds {
		t.Errorf("with the driver phase to run again, modeled %.0f s; the matching image's %.0f s plus the DKMS build is more", st.ModeledReadySeconds, baked.ModeledReadySeconds)
	}
}

// A held phase fetches nothing at the node, so the region does not judge its downloads: a worker
// on upstream sources is refused in cn-wulanchabu (nvidia.github.io, pkgs.k8s.io, registry.k8s.io's
// pause), and the same worker from an image baked outside the mainland and copied in, holding
// those phases and the pause image, registers Ready.
func TestHeldPhasesAreNotJudgedByTheRegion(t *testing.T) {
	v := goodView(t)
	worker := instanceByID(t, &v, "i-gpu1")
	worker.UserData = userData(t, upstream(gpuWorker(testCAs(t)[0])))
	refused := syncOnce(t, v, newFakeKube())["i-gpu1"]
	mustContain(t, "public image's reason", refused.Reason, "nvidia.github.io is blocked")
	abroad := bootstrap.BakeOptions{Region: "ap-southeast-1", PackageMirror: bootstrap.MirrorInternet, Images: []string{images.RefIn(images.Pause, "")}}
	img := bakedImage(t, "m-copied", abroad)
	img.CopiedFrom = "m-singapore"
	v.Images = append(v.Images, img)
	worker.ImageID = img.ID
	kube := newFakeKube()
	checkOutcomes(t, syncOnce(t, v, kube), kube, map[string]outcome{"i-gpu1": {ready: true}})
}

// autoscalerAddon is the cluster's Cluster Autoscaler add-on as internal/manifests renders it, with
// its --max-node-provision-time set to limit.
func autoscalerAddon(t *testing.T, limit string) string {
	t.Helper()
	docs, err := manifests.RenderClusterAutoscaler(manifests.ClusterAutoscalerOptions{ImageRegistry: inRegionRegistry,
		NodeGroups: []manifests.NodeGroup{{Name: "gpu", ScalingGroupID: "asg-gpu", Min: 0, Max: 4}}})
	if err != nil {
		t.Fatal(err)
	}
	rendered := "--max-node-provision-time=" + strings.TrimSuffix(manifests.MaxNodeProvisionTime.String(), "0s")
	y := manifests.Join(docs)
	if !strings.Contains(y, rendered) {
		t.Fatalf("the autoscaler add-on passes no %s:\n%s", rendered, y)
	}
	return strings.ReplaceAll(y, rendered, "--max-node-provision-time="+limit)
}

// A node of an autoscaling pool (it registers with a provider id) whose kubelet registers later
// than the autoscaler's --max-node-provision-time gets a note that the autoscaler gives up on it;
// the limit is the one the cluster's autoscaler add-on passes. The same node from a baked image
// registers in time, and a fixed pool's node (no provider id) is nobody's to remove.
func TestMaxNodeProvisionTime(t *testing.T) {
	ca := testCAs(t)[0]
	cp := firstControlPlane(ca)
	cp.Kubernetes.Addons = map[string]string{manifests.AddonClusterAutoscaler: autoscalerAddon(t, "4m")}
	autoscaled := gpuWorker(ca)
	autoscaled.ProviderID = true
	view := func(worker bootstrap.Options, baked bool) emulator.View {
		v := goodView(t)
		instanceByID(t, &v, "i-cp").UserData = userData(t, cp)
		instanceByID(t, &v, "i-gpu1").UserData = userData(t, worker)
		if baked {
			fromImage(t, &v, "i-gpu1", workerBake())
		}
		return v
	}
	const gaveUp = "the Cluster Autoscaler would give up on this node"
	late := syncOnce(t, view(autoscaled, false), newFakeKube())["i-gpu1"]
	note := strings.Join(late.Notes, "\n")
	mustContain(t, "notes", note, gaveUp)
	mustContain(t, "notes", note, "later than 4m0s (--max-node-provision-time=4m of the cluster's autoscaler add-on "+manifests.AddonClusterAutoscaler+")")
	mustContain(t, "notes", note, "removes it as long-unregistered")
	if late.Node == "" {
		t.Errorf("the late node is not registered: the note is about the autoscaler, not the node (%s)", late.Reason)
	}
	for name, st := range map[string]NodeStatus{
		"baked":      syncOnce(t, view(autoscaled, true), newFakeKube())["i-gpu1"],
		"fixed pool": syncOnce(t, view(gpuWorker(ca), false), newFakeKube())["i-gpu1"],
	} {
		if strings.Contains(strings.Join(st.Notes, "\n"), gaveUp) || st.ModeledRegisteredSeconds == 0 {
			t.Errorf("%s: registered at %.0f s, notes %q: want modeled, without the autoscaler's note", name, st.ModeledRegisteredSeconds, st.Notes)
		}
	}
}

// Without the flag in the add-ons the limit is the autoscaler's upstream default; the flag in Go
// duration syntax is read wherever it stands, the last file setting it winning.
func TestMaxProvisionOf(t *testing.T) {
	if l := maxProvisionOf([]Addon{{Name: "10-team.yaml", YAML: "kind: Namespace"}}); l.limit != 15*time.Minute || !strings.Contains(l.from, "default") {
		t.Errorf("no flag: %+v, want the upstream 15m default", l)
	}
	l := maxProvisionOf([]Addon{{Name: "a.yaml", YAML: "args: [\"--max-node-provision-time=25m\"]"}, {Name: "b.yaml", YAML: "        - --max-node-provision-time=1h30m\n"}})
	if l.limit != 90*time.Minute || !strings.Contains(l.from, "b.yaml") {
		t.Errorf("flags: %+v, want 1h30m from b.yaml", l)
	}
}

// A node registers with the provider id its kubelet is given: <region>.<instance> for an
// autoscaling pool's node (the Cluster Autoscaler matches nodes to scaling groups by it), none
// for a fixed pool's.
func TestNodeRegistersItsProviderID(t *testing.T) {
	ca := testCAs(t)[0]
	for _, c := range []struct {
		autoscaled bool
		want       string
	}{{true, "cn-wulanchabu.i-gpu1"}, {false, ""}} {
		worker := gpuWorker(ca)
		worker.ProviderID = c.autoscaled
		v := goodView(t)
		instanceByID(t, &v, "i-cp").UserData = userData(t, firstControlPlane(ca))
		in := instanceByID(t, &v, "i-gpu1")
		in.UserData = userData(t, worker)
		kube := newFakeKube()
		st := syncOnce(t, v, kube)["i-gpu1"]
		node, ok := kube.nodes[st.Node]
		if !ok {
			t.Fatalf("autoscaled %t: the worker did not register: %s", c.autoscaled, st.Reason)
		}
		if in.Region != "cn-wulanchabu" {
			t.Fatalf("the fixture's instance is in %s", in.Region)
		}
		if node.Spec.ProviderID != c.want {
			t.Errorf("autoscaled %t: spec.providerID %q, want %q", c.autoscaled, node.Spec.ProviderID, c.want)
		}
	}
}
