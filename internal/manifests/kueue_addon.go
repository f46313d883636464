package manifests

import (
	_ "embed"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// Kueue as an add-on (AddonKueue): its release manifest, then the configuration and the team
// queues of queues.go, applied by the first control-plane node with the rest when the cluster's
// add-ons travel in a bootstrap bundle (627 KB of YAML: far beyond user data).
//
// The file comes after AddonValidation and AddonMPIOperator on purpose. Kueue registers a
// mutating and a validating webhook for every batch/v1 Job and for its own kinds with
// failurePolicy Fail (config/components/webhook/manifests.yaml at KueueVersion), so until the
// manager answers, the API server refuses them: the validation Jobs go in before the webhooks
// exist, and the manager finds the MPIJob CRD when it starts (its kubeflow.org/mpijob
// integration needs it). The add-on unit retries the whole apply until everything is in, which is
// what lets the ClusterQueues through once the manager serves its webhooks.

// AddonKueue is Kueue's add-on file: the release manifest, then the queues.
const AddonKueue = "65-kueue.yaml"

// kueueRelease is Kueue's release manifest at KueueVersion as its own kustomization builds it
// (config/default of sigs.k8s.io/kueue), the CRDs' descriptions removed; written by
// scripts/render-kueue-release.sh (tools/kueuerelease), which TestKueueReleaseIsTheModules checks.
//
//go:embed releases/kueue.yaml
var kueueRelease string

// kueueReleaseImage is the manager image config/default names (the Makefile's
// STAGING_IMAGE_REGISTRY with tag main); the release process sets the published image instead,
// registry.k8s.io/kueue/kueue:<version> (https://github.com/kubernetes-sigs/kueue/releases/tag/v0.17.0,
// manifests.yaml), which is the images table's row.
const kueueReleaseImage = "us-central1-docker.pkg.dev/k8s-staging-images/kueue/kueue:main"

// kueueVisibilityOff is the manager argument that turns off Kueue's visibility server (the
// pending-workloads API, an aggregated API behind the release's APIServices
// v1beta1/v1beta2.visibility.kueue.x-k8s.io). Decision: the add-on leaves that API out. At
// KueueVersion its port can be set (the configuration's visibilityServer.bindPort), but its server
// writes its certificates into the fixed directory /visibility (sigs.k8s.io/kueue v0.17.0
// pkg/visibility/server.go, certDir and applyVisibilityServerOptions), the pod's emptyDir, so the
// offline cluster, which runs the manager as a process, cannot keep one manager's apart from
// another's or from the machine's; and an APIService that is registered but unavailable breaks
// discovery of its group for every client that lists the API groups, and namespace deletion (the
// namespace controller must list every group). Kueue itself does not need it: it serves
// kueuectl's and users' views of pending workloads only.
const kueueVisibilityOff = "--feature-gates=VisibilityOnDemand=false"

// kueueConfigArg is the manager's first argument in the release's Deployment, after which
// kueueVisibilityOff goes.
const kueueConfigArg = "- --config=/controller_manager_config.yaml"

// kueueManagerToleration lets the manager's pod run on a control-plane node. The release's pod
// tolerates nothing, and the cluster may have no untainted node at all: the control-plane nodes
// keep kubeadm's NoSchedule taint and the GPU workers carry the GPU taint (internal/bootstrap);
// a manager left Pending answers no webhook, and its webhooks (failurePolicy Fail) then refuse
// every Job. It goes before the pod's serviceAccountName, a line the release's Deployment has.
const (
	kueueManagerTolerationAnchor = "      serviceAccountName: kueue-controller-manager\n"
	kueueManagerToleration       = "      tolerations:\n      - effect: NoSchedule\n        key: node-role.kubernetes.io/control-plane\n        operator: Exists\n"
)

// kueueAddon is AddonKueue's documents: the release with the manager image in registry and
// without its ConfigMap, which the rendered one (gang admission, the MPIJob integration) replaces,
// without the visibility API (kueueVisibilityOff), then the queues of m's pools and teams.
func kueueAddon(o Options, m MPIOptions) ([]Document, error) {
	m, err := withMPIDefaults(o, m)
	if err != nil {
		return nil, err
	}
	docs, err := releaseDocuments(kueueRelease)
	if err != nil {
		return nil, err
	}
	out := make([]Document, 0, len(docs))
	replaced := false
	for _, d := range docs {
		switch {
		case d.Kind == "ConfigMap" && d.Name == KueueConfigMapName,
			d.Kind == "APIService" && strings.HasSuffix(d.Name, ".visibility.kueue.x-k8s.io"):
			continue
		case d.Kind == "Deployment":
			if !strings.Contains(d.YAML, kueueReleaseImage) || !strings.Contains(d.YAML, kueueConfigArg) || !strings.Contains(d.YAML, kueueManagerTolerationAnchor) {
				return nil, fmt.Errorf("kueue release: Deployment %s names no %s, has no argument %s or no line %q", d.Name, kueueReleaseImage, kueueConfigArg, kueueManagerTolerationAnchor)
			}
			d.YAML = strings.Replace(d.YAML, kueueManagerTolerationAnchor, kueueManagerToleration+kueueManagerTolerationAnchor, 1)
			d.YAML = strings.ReplaceAll(d.YAML, kueueReleaseImage, images.RefIn(images.Kueue, o.ImageRegistry))
			d.YAML = strings.Replace(d.YAML, kueueConfigArg, kueueConfigArg+"\n        - "+kueueVisibilityOff, 1)
			replaced = true
		}
		out = append(out, d)
	}
	if !replaced {
		return nil, fmt.Errorf("kueue release: no Deployment")
	}
	q, err := queues(o, m.Pools, m.Teams)
	if err != nil {
		return nil, err
	}
	qd, err := documents(q)
	if err != nil {
		return nil, err
	}
	return append(out, qd...), nil
}

// releaseDocuments splits a multi-document stream someone else wrote into Documents, reading
// each one's kind, name and namespace.
func releaseDocuments(stream string) ([]Document, error) {
	var out []Document
	for _, y := range strings.Split(stream, "---\n") {
		if strings.TrimSpace(y) == "" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(y), &head); err != nil {
			return nil, err
		}
		if head.Kind == "" || head.Metadata.Name == "" {
			return nil, fmt.Errorf("a document without kind or name: %.80q", y)
		}
		out = append(out, Document{APIVersion: head.APIVersion, Kind: head.Kind, Namespace: head.Metadata.Namespace, Name: head.Metadata.Name, YAML: y})
	}
	return out, nil
}
