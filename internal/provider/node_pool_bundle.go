package provider

// bootstrap_bundle of a node pool (issue #31): the node bootstrap travels as an archive in an OSS
// bucket and the user data is the stub that fetches it. The workflow is internal/bundle/upload's;
// this file maps the attribute to it.

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/upload"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/nodepool"
)

// defaultBundlePrefix starts a pool's key prefix when key_prefix is not set: the pool's name
// follows it.
const defaultBundlePrefix = "gpucluster-bundles"

var bundleAttrTypes = map[string]attr.Type{"bucket": types.StringType, "key_prefix": types.StringType,
	"join_token_key": types.StringType, "publish_join_token_keys": types.ListType{ElemType: types.StringType},
	"etcd_backup": types.ObjectType{AttrTypes: etcdBackupAttrTypes}}

var etcdBackupAttrTypes = map[string]attr.Type{"key_prefix": types.StringType, "every": types.StringType}

type bundleModel struct {
	Bucket               types.String `tfsdk:"bucket"`
	KeyPrefix            types.String `tfsdk:"key_prefix"`
	JoinTokenKey         types.String `tfsdk:"join_token_key"`
	PublishJoinTokenKeys types.List   `tfsdk:"publish_join_token_keys"`
	EtcdBackup           types.Object `tfsdk:"etcd_backup"`
}

type etcdBackupModel struct {
	KeyPrefix types.String `tfsdk:"key_prefix"`
	Every     types.String `tfsdk:"every"`
}

func bootstrapBundleSchema() schema.Attribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "Takes the node bootstrap out of the user data: the files it writes (scripts, kubeadm configuration, " +
			"join token, and on the first control-plane node the CA key) are uploaded as one archive to `bucket`, at " +
			"`<key_prefix>/<sha256>.tar.gz`, before any node is asked for, and each node's user data is a stub of at most 4 KiB " +
			"(then `user_data`) that fetches it through the region's internal OSS endpoint with the instance RAM role's temporary " +
			"keys from the metadata service, checks its digest and runs it. Requires `ram_role_name`; the bucket's policy must let " +
			"that role `oss:GetObject` the prefix. The prefix is the pool's own: older bundles under it are deleted once an apply " +
			"succeeds, and all of them when the pool is deleted. Whoever holds the role's keys can read the bundle, pods on the " +
			"node included unless they are kept from `100.100.100.200`: give control-plane and worker pools different roles. " +
			"Setting, changing or removing it rolls the nodes.",
		Attributes: map[string]schema.Attribute{
			"bucket": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "OSS bucket in the provider's region, such as the one `gpucluster_checkpoint_bucket` makes.",
			},
			"key_prefix": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("Key prefix of the pool's bundles, letters, digits and `._-/`, without a leading or "+
					"trailing `/`. Default `%s/<name>`. Give each pool its own.", defaultBundlePrefix),
			},
			"join_token_key": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Joining pools: the object the nodes read their join token from right before `kubeadm join`, " +
					"which the control plane keeps fresh (`publish_join_token_keys`); the bundle then holds no token. Without it a " +
					"node joins with `kubernetes.join_token`, which expires 24 h after the first control-plane node's `kubeadm init`, " +
					"so the pool can only grow within that day. On the first control-plane pool it is the token a node that " +
					"replaces the first one joins the others with. The bucket's policy must let this pool's role read it.",
			},
			"publish_join_token_keys": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Control-plane pools: every node runs a timer that creates a bootstrap token valid for 24 h " +
					"(`kubeadm token create --ttl 24h`) every 8 h and stores it at each of these keys with the pool's RAM role, " +
					"for the pools whose `join_token_key` names them. The bucket's policy must let this pool's role " +
					"`oss:PutObject` them (`gpucluster_bootstrap_bucket` `writers`).",
			},
			"etcd_backup": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Control-plane pools: every node runs a timer that saves a snapshot of its etcd member " +
					"(`etcdctl snapshot save` in the etcd container) and stores it in `bucket` at " +
					"`<key_prefix>/<UTC time>-<host name>.db` with the pool's RAM role, asking for KMS encryption. The bucket's " +
					"policy must let this pool's role `oss:PutObject` under `key_prefix` (`gpucluster_bootstrap_bucket` `writers`, " +
					"key `<key_prefix>/*`); its `expirations` keep the snapshots for a number of days. The guide \"etcd backup and " +
					"restore\" has the restore.",
				Attributes: map[string]schema.Attribute{
					"key_prefix": schema.StringAttribute{Required: true, MarkdownDescription: "Where the snapshots go, such as " +
						"`etcd-snapshots/<cluster>`: letters, digits and `._-/`, without a leading or trailing `/`. Outside every " +
						"pool's bundle prefix, so no reader of bundles reads the snapshots."},
					"every": schema.StringAttribute{Optional: true, MarkdownDescription: fmt.Sprintf("How often, in whole minutes "+
						"or hours (`90min`, `6h`). Default `%s`.", bootstrap.DefaultEtcdSnapshotEvery)},
				},
			},
		},
	}
}

// bundleLocation is where the plan puts the pool's bundles, nil without bootstrap_bundle or while
// something it needs is unknown. region is the provider's.
func bundleLocation(ctx context.Context, m *nodePoolModel, region string) (*upload.Location, diag.Diagnostics) {
	var diags diag.Diagnostics
	if m.BootstrapBundle.IsNull() || m.BootstrapBundle.IsUnknown() {
		return nil, diags
	}
	var b bundleModel
	if diags.Append(m.BootstrapBundle.As(ctx, &b, basetypes.ObjectAsOptions{})...); diags.HasError() {
		return nil, diags
	}
	if b.Bucket.IsUnknown() || b.KeyPrefix.IsUnknown() || b.JoinTokenKey.IsUnknown() || b.PublishJoinTokenKeys.IsUnknown() || b.EtcdBackup.IsUnknown() ||
		m.Name.IsUnknown() || m.RAMRoleName.IsUnknown() {
		return nil, diags
	}
	prefix := b.KeyPrefix.ValueString()
	if b.KeyPrefix.IsNull() {
		prefix = defaultBundlePrefix + "/" + m.Name.ValueString()
	}
	return &upload.Location{Region: region, Bucket: b.Bucket.ValueString(), Prefix: prefix, RoleName: m.RAMRoleName.ValueString()}, diags
}

// joinStoreOf is the bootstrap's join store of a pool with bootstrap_bundle: nil unless it reads
// or publishes join tokens.
func joinStoreOf(ctx context.Context, m *nodePoolModel, loc *upload.Location) (*bootstrap.JoinStore, diag.Diagnostics) {
	var b bundleModel
	var diags diag.Diagnostics
	if loc == nil {
		return nil, diags
	}
	if diags.Append(m.BootstrapBundle.As(ctx, &b, basetypes.ObjectAsOptions{})...); diags.HasError() {
		return nil, diags
	}
	var publish []string
	if diags.Append(b.PublishJoinTokenKeys.ElementsAs(ctx, &publish, false)...); diags.HasError() {
		return nil, diags
	}
	if b.JoinTokenKey.ValueString() == "" && len(publish) == 0 {
		return nil, diags
	}
	return &bootstrap.JoinStore{ObjectStore: objectStoreOf(loc), TokenKey: b.JoinTokenKey.ValueString(), PublishKeys: publish}, diags
}

// objectStoreOf is where a pool's nodes read and write objects beside their bundle: its bucket,
// with its role.
func objectStoreOf(loc *upload.Location) bootstrap.ObjectStore {
	md, oss := bundle.Endpoints(loc.Region, loc.Bucket)
	return bootstrap.ObjectStore{Region: loc.Region, Bucket: loc.Bucket, RoleName: loc.RoleName, MetadataEndpoint: md, OSSEndpoint: oss}
}

// etcdBackupOf is the bootstrap's etcd backup of a pool with bootstrap_bundle.etcd_backup: nil
// without one.
func etcdBackupOf(ctx context.Context, m *nodePoolModel, loc *upload.Location) (*bootstrap.EtcdBackup, diag.Diagnostics) {
	var b bundleModel
	var diags diag.Diagnostics
	if loc == nil {
		return nil, diags
	}
	if diags.Append(m.BootstrapBundle.As(ctx, &b, basetypes.ObjectAsOptions{})...); diags.HasError() || b.EtcdBackup.IsNull() || b.EtcdBackup.IsUnknown() {
		return nil, diags
	}
	var e etcdBackupModel
	if diags.Append(b.EtcdBackup.As(ctx, &e, basetypes.ObjectAsOptions{})...); diags.HasError() || e.KeyPrefix.IsUnknown() || e.Every.IsUnknown() {
		return nil, diags
	}
	return &bootstrap.EtcdBackup{ObjectStore: objectStoreOf(loc), KeyPrefix: e.KeyPrefix.ValueString(), Every: e.Every.ValueString()}, diags
}

// validateBundle refuses, at plan time, a bootstrap_bundle the nodes could not fetch: no RAM role
// to fetch it with, no bootstrap to put in it, or a bucket or prefix the stub cannot name.
func validateBundle(ctx context.Context, cfg *nodePoolModel, diags *diag.Diagnostics) {
	loc, d := bundleLocation(ctx, cfg, "cn-hangzhou") // the region is checked by the provider's configuration
	diags.Append(d...)
	if loc == nil {
		return
	}
	at := path.Root("bootstrap_bundle")
	if cfg.RAMRoleName.IsNull() {
		diags.AddAttributeError(at, "bootstrap_bundle needs ram_role_name",
			fmt.Sprintf("bootstrap_bundle puts the node bootstrap in bucket %q, and each node fetches it with its instance RAM role's "+
				"temporary keys from the metadata service; ram_role_name is not set, so the nodes would have no keys and would never "+
				"boot.\nFix: set ram_role_name to a role the bucket's policy lets oss:GetObject %s/*, or remove bootstrap_bundle.",
				loc.Bucket, loc.Prefix))
		return
	}
	if cfg.Bootstrap.Equal(types.BoolValue(false)) {
		diags.AddAttributeError(at, "bootstrap_bundle needs the node bootstrap",
			"bootstrap = false: the provider renders no node bootstrap, so there is nothing to put in the bundle.\n"+
				"Fix: remove bootstrap_bundle, or bootstrap = false.")
		return
	}
	if strings.HasPrefix(loc.Prefix, "/") || strings.HasSuffix(loc.Prefix, "/") {
		diags.AddAttributeError(at.AtName("key_prefix"), "Invalid bootstrap_bundle.key_prefix",
			fmt.Sprintf("key_prefix %q starts or ends with \"/\": the key would have an empty segment.\nFix: remove the leading and trailing \"/\".", loc.Prefix))
		return
	}
	// The stub checks every field it names: a placeholder digest is enough to check the rest.
	_, err := bundle.Stub(bundle.StubSpec{Region: loc.Region, Bucket: loc.Bucket, Key: upload.KeyFor(loc.Prefix, bundle.DigestPrefix+strings.Repeat("0", 64)),
		Digest: bundle.DigestPrefix + strings.Repeat("0", 64), RoleName: loc.RoleName})
	if err != nil {
		diags.AddAttributeError(at, "Invalid bootstrap_bundle",
			fmt.Sprintf("bucket %q, key prefix %q: %v.\nFix: a bucket name of lowercase letters, digits and '-' (3 to 63), and a key prefix "+
				"of letters, digits and '._-/' without empty, . or .. segments.", loc.Bucket, loc.Prefix, err))
	}
}

// bundleHashInput is what bootstrap_bundle adds to a pool's spec hash ("" when unset, so pools
// without it keep theirs): moving the bootstrap into a bundle, or the bundle elsewhere, changes
// every node's user data and rolls the pool.
func bundleHashInput(loc *upload.Location) string {
	if loc == nil {
		return ""
	}
	return "bootstrap_bundle=" + loc.Bucket + "/" + loc.Prefix
}

// bundleKeyValue is bootstrap_bundle_key for the spec: the key of its bundle, null without one.
func bundleKeyValue(spec nodepool.Spec) types.String {
	if spec.Bundle == nil {
		return types.StringNull()
	}
	return types.StringValue(spec.Bundle.Key)
}

// uploadBundle puts the spec's bundle in its bucket, before any node is asked for (at apply,
// from resolveSpec). A failure is an error on bootstrap_bundle.
func (r *nodePoolResource) uploadBundle(ctx context.Context, spec nodepool.Spec, diags *diag.Diagnostics) {
	if spec.Bundle == nil || diags.HasError() {
		return
	}
	if err := upload.Upload(ctx, r.client, *spec.Bundle); err != nil {
		diags.AddAttributeError(path.Root("bootstrap_bundle"), "Uploading the node bootstrap bundle",
			err.Error()+"\nFix: check that the bucket exists in the provider's region and that the provider's credentials may oss:PutObject there.")
	}
}

// pruneBundles deletes, after a successful apply, the bundles no node of the pool names: those
// under the pool's prefix but the current one, and those under the prefix the pool used before
// (old) when it moved or dropped bootstrap_bundle, each kept while a node's user data (nodes,
// read with DescribeUserData) still names it. A node that was not replaced by a change (one the
// spec hash leaves out, such as labels) keeps the stub of its older bundle: a re-initialised
// system disk would fetch it again. A failure leaves them and warns.
func (r *nodePoolResource) pruneBundles(ctx context.Context, spec nodepool.Spec, old *upload.Location, nodes []string, diags *diag.Diagnostics) {
	if diags.HasError() {
		return
	}
	inUse := func(ctx context.Context) ([]string, error) {
		out := make([]string, 0, len(nodes))
		for _, id := range nodes {
			ud, err := r.client.UserData(ctx, id)
			if err != nil && !cloud.IsNotFound(err) {
				return nil, err
			}
			out = append(out, ud)
		}
		return out, nil
	}
	var errs []string
	if b := spec.Bundle; b != nil {
		if err := upload.Prune(ctx, r.client, b.Bucket, b.Prefix, b.Key, inUse); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if old != nil && (spec.Bundle == nil || old.Bucket != spec.Bundle.Bucket || old.Prefix != spec.Bundle.Prefix) {
		if err := upload.Prune(ctx, r.client, old.Bucket, old.Prefix, "", inUse); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		diags.AddAttributeWarning(path.Root("bootstrap_bundle"), "Older node bootstrap bundles were left in the bucket",
			strings.Join(errs, "\n")+"\nThey hold the bootstrap's secrets: delete them by hand, or apply again.")
	}
}

// deleteBundles deletes every bundle under the pool's prefix (the pool's Delete).
func (r *nodePoolResource) deleteBundles(ctx context.Context, state *nodePoolModel, diags *diag.Diagnostics) {
	loc, d := bundleLocation(ctx, state, r.region())
	diags.Append(d...)
	if loc == nil {
		return
	}
	if err := upload.Prune(ctx, r.client, loc.Bucket, loc.Prefix, "", nil); err != nil {
		diags.AddError(fmt.Sprintf("deleting the node bootstrap bundles of node pool (%s)", state.ID.ValueString()), err.Error())
	}
}
