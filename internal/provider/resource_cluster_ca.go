package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
)

var (
	_ resource.ResourceWithModifyPlan  = (*clusterCAResource)(nil)
	_ resource.ResourceWithImportState = (*clusterCAResource)(nil)
)

func newClusterCAResource() resource.Resource { return &clusterCAResource{} }

// clusterCAResource is the cluster's Kubernetes CA, made once and kept in state so every node
// that ever joins pins the same hash. It calls no cloud API: the CA exists only in state (and,
// in seed mode, in the seed the user keeps).
type clusterCAResource struct{}

type clusterCAModel struct {
	ID             types.String `tfsdk:"id"`
	KeyAlgorithm   types.String `tfsdk:"key_algorithm"`
	ValidityPeriod types.String `tfsdk:"validity_period"`
	SeedWO         types.String `tfsdk:"seed_wo"`
	SeedWOVersion  types.Int64  `tfsdk:"seed_wo_version"`
	CertPEM        types.String `tfsdk:"cert_pem"`
	CACertHash     types.String `tfsdk:"ca_cert_hash"`
	NotAfter       types.String `tfsdk:"not_after"`
	PrivateKeyPEM  types.String `tfsdk:"private_key_pem"`
	CertificateKey types.String `tfsdk:"certificate_key"`
	JoinToken      types.String `tfsdk:"join_token"`
}

func (r *clusterCAResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_ca"
}

func (r *clusterCAResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := joinAttributes(clusterCAInputAttributes(), clusterCAOutputAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "The cluster's Kubernetes CA, made before any node boots so that every `kubeadm join` can pin its hash: " +
			"a CA key pair, a self-signed certificate kubeadm accepts as `/etc/kubernetes/pki/ca.crt`, the certificate key " +
			"`kubeadm init --upload-certs` needs, and a bootstrap token. Made once and kept: plans after the first change " +
			"nothing until an input changes, which replaces the CA (and with it every node's trust).\n\n" +
			"Without `seed_wo` the key comes from the system's randomness and the private key, certificate key and token " +
			"are kept in state, marked sensitive. With `seed_wo` (write-only: OpenTofu >= 1.11, Terraform >= 1.11) all three " +
			"follow from the seed and none is stored: the state holds the certificate and its hash only, and the " +
			"`gpucluster_cluster_ca` ephemeral resource turns the same seed back into the secrets when a run needs them.",
		Attributes: attrs,
	}
}

// clusterCAInputAttributes: how the CA is made: key algorithm, validity, and the optional seed.
func clusterCAInputAttributes() map[string]schema.Attribute {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	return map[string]schema.Attribute{
		"id": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The CA's discovery hash, as `ca_cert_hash`.",
			PlanModifiers:       keepStateForUnknown(),
		},
		"key_algorithm": schema.StringAttribute{
			Optional:            true,
			Computed:            true,
			Default:             stringdefault.StaticString(string(clusterca.DefaultAlgorithm)),
			MarkdownDescription: caAlgorithmDescription(),
			Validators:          []validator.String{caAlgorithmValidator{}},
			PlanModifiers:       replace,
		},
		"validity_period": schema.StringAttribute{
			Optional: true,
			Computed: true,
			Default:  stringdefault.StaticString("87600h"),
			MarkdownDescription: "How long the CA certificate is valid, in hours as kubeadm's `caCertificateValidityPeriod`: between " +
				"`8760h` (kubeadm signs one-year certificates from it) and `876000h`. Default `87600h`, ten years. Changing it replaces the CA.",
			Validators:    []validator.String{caValidityValidator{}},
			PlanModifiers: replace,
		},
		"seed_wo": schema.StringAttribute{
			Optional:  true,
			Sensitive: true,
			WriteOnly: true,
			MarkdownDescription: "Write-only (never stored): a secret of at least 32 characters, such as `openssl rand -hex 32`, that the " +
				"CA key, certificate key and join token are derived from. Keep it in a secret store and pass it through an ephemeral " +
				"variable or ephemeral resource. Every plan that gives it checks it still derives this CA's key. Changing the seed alone " +
				"is refused; change `seed_wo_version` with it to replace the CA.",
			Validators: []validator.String{caSeedValidator{}},
		},
		"seed_wo_version": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "A number to change whenever `seed_wo` changes: write-only values leave no trace in state to compare, so this is what tells a new seed from the old one. Changing it replaces the CA.",
			Validators:          []validator.Int64{int64validator.AlsoRequires(path.MatchRoot("seed_wo"))},
			PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace()},
		},
	}
}

// clusterCAOutputAttributes: the certificate, its hash and expiry, and the secrets derived with it.
func clusterCAOutputAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"cert_pem": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The CA certificate, PEM: `CN=kubernetes`, a CA for certificate signing, valid for `validity_period`. Public: it goes to every node.",
			PlanModifiers:       keepStateForUnknown(),
		},
		"ca_cert_hash": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: caHashDescription + " With `seed_wo` it is known at plan time.",
			PlanModifiers:       keepStateForUnknown(),
		},
		"not_after": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "When the CA certificate expires (RFC 3339, UTC).",
			PlanModifiers:       keepStateForUnknown(),
		},
		"private_key_pem": schema.StringAttribute{
			Computed:            true,
			Sensitive:           true,
			MarkdownDescription: caPrivateKeyDescription + " Null when `seed_wo` is set (take it from the ephemeral resource).",
			PlanModifiers:       keepStateForUnknown(),
		},
		"certificate_key": schema.StringAttribute{
			Computed:            true,
			Sensitive:           true,
			MarkdownDescription: caCertificateKeyDescription + " Null when `seed_wo` is set.",
			PlanModifiers:       keepStateForUnknown(),
		},
		"join_token": schema.StringAttribute{
			Computed:            true,
			Sensitive:           true,
			MarkdownDescription: caJoinTokenDescription + " Null when `seed_wo` is set.",
			PlanModifiers:       keepStateForUnknown(),
		},
	}
}

// caMaterial makes the CA's secrets: from the seed when there is one, else at random.
func caMaterial(alg clusterca.Algorithm, seed types.String) (clusterca.Material, error) {
	if seed.IsNull() {
		return clusterca.Generate(alg)
	}
	return clusterca.Derive(seed.ValueString(), alg)
}

func (r *clusterCAResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan, config clusterCAModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	// Write-only values reach the provider in the configuration only; the plan holds null.
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	alg, err := clusterca.ParseAlgorithm(plan.KeyAlgorithm.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("key_algorithm"), "Invalid key_algorithm", err.Error())
		return
	}
	validity, err := clusterca.ParseValidity(plan.ValidityPeriod.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("validity_period"), "Invalid validity_period", err.Error())
		return
	}
	m, err := caMaterial(alg, config.SeedWO)
	if err != nil {
		resp.Diagnostics.AddError("Making the cluster CA key", err.Error())
		return
	}
	certPEM, err := clusterca.SelfSign(m.Key, validity, time.Now())
	if err != nil {
		resp.Diagnostics.AddError("Making the cluster CA certificate", err.Error())
		return
	}
	cert, err := clusterca.ParseCertPEM(certPEM)
	if err != nil {
		resp.Diagnostics.AddError("Reading back the cluster CA certificate", err.Error())
		return
	}
	hash := clusterca.CertHash(cert)
	plan.ID = types.StringValue(hash)
	plan.CACertHash = types.StringValue(hash)
	plan.CertPEM = types.StringValue(certPEM)
	plan.NotAfter = types.StringValue(cert.NotAfter.UTC().Format(time.RFC3339))
	plan.SeedWO = types.StringNull()
	if config.SeedWO.IsNull() {
		keyPEM, err := m.KeyPEM()
		if err != nil {
			resp.Diagnostics.AddError("Encoding the cluster CA key", err.Error())
			return
		}
		plan.PrivateKeyPEM = types.StringValue(keyPEM)
		plan.CertificateKey = types.StringValue(m.CertificateKey)
		plan.JoinToken = types.StringValue(m.JoinToken)
	} else {
		plan.PrivateKeyPEM, plan.CertificateKey, plan.JoinToken = types.StringNull(), types.StringNull(), types.StringNull()
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// Read keeps the state as it is (the framework hands it back unchanged): the CA lives nowhere
// else to drift from.
func (r *clusterCAResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

// Update keeps the planned state, which is the prior one: every input but the write-only seed
// replaces the CA, and a changed seed without a new seed_wo_version is refused at plan time.
func (r *clusterCAResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {
}

// Delete forgets the CA. Nodes that trust it keepStateForUnknown() doing so until they are replaced.
func (r *clusterCAResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}

// ImportState refuses with the reason and what to do instead, rather than the framework's
// generic "not implemented".
func (r *clusterCAResource) ImportState(_ context.Context, _ resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.AddError("gpucluster_cluster_ca cannot be imported",
		"The CA exists only in state (and, made from a seed, in your secret store): there is no cloud object to read its key back from. "+
			"Remove the import and let the resource create the CA; to keepStateForUnknown() a CA made from a seed across states, give the new resource the same seed_wo.")
}

// ModifyPlan makes the hash known at plan time in seed mode (it follows from the seed alone, so
// the nodes' user data can be planned with it) and refuses a seed that does not derive the CA in
// state: applying with it would hand nodes a key their CA certificate does not match.
func (r *clusterCAResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan, config clusterCAModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || config.SeedWO.IsNull() || config.SeedWO.IsUnknown() || plan.KeyAlgorithm.IsUnknown() {
		return
	}
	alg, err := clusterca.ParseAlgorithm(plan.KeyAlgorithm.ValueString())
	if err != nil {
		return // the attribute's validator has reported it
	}
	m, err := clusterca.Derive(config.SeedWO.ValueString(), alg)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("seed_wo"), "Cannot derive the cluster CA from seed_wo", err.Error())
		return
	}
	hash, err := clusterca.PublicKeyHash(m.Key.Public())
	if err != nil {
		resp.Diagnostics.AddError("Hashing the cluster CA key", err.Error())
		return
	}

	if req.State.Raw.IsNull() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("ca_cert_hash"), hash)...)
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("id"), hash)...)
		for _, secret := range []string{"private_key_pem", "certificate_key", "join_token"} {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(secret), types.StringNull())...)
		}
		return
	}
	var state clusterCAModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	replacing := !plan.SeedWOVersion.Equal(state.SeedWOVersion) || !plan.KeyAlgorithm.Equal(state.KeyAlgorithm) ||
		!plan.ValidityPeriod.Equal(state.ValidityPeriod)
	if replacing || hash == state.CACertHash.ValueString() {
		return
	}
	how := "was made from another seed"
	if !state.PrivateKeyPEM.IsNull() {
		how = "was made with a random key, before seed_wo was set"
	}
	resp.Diagnostics.AddAttributeError(path.Root("seed_wo"), "seed_wo does not derive this cluster CA",
		fmt.Sprintf("The CA in state (%s) %s; this seed derives %s. To keepStateForUnknown() the CA and every node's trust in it, give back the seed it was made from. "+
			"To replace the CA with one made from this seed, also change seed_wo_version (every node then has to be replaced to trust the new CA).",
			state.CACertHash.ValueString(), how, hash))
}

// keepStateForUnknown: a computed value that only a replacement changes keeps its state in plans.
func keepStateForUnknown() []planmodifier.String {
	return []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
}
