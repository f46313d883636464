package nodeagent

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/catalog"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/regionreach"
)

// fabricManagerPackage is NVIDIA's Fabric Manager package and service (nvidia-fabricmanager-<driver
// branch> from the CUDA repository; the unit is nvidia-fabricmanager.service).
const fabricManagerPackage = "nvidia-fabricmanager"

// ConditionCUDAInitFailed is the Node condition of an NVSwitch node without Fabric Manager: on
// NVSwitch systems (HGX A100/H100 8-GPU boards), Fabric Manager must configure the NVSwitch
// fabric before CUDA can use the GPUs; without it nvidia-smi lists the GPUs but CUDA
// initialisation fails with cudaErrorSystemNotReady (802). NVIDIA Fabric Manager user guide,
// https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html ("NVSwitch and
// NVLink Initialization"); error 802 in the CUDA runtime API,
// https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html ("the system is not yet
// ready to start any CUDA work ... verify ... all required driver daemons are actively running").
const ConditionCUDAInitFailed corev1.NodeConditionType = "CUDAInitFailed"

// cniNotReady is what the kubelet posts in its Ready condition while no CNI plugin is set up:
// the container runtime reports the pod network not ready until a CNI configuration exists, and
// kubeadm's guide says a node needs a Pod network add-on before it (and CoreDNS) comes up:
// https://kubernetes.io/docs/setup/production-environment/tools/kubeadm/create-cluster-kubeadm/#pod-network
const cniNotReady = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"

// regionVerdict is what the region and the node's hardware make of a bootstrap that otherwise
// works.
type regionVerdict struct {
	fatal      string // the node does not register
	notReady   string // it registers, but its kubelet reports NotReady (no pod network)
	conditions []corev1.NodeCondition
	notes      []string // slow but not failing
}

// imagePull is one image the node pulls, and what its failure does.
type imagePull struct {
	ref, what string
	fatal     bool // the node does not register; else it registers NotReady
	// controlPlane: kubeadm's control-plane images, which ref stands for (kube-apiserver).
	controlPlane bool
}

// clusterImages is where the cluster's nodes take their images from: kubeadm's imageRepository
// and kubernetesVersion (kube-proxy's tag; "" = not known), and the pod network's images.
type clusterImages struct {
	repo, version string
	cni           []string
}

// kubeProxy is the kube-proxy image kubeadm's DaemonSet runs: <imageRepository>/kube-proxy at
// the cluster's version (https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-init/#custom-images).
func (c clusterImages) kubeProxy() string {
	if c.version == "" {
		return c.repo + "/kube-proxy"
	}
	return c.repo + "/kube-proxy:" + c.version
}

// controlPlaneImage stands for kubeadm's control-plane images: kube-apiserver at the cluster's
// version (untagged when it is not known, which any tag an image holds matches).
func (c clusterImages) controlPlaneImage() string {
	if c.version == "" {
		return c.repo + "/kube-apiserver"
	}
	return c.repo + "/kube-apiserver:" + c.version
}

// nodePulls are the images the node pulls before it is Ready, those its image holds (image.go)
// left out: on a control-plane node kubeadm's control-plane images (its preflight pulls those not
// present, and the static pods need them); on any other kube-proxy; everywhere the pause image every pod
// starts in and the pod network's images.
func nodePulls(p NodePlan, controlPlane bool, ci clusterImages) []imagePull {
	var pulls []imagePull
	if controlPlane {
		pulls = append(pulls, imagePull{ref: ci.controlPlaneImage(), what: "kubeadm's control-plane images from imageRepository " + ci.repo +
			", which kubeadm's preflight pulls: kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, etcd, coredns", fatal: true, controlPlane: true})
	} else {
		pulls = append(pulls, imagePull{ref: ci.kubeProxy(), what: "kube-proxy (the DaemonSet kubeadm deploys from imageRepository " + ci.repo +
			"; the pod network reaches the API server through the Service address kube-proxy programs)"})
	}
	pulls = append(pulls, imagePull{ref: p.Containerd.SandboxImage, what: "the pause (sandbox) image every pod starts in, set by " + p.Containerd.SandboxFrom, fatal: controlPlane})
	for _, ref := range ci.cni {
		pulls = append(pulls, imagePull{ref: ref, what: "the pod network's image (CNI " + bootstrap.CNIAddonFile + ")"})
	}
	return slices.DeleteFunc(pulls, func(pull imagePull) bool { return p.Image.pulledRef(pull.ref) })
}

var imageRE = regexp.MustCompile(`(?m)^\s*(?:- )?image:\s*["']?([^"'\s]+)["']?\s*$`)

// cniImages are the images of the CNI add-on among addons (bootstrap.CNIAddonFile).
func cniImages(addons []Addon) []string {
	var out []string
	for _, a := range addons {
		if a.Name != bootstrap.CNIAddonFile {
			continue
		}
		for _, m := range imageRE.FindAllStringSubmatch(a.YAML, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	return out
}

// routed are the downloads the route check judges: image pulls are judged by judgeRegion
// instead, through the node's containerd mirrors and the cluster's imageRepository (a joining
// node's own user data does not say where its images come from).
func routed(downloads []Download) []Download {
	return slices.DeleteFunc(slices.Clone(downloads), func(d Download) bool { return d.Image })
}

// judgeRegion plays what the instance's region does to a node whose other checks passed (issue
// #29): a download from a host that internal/regionreach says is blocked or unreliable from a
// Chinese mainland region fails the node even with a NAT gateway or EIP; every image the node
// pulls (kubeadm's, containerd's pause image, the CNI's) is resolved through its containerd
// registry mirrors and fails when no host it would contact is usable; an NVSwitch instance whose
// bootstrap installs no Fabric Manager registers with the condition ConditionCUDAInitFailed. ci
// is where the cluster's images come from (the node's own on a first control-plane node); route
// says whether the instance has a way to the internet. What the node's image holds is not
// fetched, so not judged: its phases' downloads (left out of p) and its pre-pulled images.
func judgeRegion(in *emulator.InstanceView, p NodePlan, controlPlane bool, ci clusterImages, route bool) regionVerdict {
	var v regionVerdict
	// Every cause is named at once (fixing one at a time would take as many boots), each host once.
	var fatal, notReady causes
	for _, d := range p.Downloads {
		if d.Image {
			continue // judged with the images, through containerd's mirrors
		}
		if h, ok := regionreach.Filtered(in.Region, d.Host); ok {
			fatal.add(h.Describe(d.Host, in.Region), "downloading "+d.What)
		}
	}
	if label := p.KubernetesVersion; p.Init && (label == "" || strings.HasPrefix(label, "stable") || strings.HasPrefix(label, "latest")) {
		if h, ok := regionreach.Filtered(in.Region, "dl.k8s.io"); ok {
			// kubeadm falls back to its own version when the lookup fails, so this costs time, not the node.
			v.notes = append(v.notes, fmt.Sprintf("kubernetesVersion %q makes kubeadm init look the version up on dl.k8s.io, but %s; "+
				"kubeadm falls back to its own version after the lookup times out. Pin kubernetesVersion to a release (v1.x.y)", label, h.Describe("dl.k8s.io", in.Region)))
		}
	}
	for _, pull := range nodePulls(p, controlPlane, ci) {
		why := unpullable(in.Region, p.Containerd, pull.ref, route)
		if why == "" {
			continue
		}
		what := "pulling " + pull.ref + " (" + pull.what + ")"
		if pull.fatal {
			fatal.add(why, what)
		} else {
			notReady.add(why, what)
		}
	}
	ignored := ""
	if p.Containerd.MirrorsIgnored != "" {
		ignored = " (" + p.Containerd.MirrorsIgnored + ")"
	}
	fix := ". Take downloads from in-region sources (the in-VPC mirror " + regionreach.VPCMirrorHost + ", an OSS internal endpoint such as oss-" + in.Region +
		"-internal.aliyuncs.com) or bake them into the image; point kubeadm's imageRepository, containerd's sandbox_image and the add-ons' images at a registry " +
		"in the region (a Container Registry VPC endpoint such as registry-vpc." + in.Region + ".aliyuncs.com), or mirror the registries in /etc/containerd/certs.d" + ignored
	from := "from " + in.Region
	if regionreach.Mainland(in.Region) {
		from += " (" + regionreach.RouteIsNotReach + ")"
	}
	switch {
	case len(fatal.why) > 0:
		for _, why := range notReady.why {
			fatal.add(why, notReady.what[why]...)
		}
		v.fatal = "the bootstrap cannot fetch what it needs " + from + ": " + fatal.String() + fix
		return v
	case len(notReady.why) > 0:
		v.notReady = "the node registers but stays NotReady (" + cniNotReady + "): images it needs cannot be pulled " + from + ": " +
			notReady.String() + fix
	}
	if c, ok := fabricManagerMissing(in, p); ok {
		v.conditions = append(v.conditions, c)
	}
	return v
}

// causes groups what fails by why, in the order first seen.
type causes struct {
	why  []string
	what map[string][]string
}

func (c *causes) add(why string, what ...string) {
	if c.what == nil {
		c.what = map[string][]string{}
	}
	if _, ok := c.what[why]; !ok {
		c.why = append(c.why, why)
	}
	for _, w := range what {
		if !slices.Contains(c.what[why], w) {
			c.what[why] = append(c.what[why], w)
		}
	}
}

// String is "what, what: why; what: why".
func (c causes) String() string {
	parts := make([]string, 0, len(c.why))
	for _, why := range c.why {
		parts = append(parts, strings.Join(c.what[why], ", ")+": "+why)
	}
	return strings.Join(parts, "; ")
}

// unpullable says why containerd cannot pull ref from region: no host it would contact (its
// mirrors for the registry, then the registry) is usable, that is in the region, or reached
// through the internet route and not filtered there. "" = it can.
func unpullable(region string, c containerdSetup, ref string, route bool) string {
	var why []string
	for _, host := range c.pullHosts(ref) {
		h, filtered := regionreach.Filtered(region, host)
		switch {
		case regionreach.InRegion(region, host), route && !filtered:
			return ""
		case filtered:
			why = append(why, h.Describe(host, region))
		default:
			why = append(why, host+" needs the internet, and the instance has no route to it ("+NoRouteReason+")")
		}
	}
	return strings.Join(why, "; then ")
}

// fabricManagerMissing is the condition of an NVSwitch instance (internal/catalog's
// InstanceType.NVSwitch) whose bootstrap installs no Fabric Manager.
func fabricManagerMissing(in *emulator.InstanceView, p NodePlan) (corev1.NodeCondition, bool) {
	t, ok := catalog.LookupInstanceType(in.Type)
	if !ok || !t.NVSwitch || t.GPUs == 0 || p.FabricManager {
		return corev1.NodeCondition{}, false
	}
	return corev1.NodeCondition{
		Type: ConditionCUDAInitFailed, Status: corev1.ConditionTrue, Reason: "FabricManagerMissing",
		Message: fmt.Sprintf("%s has %d GPUs on an NVSwitch fabric, but the bootstrap installs no %s: nvidia-smi lists the GPUs, "+
			"CUDA fails to initialise with error 802 (cudaErrorSystemNotReady). Install %s-<driver branch> at the driver's version and "+
			"enable nvidia-fabricmanager.service before CUDA is used (NVIDIA Fabric Manager user guide, "+
			"https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html)", t.Name, t.GPUs, fabricManagerPackage, fabricManagerPackage),
	}, true
}
