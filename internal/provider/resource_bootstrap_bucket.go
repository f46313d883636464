package provider

// gpucluster_bootstrap_bucket: the OSS bucket node pools' bootstrap bundles go in (issue #31),
// with a policy that lets each pool's RAM role read only its own prefix. The cloud steps are
// internal/bundle/bucket's; here are the schema, the plan checks and the state.

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/bucket"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

var (
	_ resource.ResourceWithConfigure      = (*bootstrapBucketResource)(nil)
	_ resource.ResourceWithImportState    = (*bootstrapBucketResource)(nil)
	_ resource.ResourceWithValidateConfig = (*bootstrapBucketResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*bootstrapBucketResource)(nil)
)

func newBootstrapBucketResource() resource.Resource { return &bootstrapBucketResource{} }

type bootstrapBucketResource struct {
	client *cloud.Client
}

func (r *bootstrapBucketResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_bootstrap_bucket"
}

func (r *bootstrapBucketResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The OSS bucket node pools put their bootstrap bundles in (`gpucluster_node_pool.bootstrap_bundle`): " +
			"private, versioned, public access blocked, encrypted at rest, tagged `gpucluster:managed-by` and " +
			"`gpucluster:bootstrap-bucket`, with a bucket policy that lets each reader's RAM role `oss:GetObject` under its " +
			"`key_prefix` and nothing else, in the vendor's syntax: principal `arn:sts::<account uid>:assumed-role/<role>/*` " +
			"(the role's sessions, which is what an instance holds), resource `acs:oss:*:<account uid>:<bucket>/<prefix>/*` " +
			"(https://www.alibabacloud.com/help/en/oss/user-guide/bucket-policy). A bucket policy grants, it does not take away: " +
			"give the roles no RAM policy that reads every bucket. Destroying it deletes every object version with the bucket " +
			"(the pools delete their bundles first). Import by the bucket name.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, MarkdownDescription: "The bucket name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Bucket name, globally unique: 3-63 lowercase letters, digits and hyphens, not starting or ending " +
					"with a hyphen. Changing it replaces the bucket.",
				Validators: []validator.String{stringvalidator.RegexMatches(storageNamePattern,
					"must be 3-63 lowercase letters, digits and hyphens, not starting or ending with a hyphen")},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"encryption": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(bucket.EncryptionKMS),
				MarkdownDescription: fmt.Sprintf("Default server-side encryption: `%s` (default; the key KMS manages for OSS in the "+
					"region, https://www.alibabacloud.com/help/en/oss/user-guide/server-side-encryption-8) or `%s` (keys OSS manages). "+
					"Changed in place; objects already there keep theirs.", bucket.EncryptionKMS, bucket.EncryptionAES256),
				Validators: []validator.String{stringvalidator.OneOf(bucket.EncryptionKMS, bucket.EncryptionAES256)},
			},
			"readers": schema.SetNestedAttribute{
				Required: true,
				MarkdownDescription: "Who reads which bundles: each role may `oss:GetObject` under its `key_prefix` only. A role's " +
					"prefix may not hold another role's. Changed in place (the policy is replaced).",
				Validators: []validator.Set{setvalidator.SizeAtLeast(1)},
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"key_prefix": schema.StringAttribute{Required: true, MarkdownDescription: "A pool's `bootstrap_bundle.key_prefix` " +
						"(default `gpucluster-bundles/<pool name>`): segments of letters, digits and `._-` joined by `/`."},
					"ram_role_name": schema.StringAttribute{Required: true, MarkdownDescription: "The pool's `ram_role_name`."},
				}},
			},
			"writers": schema.SetNestedAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Which objects a role may `oss:PutObject`, each by its exact key: the control-plane pool's " +
					"`bootstrap_bundle.publish_join_token_keys`, where its nodes store fresh join tokens for the pools that read " +
					"them (`join_token_key`, under those pools' reader prefixes); or every key under a prefix, as `<prefix>/*`, " +
					"for the control-plane pool's `bootstrap_bundle.etcd_backup` snapshots. A prefix may not overlap any reader's, " +
					"so a writer can replace no bundle. Changed in place.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"key": schema.StringAttribute{Required: true, MarkdownDescription: "The object key, such as " +
						"`gpucluster-bundles/workers/join-token`, or a prefix's keys, such as `etcd-snapshots/prod/*`."},
					"ram_role_name": schema.StringAttribute{Required: true, MarkdownDescription: "The control-plane pool's `ram_role_name`."},
				}},
			},
			"expirations": schema.SetNestedAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "What OSS deletes after some days, by key prefix: the etcd snapshots of a control-plane pool's " +
					"`bootstrap_bundle.etcd_backup`. An object goes `days` after it was written, and each earlier version (the bucket " +
					"is versioned) `days` after it was replaced. One lifecycle rule per prefix; the bucket's lifecycle is this " +
					"attribute's alone. A prefix may not overlap any reader's. Changed in place.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"key_prefix": schema.StringAttribute{Required: true, MarkdownDescription: "Such as `etcd-snapshots/prod`, without " +
						"a trailing `/`.",
						Validators: []validator.String{stringvalidator.RegexMatches(expiryPrefixPattern,
							"must be segments of letters, digits and ._- joined by /, without a leading or trailing /")}},
					"days": schema.Int64Attribute{Required: true, MarkdownDescription: "Days to keep, 1 or more.",
						Validators: []validator.Int64{int64validator.AtLeast(1)}},
				}},
			},
			"policy": schema.StringAttribute{Computed: true, MarkdownDescription: "The bucket policy document as OSS holds it."},
			"bucket_acl": schema.StringAttribute{Computed: true, MarkdownDescription: "The bucket's ACL, held at `private`: " +
				"changed outside Terraform, it shows in the next plan and the apply restores it."},
			"bucket_versioning": schema.StringAttribute{Computed: true, MarkdownDescription: "The bucket's versioning, held at " +
				"`Enabled` (as `bucket_acl`)."},
			"block_public_access": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether public access to the " +
				"bucket is blocked, held at `true` (as `bucket_acl`)."},
		},
	}
}

func (r *bootstrapBucketResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFromProviderData(req.ProviderData, &resp.Diagnostics)
}

func (r *bootstrapBucketResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var cfg bootstrapBucketModel
	if resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...); resp.Diagnostics.HasError() {
		return
	}
	validateBootstrapBucket(ctx, &cfg, &resp.Diagnostics)
}

// ModifyPlan holds the bucket's settings: a drift the last refresh read shows as a change, which
// Update puts right.
func (r *bootstrapBucketResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan bootstrapBucketModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	plan.holdSettings()
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *bootstrapBucketResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan bootstrapBucketModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	spec := plan.spec(ctx, &resp.Diagnostics)
	st, exists, err := bucket.Create(ctx, r.client, spec)
	// The id goes to the state even when a later step failed: a tainted resource, not a leaked bucket.
	if exists {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), spec.Name)...)
	}
	if err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Creating bootstrap bucket %s", spec.Name), err.Error())
		return
	}
	plan.setState(st, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *bootstrapBucketResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state bootstrapBucketModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	if r.readInto(ctx, state.ID.ValueString(), &state, &resp.Diagnostics) {
		resp.State.RemoveResource(ctx)
		return
	}
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	}
}

// readInto puts what OSS has of the bucket in m; gone: the bucket is not there.
func (r *bootstrapBucketResource) readInto(ctx context.Context, name string, m *bootstrapBucketModel, diags *diag.Diagnostics) (gone bool) {
	st, err := bucket.Read(ctx, r.client, name)
	if cloud.IsNotFound(err) {
		return true
	}
	if err != nil {
		diags.AddError(fmt.Sprintf("Reading bootstrap bucket %s", name), err.Error())
		return false
	}
	m.setState(st, diags)
	return false
}

// Update brings the bucket back to its settings (private, versioned, public access blocked, as
// encryption says), then replaces the policy.
func (r *bootstrapBucketResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan bootstrapBucketModel
	if resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...); resp.Diagnostics.HasError() {
		return
	}
	spec := plan.spec(ctx, &resp.Diagnostics)
	if err := bucket.Update(ctx, r.client, spec, true); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Updating bootstrap bucket %s", spec.Name), err.Error())
		return
	}
	if r.readInto(ctx, spec.Name, &plan, &resp.Diagnostics) {
		resp.Diagnostics.AddError(fmt.Sprintf("Updating bootstrap bucket %s", spec.Name), "The bucket is gone: it was deleted while it was updated.")
	}
	if !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	}
}

func (r *bootstrapBucketResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state bootstrapBucketModel
	if resp.Diagnostics.Append(req.State.Get(ctx, &state)...); resp.Diagnostics.HasError() {
		return
	}
	if err := bucket.Delete(ctx, r.client, state.ID.ValueString()); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Deleting bootstrap bucket %s", state.ID.ValueString()), err.Error())
	}
}

func (r *bootstrapBucketResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
