package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/clusterca"
)

func newClusterCAEphemeralResource() ephemeral.EphemeralResource { return &clusterCAEphemeral{} }

// clusterCAEphemeral turns a seed back into the CA's secrets for one run, without storing them:
// the counterpart of the gpucluster_cluster_ca resource's seed_wo.
type clusterCAEphemeral struct{}

type clusterCAEphemeralModel struct {
	Seed           types.String `tfsdk:"seed"`
	KeyAlgorithm   types.String `tfsdk:"key_algorithm"`
	CertPEM        types.String `tfsdk:"cert_pem"`
	CACertHash     types.String `tfsdk:"ca_cert_hash"`
	PrivateKeyPEM  types.String `tfsdk:"private_key_pem"`
	CertificateKey types.String `tfsdk:"certificate_key"`
	JoinToken      types.String `tfsdk:"join_token"`
}

func (e *clusterCAEphemeral) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_ca"
}

func (e *clusterCAEphemeral) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The cluster CA's secrets, derived from the seed a `gpucluster_cluster_ca` resource was made with " +
			"(its `seed_wo`), for one run only: never in plan or state (OpenTofu >= 1.11, Terraform >= 1.10). Pass them to " +
			"write-only arguments, provider configurations or other ephemeral resources. Give `cert_pem` the resource's " +
			"certificate to have the seed checked against it.",
		Attributes: map[string]schema.Attribute{
			"seed": schema.StringAttribute{
				Required:            true,
				Sensitive:           true,
				MarkdownDescription: "The seed the CA was made from: at least 32 characters, such as `openssl rand -hex 32` keeps in your secret store.",
				Validators:          []validator.String{caSeedValidator{}},
			},
			"key_algorithm": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: caAlgorithmDescription() + " Must be the resource's: another algorithm derives another key.",
				Validators:          []validator.String{caAlgorithmValidator{}},
			},
			"cert_pem": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The CA certificate (the resource's `cert_pem`). When given, opening fails unless the seed derives its key.",
			},
			"ca_cert_hash": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: caHashDescription,
			},
			"private_key_pem": schema.StringAttribute{
				Computed:            true,
				Sensitive:           true,
				MarkdownDescription: caPrivateKeyDescription,
			},
			"certificate_key": schema.StringAttribute{
				Computed:            true,
				Sensitive:           true,
				MarkdownDescription: caCertificateKeyDescription,
			},
			"join_token": schema.StringAttribute{
				Computed:            true,
				Sensitive:           true,
				MarkdownDescription: caJoinTokenDescription,
			},
		},
	}
}

func (e *clusterCAEphemeral) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	var m clusterCAEphemeralModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	alg := clusterca.DefaultAlgorithm
	if !m.KeyAlgorithm.IsNull() {
		a, err := clusterca.ParseAlgorithm(m.KeyAlgorithm.ValueString())
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("key_algorithm"), "Invalid key_algorithm", err.Error())
			return
		}
		alg = a
	}
	material, err := clusterca.Derive(m.Seed.ValueString(), alg)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("seed"), "Cannot derive the cluster CA from seed", err.Error())
		return
	}
	hash, err := clusterca.PublicKeyHash(material.Key.Public())
	if err != nil {
		resp.Diagnostics.AddError("Hashing the cluster CA key", err.Error())
		return
	}
	if !m.CertPEM.IsNull() {
		cert, err := clusterca.ParseCertPEM(m.CertPEM.ValueString())
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("cert_pem"), "Invalid cert_pem",
				err.Error()+"; give the gpucluster_cluster_ca resource's cert_pem.")
			return
		}
		if !clusterca.KeyMatches(cert, material.Key) {
			resp.Diagnostics.AddAttributeError(path.Root("seed"), "The seed does not derive this CA's key",
				"cert_pem's key has hash "+clusterca.CertHash(cert)+"; this seed with key_algorithm "+string(alg)+" derives "+hash+
					". Give the seed and key_algorithm the gpucluster_cluster_ca resource was made with.")
			return
		}
	}
	keyPEM, err := material.KeyPEM()
	if err != nil {
		resp.Diagnostics.AddError("Encoding the cluster CA key", err.Error())
		return
	}
	m.KeyAlgorithm = types.StringValue(string(alg))
	m.CACertHash = types.StringValue(hash)
	m.PrivateKeyPEM = types.StringValue(keyPEM)
	m.CertificateKey = types.StringValue(material.CertificateKey)
	m.JoinToken = types.StringValue(material.JoinToken)
	resp.Diagnostics.Append(resp.Result.Set(ctx, &m)...)
}
