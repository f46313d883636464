package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
)

// The inputs gpucluster_cluster_ca takes as a resource and as an ephemeral resource: checked the
// same way in both, so a configuration that validates in one validates in the other.

// caAlgorithmValidator accepts the key algorithms kubeadm v1beta4's encryptionAlgorithm accepts.
type caAlgorithmValidator struct{}

func (caAlgorithmValidator) Description(context.Context) string {
	return "must be one of " + strings.Join(clusterca.AlgorithmNames(), ", ")
}

func (v caAlgorithmValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (caAlgorithmValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := clusterca.ParseAlgorithm(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid key_algorithm",
			err.Error()+" (kubeadm's ClusterConfiguration encryptionAlgorithm must name the same algorithm).")
	}
}

// caValidityValidator accepts a validity period kubeadm can work with.
type caValidityValidator struct{}

func (caValidityValidator) Description(context.Context) string {
	return "a duration in hours between one and a hundred years, such as \"87600h\""
}

func (v caValidityValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (caValidityValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := clusterca.ParseValidity(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid validity_period", err.Error()+".")
	}
}

// caSeedValidator checks a seed's length. Its diagnostics give the length, never the value: the
// seed is the CA's private key in all but encoding.
type caSeedValidator struct{}

func (caSeedValidator) Description(context.Context) string {
	return fmt.Sprintf("at least %d characters of secret randomness, such as the output of `openssl rand -hex 32`", clusterca.MinSeedLength)
}

func (v caSeedValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (caSeedValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if n := len(req.ConfigValue.ValueString()); n < clusterca.MinSeedLength {
		resp.Diagnostics.AddAttributeError(req.Path, "Seed too short",
			fmt.Sprintf("The seed is %d characters; the CA key, certificate key and join token all follow from it, so it must be at least %d characters of secret randomness. Generate one with `openssl rand -hex 32` and keep it in a secret store.",
				n, clusterca.MinSeedLength))
	}
}

// caHashDescription is the ca_cert_hash attribute's description, the same in both kinds.
const caHashDescription = "The CA's discovery hash, `sha256:` and the hex SHA-256 of its DER SubjectPublicKeyInfo: the value of " +
	"`kubeadm join --discovery-token-ca-cert-hash` (and `caCertHashes` in a v1beta4 JoinConfiguration), which makes every " +
	"joining node check it is talking to this cluster's API server."

const (
	caPrivateKeyDescription     = "The CA private key, PEM (`EC PRIVATE KEY` or `RSA PRIVATE KEY`, as kubeadm writes `/etc/kubernetes/pki/ca.key`). Give it to the control-plane nodes only."
	caCertificateKeyDescription = "64 hex digits: the key `kubeadm init --upload-certs --certificate-key` encrypts the control-plane certificates with, and `kubeadm join --control-plane --certificate-key` decrypts them with."
	caJoinTokenDescription      = "A kubeadm bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`, for `kubeadm init` to create and every `kubeadm join` to use."
)

func caAlgorithmDescription() string {
	return fmt.Sprintf("Key algorithm of the CA, as kubeadm v1beta4's `encryptionAlgorithm` names it: %s. Default `%s`. Changing it replaces the CA.",
		"`"+strings.Join(clusterca.AlgorithmNames(), "`, `")+"`", clusterca.DefaultAlgorithm)
}
