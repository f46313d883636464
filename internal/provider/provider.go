// Package provider is the Terraform glue: schemas, plan checks and state. What to build comes from
// internal/catalog, how to call the API from internal/cloud.
package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// Address is the provider's registry address.
const Address = "registry.terraform.io/gpucluster/gpucluster"

// Environment variables read when the provider block leaves an attribute out. The credential
// ones live in internal/cloud with the rest of the chain.
const (
	envEndpoint   = "GPUCLUSTER_ENDPOINT"
	envMaxRetries = "GPUCLUSTER_MAX_RETRIES"
	envRateLimit  = "GPUCLUSTER_RATE_LIMIT"
)

var (
	_ provider.Provider                       = (*gpuclusterProvider)(nil)
	_ provider.ProviderWithFunctions          = (*gpuclusterProvider)(nil)
	_ provider.ProviderWithEphemeralResources = (*gpuclusterProvider)(nil)
)

// New returns the provider factory for providerserver.Serve and for tests.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &gpuclusterProvider{version: version} }
}

type gpuclusterProvider struct {
	version string
}

// regionPattern accepts Alibaba Cloud region ids: cn-wulanchabu, ap-southeast-1, us-west-1.
var regionPattern = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+$`)

func (p *gpuclusterProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "gpucluster"
	resp.Version = p.version
}

func (p *gpuclusterProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	endpointAttr := func(product string) schema.StringAttribute {
		return schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: fmt.Sprintf("Base URL for %s calls only, overriding `endpoint` (for example a VPC endpoint or a proxy).", product),
			Validators:          []validator.String{httpURL{}},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "Builds GPU research clusters on Alibaba Cloud. Credentials are looked for, first match wins, in the " +
			"provider block, the environment (`ALIBABA_CLOUD_ACCESS_KEY_ID`, `ALIBABA_CLOUD_ACCESS_KEY_SECRET`, " +
			"`ALIBABA_CLOUD_SECURITY_TOKEN`), then a profile of `~/.aliyun/config.json` (modes AK, StsToken, RamRoleArn).",
		Attributes: map[string]schema.Attribute{
			"region": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Region every resource lives in, such as `cn-wulanchabu`. Falls back to `ALIBABA_CLOUD_REGION`, then to the profile's `region_id`.",
				Validators: []validator.String{stringvalidator.RegexMatches(regionPattern,
					"must be an Alibaba Cloud region id: lowercase words joined by hyphens, such as cn-wulanchabu or ap-southeast-1")},
			},
			"access_key": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "AccessKey ID. Falls back to `ALIBABA_CLOUD_ACCESS_KEY_ID`.",
			},
			"secret_key": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "AccessKey secret. Falls back to `ALIBABA_CLOUD_ACCESS_KEY_SECRET`. Never logged.",
			},
			"security_token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "STS security token, for temporary credentials. Falls back to `ALIBABA_CLOUD_SECURITY_TOKEN`. Never logged.",
			},
			"profile": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Profile of `~/.aliyun/config.json` to read credentials from (modes AK, StsToken, RamRoleArn). Falls back to `ALIBABA_CLOUD_PROFILE`, then the file's current profile.",
			},
			"endpoint": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "One base URL for every product, such as `http://127.0.0.1:18686` for the offline emulator " +
					"(`gpucluster-emulator`). Falls back to `GPUCLUSTER_ENDPOINT`; unset means Alibaba Cloud's public endpoints.",
				Validators: []validator.String{httpURL{}},
			},
			"max_retries": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: fmt.Sprintf("How many times a call is retried after throttling, a 5xx answer or a dropped connection, with exponential backoff and jitter. Default %d; falls back to `GPUCLUSTER_MAX_RETRIES`.", cloud.DefaultMaxRetries),
				Validators:          []validator.Int64{int64validator.Between(0, 30)},
			},
			"rate_limit": schema.Float64Attribute{
				Optional:            true,
				MarkdownDescription: fmt.Sprintf("Client-side ceiling on API requests per second, shared by every resource. Default %d; falls back to `GPUCLUSTER_RATE_LIMIT`.", cloud.DefaultRateLimit),
				Validators:          []validator.Float64{float64validator.AtLeast(0.1)},
			},
		},
		Blocks: map[string]schema.Block{
			// A block, not a nested attribute: `endpoints { ... }` is how every Alibaba Cloud
			// provider has spelled this for years, and users paste it between them.
			"endpoints": schema.SingleNestedBlock{
				MarkdownDescription: "Per-product base URLs, each overriding `endpoint`.",
				Attributes: map[string]schema.Attribute{
					cloud.ProductECS:    endpointAttr("ECS"),
					cloud.ProductVPC:    endpointAttr("VPC"),
					cloud.ProductNAS:    endpointAttr("NAS"),
					cloud.ProductOSS:    endpointAttr("OSS"),
					cloud.ProductSTS:    endpointAttr("STS"),
					cloud.ProductSLB:    endpointAttr("SLB (Classic Load Balancer)"),
					cloud.ProductESS:    endpointAttr("ESS (Auto Scaling)"),
					cloud.ProductQuotas: endpointAttr("Quota Center (read by `gpucluster_preflight`)"),
				},
			},
		},
	}
}

type providerModel struct {
	Region        types.String    `tfsdk:"region"`
	AccessKey     types.String    `tfsdk:"access_key"`
	SecretKey     types.String    `tfsdk:"secret_key"`
	SecurityToken types.String    `tfsdk:"security_token"`
	Profile       types.String    `tfsdk:"profile"`
	Endpoint      types.String    `tfsdk:"endpoint"`
	Endpoints     *endpointsModel `tfsdk:"endpoints"`
	MaxRetries    types.Int64     `tfsdk:"max_retries"`
	RateLimit     types.Float64   `tfsdk:"rate_limit"`
}

type endpointsModel struct {
	ECS types.String `tfsdk:"ecs"`
	VPC types.String `tfsdk:"vpc"`
	NAS types.String `tfsdk:"nas"`
	OSS types.String `tfsdk:"oss"`
	STS types.String `tfsdk:"sts"`
	SLB types.String `tfsdk:"slb"`
	ESS types.String `tfsdk:"ess"`
	// Quotas is the Quota Center's.
	Quotas types.String `tfsdk:"quotas"`
}

func (p *gpuclusterProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}

	home, _ := os.UserHomeDir()
	creds, err := cloud.ResolveCredentials(cloud.CredentialInput{
		AccessKey:     cfg.AccessKey.ValueString(),
		SecretKey:     cfg.SecretKey.ValueString(),
		SecurityToken: cfg.SecurityToken.ValueString(),
		Profile:       cfg.Profile.ValueString(),
	}, os.Getenv, home)
	if err != nil {
		resp.Diagnostics.AddError("Configuring the gpucluster provider: no usable credentials", err.Error())
		return
	}

	region := firstNonEmpty(cfg.Region.ValueString(), os.Getenv(cloud.EnvRegion), creds.Region)
	if region == "" {
		resp.Diagnostics.AddAttributeError(path.Root("region"), "Configuring the gpucluster provider: no region",
			"Set region in the provider block (for example \"cn-wulanchabu\"), or ALIBABA_CLOUD_REGION, or region_id in the profile.")
		return
	}
	if !regionPattern.MatchString(region) {
		resp.Diagnostics.AddAttributeError(path.Root("region"), "Configuring the gpucluster provider: malformed region",
			fmt.Sprintf("%q is not an Alibaba Cloud region id (lowercase words joined by hyphens, such as cn-wulanchabu).", region))
		return
	}

	endpoint, endpoints, ok := configuredEndpoints(cfg, &resp.Diagnostics)
	if !ok {
		return
	}
	maxRetries, rateLimit, ok := configuredLimits(cfg, &resp.Diagnostics)
	if !ok {
		return
	}

	client, err := cloud.New(ctx, cloud.Config{
		Region:      region,
		Credentials: creds,
		Endpoint:    endpoint,
		Endpoints:   endpoints,
		MaxRetries:  int(maxRetries),
		RateLimit:   rateLimit,
		UserAgent:   "terraform-provider-gpucluster/" + p.version,
	})
	if err != nil {
		resp.Diagnostics.AddError("Configuring the gpucluster provider", err.Error())
		return
	}
	tflog.Info(ctx, "gpucluster provider configured", map[string]any{
		"region": region, "credentials_source": creds.Source, "access_key_id": creds.AccessKeyID,
		"endpoint": endpoint, "max_retries": maxRetries, "rate_limit": rateLimit,
	})
	resp.DataSourceData = client
	resp.ResourceData = client
}

// configuredEndpoints is the endpoint every product uses (endpoint, or GPUCLUSTER_ENDPOINT) and
// the per-product overrides; ok is false when the endpoint is malformed.
func configuredEndpoints(cfg providerModel, diags *diag.Diagnostics) (endpoint string, endpoints map[string]string, ok bool) {
	endpoint = firstNonEmpty(cfg.Endpoint.ValueString(), os.Getenv(envEndpoint))
	if endpoint != "" {
		if _, _, err := cloud.ParseEndpoint(endpoint); err != nil {
			diags.AddAttributeError(path.Root("endpoint"), "Configuring the gpucluster provider: bad endpoint",
				fmt.Sprintf("%v. Give a base URL such as http://127.0.0.1:18686.", err))
			return "", nil, false
		}
	}
	endpoints = map[string]string{}
	if e := cfg.Endpoints; e != nil {
		for product, v := range map[string]types.String{cloud.ProductECS: e.ECS, cloud.ProductVPC: e.VPC, cloud.ProductNAS: e.NAS, cloud.ProductOSS: e.OSS, cloud.ProductSTS: e.STS, cloud.ProductSLB: e.SLB, cloud.ProductESS: e.ESS, cloud.ProductQuotas: e.Quotas} {
			if v.ValueString() != "" {
				endpoints[product] = v.ValueString()
			}
		}
	}
	return endpoint, endpoints, true
}

// configuredLimits are the retry budget and the rate limit, from the configuration, the
// environment or the defaults; ok is false when an environment value is malformed.
func configuredLimits(cfg providerModel, diags *diag.Diagnostics) (maxRetries int64, rateLimit float64, ok bool) {
	maxRetries = int64(cloud.DefaultMaxRetries)
	if !cfg.MaxRetries.IsNull() && !cfg.MaxRetries.IsUnknown() {
		maxRetries = cfg.MaxRetries.ValueInt64()
	} else if v := os.Getenv(envMaxRetries); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			diags.AddError("Configuring the gpucluster provider: bad "+envMaxRetries, fmt.Sprintf("%q is not a whole number >= 0.", v))
			return 0, 0, false
		}
		maxRetries = n
	}
	rateLimit = float64(cloud.DefaultRateLimit)
	if !cfg.RateLimit.IsNull() && !cfg.RateLimit.IsUnknown() {
		rateLimit = cfg.RateLimit.ValueFloat64()
	} else if v := os.Getenv(envRateLimit); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			diags.AddError("Configuring the gpucluster provider: bad "+envRateLimit, fmt.Sprintf("%q is not a number > 0.", v))
			return 0, 0, false
		}
		rateLimit = f
	}
	return maxRetries, rateLimit, true
}

func (p *gpuclusterProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newRDMANetworkResource,
		newStorageTierResource,
		newNodePoolResource,
		newControlPlaneEndpointResource,
		newNodeImageResource,
		newClusterCAResource,
		newBootstrapBucketResource,
	}
}

func (p *gpuclusterProvider) EphemeralResources(_ context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{
		newClusterCAEphemeralResource,
	}
}

func (p *gpuclusterProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newZonesDataSource,
		newGPUCatalogDataSource,
		newScenarioDataSource,
		newInstanceTypesDataSource,
		newNodeBootstrapDataSource,
		newKubernetesManifestsDataSource,
		newAlertRulesDataSource,
		newNodeRegistrationDataSource,
		newPreflightDataSource,
	}
}

func (p *gpuclusterProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{
		newInstanceTypeForFunction,
		newScenarioCheckFunction,
	}
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// httpURL validates that a string is an http(s) URL with a host.
type httpURL struct{}

func (httpURL) Description(context.Context) string {
	return "must be an http:// or https:// URL with a host"
}

func (v httpURL) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (httpURL) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, _, err := cloud.ParseEndpoint(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid endpoint URL",
			fmt.Sprintf("%s %v. Give a base URL such as http://127.0.0.1:18686 or https://ecs.cn-wulanchabu.aliyuncs.com.", req.Path, err))
	}
}
