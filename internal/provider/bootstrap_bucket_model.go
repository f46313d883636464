package provider

// gpucluster_bootstrap_bucket's model and its mapping to internal/bundle/bucket.

import (
	"context"
	"fmt"
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bundle/bucket"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/storage"
)

type bootstrapBucketModel struct {
	ID         types.String `tfsdk:"id"`
	Name       types.String `tfsdk:"name"`
	Encryption types.String `tfsdk:"encryption"`
	Readers    types.Set    `tfsdk:"readers"`
	Writers    types.Set    `tfsdk:"writers"`
	Expiries   types.Set    `tfsdk:"expirations"`
	Policy     types.String `tfsdk:"policy"`
	// The settings the bucket is held to; changed outside Terraform, they show in the plan.
	BucketACL         types.String `tfsdk:"bucket_acl"`
	BucketVersioning  types.String `tfsdk:"bucket_versioning"`
	BlockPublicAccess types.Bool   `tfsdk:"block_public_access"`
}

// holdSettings puts in a plan the settings every bootstrap bucket is held to (the storage tier's
// cold bucket's: private, versioned, public access blocked).
func (m *bootstrapBucketModel) holdSettings() {
	m.BucketACL = types.StringValue(storage.BucketACL)
	m.BucketVersioning = types.StringValue(storage.BucketVersioning)
	m.BlockPublicAccess = types.BoolValue(true)
}

var bucketReaderAttrTypes = map[string]attr.Type{"key_prefix": types.StringType, "ram_role_name": types.StringType}

type bucketReaderModel struct {
	KeyPrefix   types.String `tfsdk:"key_prefix"`
	RAMRoleName types.String `tfsdk:"ram_role_name"`
}

// readers is the model's readers; ok is false while any of them is unknown.
func (m *bootstrapBucketModel) readers(ctx context.Context, diags *diag.Diagnostics) (out []bucket.Reader, ok bool) {
	if m.Readers.IsNull() || m.Readers.IsUnknown() {
		return nil, false
	}
	var rs []bucketReaderModel
	if diags.Append(m.Readers.ElementsAs(ctx, &rs, false)...); diags.HasError() {
		return nil, false
	}
	for _, r := range rs {
		if r.KeyPrefix.IsUnknown() || r.RAMRoleName.IsUnknown() {
			return nil, false
		}
		out = append(out, bucket.Reader{KeyPrefix: r.KeyPrefix.ValueString(), RoleName: r.RAMRoleName.ValueString()})
	}
	return out, true
}

var bucketWriterAttrTypes = map[string]attr.Type{"key": types.StringType, "ram_role_name": types.StringType}

type bucketWriterModel struct {
	Key         types.String `tfsdk:"key"`
	RAMRoleName types.String `tfsdk:"ram_role_name"`
}

// writers is the model's writers (none when null or unknown).
func (m *bootstrapBucketModel) writers(ctx context.Context, diags *diag.Diagnostics) []bucket.Writer {
	var ws []bucketWriterModel
	if m.Writers.IsNull() || m.Writers.IsUnknown() {
		return nil
	}
	if diags.Append(m.Writers.ElementsAs(ctx, &ws, false)...); diags.HasError() {
		return nil
	}
	out := make([]bucket.Writer, 0, len(ws))
	for _, w := range ws {
		out = append(out, bucket.Writer{Key: w.Key.ValueString(), RoleName: w.RAMRoleName.ValueString()})
	}
	return out
}

// expiryPrefixPattern is an expiration's key_prefix: segments of letters, digits and ._- joined
// by '/', without a leading or trailing one (the rule's prefix is it with '/' after it).
var expiryPrefixPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$`)

var bucketExpiryAttrTypes = map[string]attr.Type{"key_prefix": types.StringType, "days": types.Int64Type}

type bucketExpiryModel struct {
	KeyPrefix types.String `tfsdk:"key_prefix"`
	Days      types.Int64  `tfsdk:"days"`
}

// expiries is the model's expirations (none when null or unknown).
func (m *bootstrapBucketModel) expiries(ctx context.Context, diags *diag.Diagnostics) []bucket.Expiry {
	var es []bucketExpiryModel
	if m.Expiries.IsNull() || m.Expiries.IsUnknown() {
		return nil
	}
	if diags.Append(m.Expiries.ElementsAs(ctx, &es, false)...); diags.HasError() {
		return nil
	}
	out := make([]bucket.Expiry, 0, len(es))
	for _, e := range es {
		out = append(out, bucket.Expiry{KeyPrefix: e.KeyPrefix.ValueString(), Days: int(e.Days.ValueInt64())})
	}
	return out
}

func (m *bootstrapBucketModel) spec(ctx context.Context, diags *diag.Diagnostics) bucket.Spec {
	readers, _ := m.readers(ctx, diags)
	return bucket.Spec{Name: m.Name.ValueString(), Encryption: m.Encryption.ValueString(), Readers: readers, Writers: m.writers(ctx, diags),
		Expiries: m.expiries(ctx, diags)}
}

// setState takes what OSS has: the encryption, the policy and the readers it grants.
func (m *bootstrapBucketModel) setState(st bucket.State, diags *diag.Diagnostics) {
	m.ID = types.StringValue(st.Settings.Name)
	m.Name = types.StringValue(st.Settings.Name)
	m.Encryption = types.StringValue(st.Settings.SSEAlgorithm)
	m.Policy = types.StringValue(st.Policy)
	m.BucketACL = types.StringValue(st.Settings.ACL)
	m.BucketVersioning = types.StringValue(st.Settings.Versioning)
	m.BlockPublicAccess = types.BoolValue(st.Settings.BlockPublicAccess)
	elems := make([]attr.Value, 0, len(st.Readers))
	for _, r := range st.Readers {
		elems = append(elems, types.ObjectValueMust(bucketReaderAttrTypes, map[string]attr.Value{
			"key_prefix": types.StringValue(r.KeyPrefix), "ram_role_name": types.StringValue(r.RoleName)}))
	}
	set, d := types.SetValue(types.ObjectType{AttrTypes: bucketReaderAttrTypes}, elems)
	diags.Append(d...)
	m.Readers = set
	elems = make([]attr.Value, 0, len(st.Writers))
	for _, w := range st.Writers {
		elems = append(elems, types.ObjectValueMust(bucketWriterAttrTypes, map[string]attr.Value{
			"key": types.StringValue(w.Key), "ram_role_name": types.StringValue(w.RoleName)}))
	}
	set, d = types.SetValue(types.ObjectType{AttrTypes: bucketWriterAttrTypes}, elems)
	diags.Append(d...)
	m.Writers = set
	elems = make([]attr.Value, 0, len(st.Expiries))
	for _, e := range st.Expiries {
		elems = append(elems, types.ObjectValueMust(bucketExpiryAttrTypes, map[string]attr.Value{
			"key_prefix": types.StringValue(e.KeyPrefix), "days": types.Int64Value(int64(e.Days))}))
	}
	set, d = types.SetValue(types.ObjectType{AttrTypes: bucketExpiryAttrTypes}, elems)
	diags.Append(d...)
	m.Expiries = set
}

// validateBootstrapBucket refuses, at plan time, readers the policy could not express or that
// would let one role read another's bundles.
func validateBootstrapBucket(ctx context.Context, m *bootstrapBucketModel, diags *diag.Diagnostics) {
	readers, ok := m.readers(ctx, diags)
	if !ok {
		return
	}
	at := path.Root("readers")
	for _, r := range readers {
		if msg := bucket.CheckReader(r); msg != "" {
			diags.AddAttributeError(at, "Invalid bootstrap bucket reader",
				fmt.Sprintf("Reader {key_prefix = %q, ram_role_name = %q}: %s; the bucket policy names the role's sessions and "+
					"the objects under the prefix.\nFix: a prefix such as \"gpucluster-bundles/<pool name>\" and the name of an "+
					"existing RAM role.", r.KeyPrefix, r.RoleName, msg))
		}
	}
	if msg := bucket.CheckWriters(readers, m.writers(ctx, diags)); msg != "" {
		diags.AddAttributeError(path.Root("writers"), "Bootstrap bucket writer overlaps the bundles",
			msg+": the role could replace bundles, which nodes run as root.\nFix: put the writer's prefix outside every reader's "+
				"key_prefix, such as \"etcd-snapshots/<cluster>/*\".")
	}
	for _, e := range m.expiries(ctx, diags) {
		if r, ok := bucket.OverlappingReader(readers, e.KeyPrefix); ok {
			diags.AddAttributeError(path.Root("expirations"), "Bootstrap bucket expiration overlaps the bundles",
				fmt.Sprintf("Expiration of key_prefix %q after %d days overlaps reader prefix %q: OSS would delete bundles that nodes still "+
					"boot from.\nFix: expire only prefixes outside every reader's, such as the etcd snapshots' \"etcd-snapshots/<cluster>\".",
					e.KeyPrefix, e.Days, r.KeyPrefix))
		}
	}
	for _, o := range bucket.Overlaps(readers) {
		diags.AddAttributeError(at, "Bootstrap bucket readers overlap",
			fmt.Sprintf("Role %q reads key_prefix %q, which holds key_prefix %q of role %q: %q could read the other role's "+
				"bundles (a control-plane bundle holds the cluster CA key).\nFix: give each role prefixes of its own that do not "+
				"contain one another, such as \"gpucluster-bundles/control-plane\" and \"gpucluster-bundles/workers\".",
				o.Outer.RoleName, o.Outer.KeyPrefix, o.Inner.KeyPrefix, o.Inner.RoleName, o.Outer.RoleName))
	}
}
