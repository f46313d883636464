package bootstrap

// How a node takes its place in the cluster: the first control-plane node creates it (kubeadm
// init, with the provider-made CA and, for a highly available control plane, --upload-certs);
// every other control-plane node joins with the certificate key; workers join. Every join pins
// the cluster CA by its hash.

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/planerr"
)

// DefaultPodSubnet is the pod network when none is given: Flannel's own default, outside the
// 172.16.0.0/12 and 192.168.0.0/16 blocks Alibaba Cloud VPCs usually take.
const DefaultPodSubnet = "10.244.0.0/16"

var (
	certificateKeyRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	addonNameRE      = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*\.ya?ml$`)
)

// initNode is the first control-plane node: it runs kubeadm init.
func (o Options) initNode() bool { return o.Role == RoleControlPlane && !o.Kubernetes.JoinControlPlane }

// highlyAvailable is a first node that uploads the control-plane certificates for others to join.
func (o Options) highlyAvailable() bool { return o.initNode() && o.Kubernetes.CertificateKey != "" }

// joins reports whether the node runs kubeadm join (a first node of a highly available control
// plane may too, when it replaces a lost one).
func (o Options) joins() bool { return !o.initNode() || o.highlyAvailable() }

// podSubnet is the pod network CIDR, defaulted.
func (o Options) podSubnet() string {
	if o.Kubernetes.PodSubnet == "" {
		return DefaultPodSubnet
	}
	return o.Kubernetes.PodSubnet
}

// validateControlPlane checks the HA, CA and join settings. Secret values never appear in errors.
func validateControlPlane(o Options) (warning string, err error) {
	k := o.Kubernetes
	if k.JoinControlPlane && o.Role != RoleControlPlane {
		return "", planerr.Input("kubernetes.control_plane_init", "", "is false (join the control plane) on a "+o.Role+" node",
			"set kubernetes.role = \"control_plane\", or leave control_plane_init unset on workers")
	}
	if k.CertificateKey != "" && !certificateKeyRE.MatchString(k.CertificateKey) {
		return "", planerr.Input("kubernetes.certificate_key", "", "is not 64 hexadecimal digits (kubeadm's certificate key)",
			"use gpucluster_cluster_ca.<name>.certificate_key, or the output of `kubeadm certs certificate-key`")
	}
	if k.JoinControlPlane {
		if k.APIEndpoint == "" {
			return "", planerr.Input("kubernetes.api_endpoint", "", "is required for a control-plane node that joins",
				"set kubernetes.load_balancer_id (its address is the endpoint) or kubernetes.api_endpoint to the control plane's load balancer address:6443")
		}
		if k.CertificateKey == "" {
			return "", planerr.Input("kubernetes.certificate_key", "", "is required for a control-plane node that joins: it decrypts the certificates the first node uploaded",
				"pass gpucluster_cluster_ca.<name>.certificate_key to every control-plane pool")
		}
	}
	if o.highlyAvailable() && k.APIEndpoint == "" {
		return "", planerr.Input("kubernetes.api_endpoint", "", "is required with certificate_key: a highly available control plane needs one endpoint in front of its API servers (controlPlaneEndpoint)",
			"set kubernetes.load_balancer_id to the gpucluster_control_plane_endpoint's load_balancer_id")
	}
	if (k.CACertPEM == "") != (k.CAKeyPEM == "") {
		return "", planerr.Input("kubernetes.ca_cert_pem", "", "and kubernetes.ca_key_pem must be given together", "pass both from the same gpucluster_cluster_ca")
	}
	if k.CACertPEM != "" {
		if !o.initNode() {
			return "", planerr.Input("kubernetes.ca_key_pem", "", "is only for the first control-plane node (control_plane_init = true): other nodes get the CA by joining",
				"remove ca_cert_pem and ca_key_pem here and keep ca_cert_hash")
		}
		cert, err := clusterca.ParseCertPEM(k.CACertPEM)
		if err != nil {
			return "", planerr.Input("kubernetes.ca_cert_pem", "", "cannot be read: "+err.Error(), "pass gpucluster_cluster_ca.<name>.cert_pem")
		}
		// The key's parse error could quote key material: only say that it failed.
		key, err := clusterca.ParseKeyPEM(k.CAKeyPEM)
		if err != nil || !clusterca.KeyMatches(cert, key) {
			return "", planerr.Input("kubernetes.ca_key_pem", "", "is not a PEM private key of kubernetes.ca_cert_pem", "pass cert_pem and private_key_pem of the same gpucluster_cluster_ca")
		}
		hash := clusterca.CertHash(cert)
		if k.CACertHash != "" && k.CACertHash != hash {
			return "", planerr.Input("kubernetes.ca_cert_hash", k.CACertHash, "is not the hash of kubernetes.ca_cert_pem ("+hash+")",
				"take ca_cert_hash and cert_pem from the same gpucluster_cluster_ca")
		}
	}
	if o.joins() && k.CACertHash == "" {
		if !k.InsecureSkipCAVerification {
			return "", planerr.Input("kubernetes.ca_cert_hash", "", "is empty: a joining node would trust whichever machine answers at the API endpoint (kubeadm's unsafeSkipCAVerification), which could take it over",
				"pass gpucluster_cluster_ca.<name>.ca_cert_hash, or set kubernetes.insecure_skip_ca_verification = true to accept the risk")
		}
		return "kubernetes.insecure_skip_ca_verification is set: nodes join without pinning the cluster CA (unsafeSkipCAVerification), " +
			"so a machine that impersonates the API endpoint could take them over; pass ca_cert_hash from gpucluster_cluster_ca instead", nil
	}
	return "", nil
}

// validateAddons checks the add-on manifests: first control-plane node only, file names kubectl
// reads as YAML.
func validateAddons(o Options) error {
	if len(o.Kubernetes.Addons) > 0 && !o.initNode() {
		return planerr.Input("kubernetes.addons", "", "is only for the first control-plane node (control_plane_init = true), which applies them",
			"move addons to the pool with control_plane_init = true")
	}
	for _, name := range slices.Sorted(maps.Keys(o.Kubernetes.Addons)) {
		if err := reservedAddon(name); err != nil {
			return planerr.Input(planerr.Key("kubernetes.addons", name), name, err.Error(), "use another file name")
		}
		if !addonNameRE.MatchString(name) {
			return planerr.Input(planerr.Key("kubernetes.addons", name), name, "is not a file name ending in .yaml or .yml", "use lower-case letters, digits, '.', '_' and '-', such as 20-device-plugin.yaml")
		}
		if strings.TrimSpace(o.Kubernetes.Addons[name]) == "" {
			return planerr.Input(planerr.Key("kubernetes.addons", name), "", "is empty", "give the manifest's YAML or remove the entry")
		}
	}
	return nil
}
