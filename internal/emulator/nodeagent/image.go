package nodeagent

import (
	"regexp"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/emulator"
)

// What a node's image already holds (issue #30). The bootstrap skips a phase whose marker holds
// the digest of the phase's function (internal/bootstrap phases.go: `declare -f p_<name> |
// sha256sum`), and an image builder leaves a marker for every phase it ran (bake.go). So a node
// booted from a custom image skips exactly the phases the image's builder ran with the same
// function text, and pulls no image the builder's images phase pulled into containerd. The agent
// reads both from the image's SourceUserData, the builder's user data as RunInstances took it
// (emulator.ImageView). A public image holds nothing.
//
// The text is compared as the script has it. bash prints a function normalised, so two texts
// that differ only in spacing have one digest on the node but count as different here: the agent
// then makes the node do more, never less, than the real one.

// maxImageLineage bounds how far the agent follows images made from instances that ran from
// custom images themselves (a copy of a copy, a builder on a baked image).
const maxImageLineage = 8

// imageHolds is what one image holds: by phase name, the function text its marker is for, and
// the image references pulled into containerd.
type imageHolds struct {
	imageID string
	phases  map[string]string
	pulled  map[string]bool
}

// holds reports whether the image's marker for ph is ph's own: the node skips the phase.
func (h imageHolds) holds(ph scriptPhase) bool {
	body, ok := h.phases[ph.name]
	return ok && body == ph.body
}

// pulledRef reports whether ref is in containerd already. A ref without tag or digest (how the
// agent names kube-proxy when it does not know the cluster's version) matches any tag of it.
func (h imageHolds) pulledRef(ref string) bool {
	if h.pulled[ref] {
		return true
	}
	if strings.ContainsAny(ref[strings.LastIndex(ref, "/")+1:], ":@") {
		return false
	}
	for p := range h.pulled {
		if strings.HasPrefix(p, ref+":") || strings.HasPrefix(p, ref+"@") {
			return true
		}
	}
	return false
}

// holdsOf reads what image id holds from the custom images: the image's own builder's phases over
// those of the image that builder ran from (the builder ran the phases it had no marker for and
// rewrote their markers), and every image pulled along the way. An id that names no custom image
// (a public image, or one deleted before the agent saw it) holds nothing.
func holdsOf(images []emulator.ImageView, id string) imageHolds {
	h := imageHolds{imageID: id, phases: map[string]string{}, pulled: map[string]bool{}}
	var lineage []emulator.ImageView
	for depth := 0; id != "" && depth < maxImageLineage; depth++ {
		img, ok := findImage(images, id)
		if !ok {
			break
		}
		lineage = append(lineage, img)
		id = img.SourceImageID
	}
	if len(lineage) == 0 {
		return imageHolds{}
	}
	for i := len(lineage) - 1; i >= 0; i-- { // oldest first: a newer builder's markers win
		ci, err := DecodeUserData(lineage[i].SourceUserData)
		if err != nil {
			continue
		}
		script := ci.Files[bootstrap.ScriptPath]
		phases, _ := scriptPhases(script)
		for _, ph := range phases {
			h.phases[ph.name] = ph.body
		}
		for _, m := range prePullRE.FindAllStringSubmatch(script, -1) {
			h.pulled[m[1]] = true
		}
		for _, ref := range kubeadmPulls(script) {
			for _, name := range kubeadmImageNames {
				h.pulled[strings.Replace(ref, "/kube-apiserver:", "/"+name+":", 1)] = true
			}
		}
	}
	return h
}

// kubeadmPullRE finds a control-plane image's pull of kubeadm's images (bootstrap.BakeOptions'
// ControlPlaneImagesPull): kubeadm config images pull [--image-repository '<repo>']
// --kubernetes-version '<version>'.
var kubeadmPullRE = regexp.MustCompile(`kubeadm config images pull(?: --image-repository '([^']+)')? --kubernetes-version '([^']+)'`)

// kubeadmDefaultRepository is kubeadm's imageRepository when none is given
// (https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-init/#custom-images).
const kubeadmDefaultRepository = "registry.k8s.io"

// kubeadmPulls are the kube-apiserver references of script's pulls of kubeadm's images, which
// stand for the rest of them.
func kubeadmPulls(script string) []string {
	var refs []string
	for _, m := range kubeadmPullRE.FindAllStringSubmatch(script, -1) {
		repo := m[1]
		if repo == "" {
			repo = kubeadmDefaultRepository
		}
		refs = append(refs, repo+"/kube-apiserver:"+m[2])
	}
	return refs
}

// kubeadmImageNames are the control-plane images tagged with the Kubernetes release that
// "kubeadm config images pull" pulls (https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-init/#custom-images);
// etcd and coredns have their own tags, which follow from the release.
var kubeadmImageNames = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}

func findImage(images []emulator.ImageView, id string) (emulator.ImageView, bool) {
	for _, img := range images {
		if img.ID == id {
			return img, true
		}
	}
	return emulator.ImageView{}, false
}

// fromImage is p as a node booted from an image holding h runs it: the held phases marked, and
// their downloads gone (the node fetches nothing for a phase it skips, so neither its route nor
// its region judges them). p's slices are shared between the nodes of one user data: copied.
func (p NodePlan) fromImage(h imageHolds) NodePlan {
	p.Image = h
	if len(h.phases) == 0 {
		return p
	}
	held := map[string]bool{}
	phases := make([]scriptPhase, len(p.Phases))
	for i, ph := range p.Phases {
		ph.held = h.holds(ph)
		held[ph.name] = ph.held
		phases[i] = ph
	}
	p.Phases = phases
	var downloads []Download
	for _, d := range p.Downloads {
		if !held[d.Phase] {
			downloads = append(downloads, d)
		}
	}
	p.Downloads = downloads
	return p
}
