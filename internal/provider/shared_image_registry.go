package provider

// The image_registry attribute of gpucluster_kubernetes_manifests, gpucluster_node_bootstrap and
// the node pool's kubernetes block: one registry for every image the cluster runs
// (internal/images registry.go has the rule and the regional defaults).

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/images"
)

// imageRegistryDoc describes image_registry wherever it is declared.
const imageRegistryDoc = "Registry every container image of the cluster is pulled from, as `host[:port]/path` such as " +
	"`registry-vpc.cn-wulanchabu.aliyuncs.com/gpucluster` (a Container Registry namespace through its VPC endpoint) or " +
	"`<instance>-registry-vpc.cn-wulanchabu.cr.aliyuncs.com/<namespace>`: kubeadm's `imageRepository` (control-plane images), " +
	"containerd's pause image and registry mirrors (`/etc/containerd/certs.d/<host>/hosts.toml`), the CNI, every add-on and the " +
	"validation and MPI jobs. Each image `<upstream>/<path>/<name>:<tag>@<digest>` is taken as `<image_registry>/<name>:<tag>@<digest>`; " +
	"the `pinned_images` of `gpucluster_kubernetes_manifests` lists them for your sync. Unset: in mainland China regions (`cn-*` but " +
	"`cn-hongkong`, whose networks do not reach the public registries) `registry-vpc.<region>.aliyuncs.com/" + images.DefaultNamespace +
	"`, which you create and fill (a plan-time warning says how; see the guide \"Container images in mainland China\"); elsewhere the " +
	"upstream registries. `\"\"` is the upstream registries in any region. Give the node pools and the manifests the same value."

// resolveImageRegistry is the registry a configuration asks for in region: its value, or the
// region's default when unset (null). warn is the sync note when the default is a registry the
// user has to create.
func resolveImageRegistry(v types.String, region string) (registry string, warn string) {
	if !v.IsNull() && !v.IsUnknown() {
		return v.ValueString(), ""
	}
	registry = images.DefaultRegistry(region)
	if registry != "" {
		warn = images.SyncNote(region)
	}
	return registry, warn
}

// addImageRegistryWarning adds the sync note of a defaulted mainland registry on the attribute.
func addImageRegistryWarning(diags *diag.Diagnostics, at path.Path, warn string) {
	if warn != "" {
		diags.AddAttributeWarning(at, "Container images come from a registry you must create", warn)
	}
}

// regionOf is the provider's region from a data source's provider data ("" before the provider is
// configured, which only validation sees).
func regionOf(data any, diags *diag.Diagnostics) string {
	if c := clientFromProviderData(data, diags); c != nil {
		return c.Region()
	}
	return ""
}

var pinnedImageAttrTypes = map[string]attr.Type{
	"name": types.StringType, "upstream": types.StringType, "tag": types.StringType, "digest": types.StringType,
	"digest_source": types.StringType, "reference": types.StringType,
}

// pinnedImagesAttribute is the data source attribute that lists every image for a registry sync.
func pinnedImagesAttribute() schema.Attribute {
	str := func(desc string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: desc}
	}
	return schema.ListNestedAttribute{
		Computed: true,
		MarkdownDescription: "Every image the cluster runs (the add-ons, the CNI, containerd's pause image, the validation and MPI images; " +
			"kubeadm's control-plane images are listed by `kubeadm config images list`), with the reference the cluster pulls in " +
			"`image_registry`: what to copy into the registry, and where.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"name":          str("Image name in the project's table."),
			"upstream":      str("Where the image is published, `registry/repository`: copy from `<upstream>:<tag>`."),
			"tag":           str("Pinned tag."),
			"digest":        str("Digest of the tag's multi-arch index (`sha256:...`); empty where no public source documents one yet."),
			"digest_source": str("Where the digest is published."),
			"reference":     str("The reference the cluster pulls: `<image_registry>/<name>:<tag>@<digest>`, or the upstream one without a registry."),
		}},
	}
}

// pinnedImagesValue is pinnedImagesAttribute's value for registry.
func pinnedImagesValue(registry string) (types.List, diag.Diagnostics) {
	var out []attr.Value
	var diags diag.Diagnostics
	for _, i := range images.All() {
		v, d := types.ObjectValue(pinnedImageAttrTypes, map[string]attr.Value{
			"name": types.StringValue(i.Name), "upstream": types.StringValue(i.Upstream()), "tag": types.StringValue(i.Tag),
			"digest": types.StringValue(i.Digest), "digest_source": types.StringValue(i.DigestSource), "reference": types.StringValue(i.MirrorName(registry)),
		})
		diags.Append(d...)
		out = append(out, v)
	}
	l, d := types.ListValue(types.ObjectType{AttrTypes: pinnedImageAttrTypes}, out)
	diags.Append(d...)
	return l, diags
}
