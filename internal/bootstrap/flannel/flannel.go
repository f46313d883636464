// Package flannel renders the Flannel CNI manifest the first control-plane node applies, so that
// nodes become Ready. Written here from Flannel's documented objects (Namespace, ServiceAccount,
// ClusterRole, ClusterRoleBinding, ConfigMap with net-conf.json, DaemonSet), not copied from its
// kube-flannel.yml, and pinned to one release.
//
// Why Flannel with VXLAN: it needs nothing from the cloud (no route tables, no ENI per pod), so it
// works in any Alibaba Cloud VPC vSwitch layout; VXLAN is plain UDP 8472 between the nodes, which
// the cluster's security group allows within itself. GPU-to-GPU traffic (NCCL over eRDMA) uses the
// hosts' own network devices and never passes through the CNI, so the overlay's overhead does not
// touch training bandwidth.
package flannel

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// The pinned release and its images from their upstream registry, from the project's one table
// of images (internal/images, which cites the release manifest); RenderIn takes them from the
// cluster's image registry instead.
var (
	Image          = images.Ref(images.Flannel)
	CNIPluginImage = images.Ref(images.FlannelCNIPlugin)
)

const (
	Namespace       = "kube-flannel"
	DaemonSetName   = "kube-flannel-ds"
	ConfigMapName   = "kube-flannel-cfg"
	serviceAccount  = "flannel"
	backendVXLAN    = "vxlan"
	cniConfFileName = "10-flannel.conflist"
)

// NetConf is Flannel's net-conf.json.
type NetConf struct {
	Network        string `json:"Network"`
	EnableNFTables bool   `json:"EnableNFTables"`
	Backend        struct {
		Type string `json:"Type"`
	} `json:"Backend"`
}

// Render returns the manifest as one multi-document YAML stream for a cluster whose pod network
// (kubeadm's podSubnet) is podCIDR, with the images from their upstream registry.
func Render(podCIDR string) (string, error) { return RenderIn(podCIDR, "") }

// RenderIn is Render with the images in registry (internal/images MirrorName; "" is upstream).
func RenderIn(podCIDR, registry string) (string, error) {
	if podCIDR == "" {
		return "", fmt.Errorf("flannel needs the pod network CIDR")
	}
	nc := NetConf{Network: podCIDR}
	nc.Backend.Type = backendVXLAN
	netConf, err := json.MarshalIndent(nc, "", "  ")
	if err != nil {
		return "", err
	}
	cniConf, err := json.MarshalIndent(map[string]any{
		"name": "cbr0", "cniVersion": "0.3.1",
		"plugins": []any{
			map[string]any{"type": "flannel", "delegate": map[string]any{"hairpinMode": true, "isDefaultGateway": true}},
			map[string]any{"type": "portmap", "capabilities": map[string]any{"portMappings": true}},
		},
	}, "", "  ")
	if err != nil {
		return "", err
	}
	objs := []any{
		&corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			// Flannel's pods use the host network and host paths: the namespace must admit
			// privileged pods under Pod Security admission.
			ObjectMeta: metav1.ObjectMeta{Name: Namespace, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged", "k8s-app": "flannel"}},
		},
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: metav1.ObjectMeta{Name: serviceAccount, Namespace: Namespace, Labels: map[string]string{"k8s-app": "flannel"}},
		},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: "flannel", Labels: map[string]string{"k8s-app": "flannel"}},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
				{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
				{APIGroups: []string{""}, Resources: []string{"nodes/status"}, Verbs: []string{"patch"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: "flannel", Labels: map[string]string{"k8s-app": "flannel"}},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "flannel"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: serviceAccount, Namespace: Namespace}},
		},
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: Namespace, Labels: map[string]string{"k8s-app": "flannel", "tier": "node"}},
			Data:       map[string]string{"cni-conf.json": string(cniConf) + "\n", "net-conf.json": string(netConf) + "\n"},
		},
		daemonSet(images.RefIn(images.Flannel, registry), images.RefIn(images.FlannelCNIPlugin, registry)),
	}
	parts := make([]string, 0, len(objs))
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return "", fmt.Errorf("encoding the flannel manifest: %w", err)
		}
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "---\n"), nil
}

func daemonSet(image, cniPluginImage string) *appsv1.DaemonSet {
	labels := map[string]string{"app": "flannel", "k8s-app": "flannel", "tier": "node"}
	hostPath := func(name, p string, t corev1.HostPathType) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p, Type: &t}}}
	}
	field := func(name, p string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: p}}}
	}
	privileged := false
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: DaemonSetName, Namespace: Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "flannel"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
							{Key: "kubernetes.io/os", Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}},
						}}},
					}}},
					HostNetwork:       true,
					PriorityClassName: "system-node-critical",
					// Every node needs pod networking, whatever it is tainted with (control
					// plane, GPU, the user's own taints).
					Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					ServiceAccountName: serviceAccount,
					InitContainers: []corev1.Container{
						{
							Name: "install-cni-plugin", Image: cniPluginImage,
							Command:      []string{"cp"},
							Args:         []string{"-f", "/flannel", "/opt/cni/bin/flannel"},
							VolumeMounts: []corev1.VolumeMount{{Name: "cni-plugin", MountPath: "/opt/cni/bin"}},
						},
						{
							Name: "install-cni", Image: image,
							Command:      []string{"cp"},
							Args:         []string{"-f", "/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/" + cniConfFileName},
							VolumeMounts: []corev1.VolumeMount{{Name: "cni", MountPath: "/etc/cni/net.d"}, {Name: "flannel-cfg", MountPath: "/etc/kube-flannel/"}},
						},
					},
					Containers: []corev1.Container{{
						Name: "kube-flannel", Image: image,
						Command: []string{"/opt/bin/flanneld"},
						// The subnet of each node comes from its spec.podCIDR (kubeadm's podSubnet).
						Args: []string{"--ip-masq", "--kube-subnet-mgr"},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("50Mi"),
						}},
						SecurityContext: &corev1.SecurityContext{
							Privileged:   &privileged,
							Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN", "NET_RAW"}},
						},
						Env: []corev1.EnvVar{
							field("POD_NAME", "metadata.name"),
							field("POD_NAMESPACE", "metadata.namespace"),
							{Name: "EVENT_QUEUE_DEPTH", Value: "5000"},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "run", MountPath: "/run/flannel"},
							{Name: "flannel-cfg", MountPath: "/etc/kube-flannel/"},
							{Name: "xtables-lock", MountPath: "/run/xtables.lock"},
						},
					}},
					Volumes: []corev1.Volume{
						hostPath("run", "/run/flannel", corev1.HostPathDirectoryOrCreate),
						hostPath("cni-plugin", "/opt/cni/bin", corev1.HostPathDirectoryOrCreate),
						hostPath("cni", "/etc/cni/net.d", corev1.HostPathDirectoryOrCreate),
						{Name: "flannel-cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName}}}},
						hostPath("xtables-lock", "/run/xtables.lock", corev1.HostPathFileOrCreate),
					},
				},
			},
		},
	}
}
