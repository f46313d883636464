package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/bootstrap"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/netplan"
)

var _ datasource.DataSourceWithConfigure = (*nodeBootstrapDataSource)(nil)

func newNodeBootstrapDataSource() datasource.DataSource { return &nodeBootstrapDataSource{} }

// nodeBootstrapDataSource renders the cloud-init document of a cluster node (internal/bootstrap).
// Offline: no API call; the provider's region only picks the defaults of package_mirror and
// kubernetes.image_registry.
type nodeBootstrapDataSource struct{ region string }

func (d *nodeBootstrapDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.region = regionOf(req.ProviderData, &resp.Diagnostics)
}

func (d *nodeBootstrapDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node_bootstrap"
}

func (d *nodeBootstrapDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := joinAttributes(nodeBootstrapSoftwareAttributes(), nodeBootstrapKubernetesAttributes(), nodeBootstrapNodeAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "Renders the `#cloud-config` document that turns an Ubuntu 22.04 ECS instance into a node of the " +
			"cluster. `control_plane` installs containerd and Kubernetes and runs `kubeadm init` with the bootstrap token you pass; " +
			"`gpu_worker` installs the NVIDIA driver (Ubuntu's `nvidia-headless-<branch>-server` packages, exact version; with " +
			"`nvswitch`, Fabric Manager at the same version), the NVIDIA container toolkit as containerd's default runtime, the " +
			"eRDMA driver when asked, the CUDA toolkit and NCCL on the host only with `host_cuda`, writes the NCCL environment to `/etc/nccl.conf` and `/etc/profile.d`, mounts the storage tiers and runs " +
			"`kubeadm join` with the node's labels and taints. The node runs these as phases of a systemd unit that retries them " +
			"and resumes after a reboot, and reports its progress in `/var/lib/gpucluster/bootstrap-status` and on the serial " +
			"console (guide \"How the nodes form one cluster\"). The join token is written only to a root-only kubeadm file, never " +
			"to a command line or the log. `gpucluster_node_pool` renders the same document by default and merges it before " +
			"your own `user_data`. Offline: no API call.",
		Attributes: attrs,
	}
}

// nodeBootstrapSoftwareAttributes: the node's role and software versions.
func nodeBootstrapSoftwareAttributes() map[string]schema.Attribute {
	def := bootstrap.DefaultVersions()
	version := func(desc, dflt string) schema.Attribute {
		return schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: desc + " Default `" + dflt + "`."}
	}
	return map[string]schema.Attribute{
		"role": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Node role. One of " + mdValues(bootstrap.Roles()) + ".",
			Validators:          []validator.String{stringvalidator.OneOf(bootstrap.Roles()...)},
		},
		"versions": schema.SingleNestedAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "Software versions; unset fields take defaults that meet the supported minimums (driver >= `" + bootstrap.MinDriver +
				"`, CUDA `" + bootstrap.TargetCUDA + "`, NCCL >= `" + bootstrap.MinNCCL + "`, Kubernetes >= `" + bootstrap.MinKubernetes + "`). " +
				"Older versions are errors; a driver that runs the CUDA version only through minor version compatibility is a warning.",
			Attributes: map[string]schema.Attribute{
				"driver":     version("NVIDIA data-centre driver, `MAJOR.MINOR.PATCH`: installed from Ubuntu's archive (`nvidia-headless-MAJOR-server` at exactly this version), so it must be a version the archive carries.", def.Driver),
				"cuda":       version("CUDA `MAJOR.MINOR` the workloads are built for, checked against the driver; installed on the host (apt package `cuda-toolkit-MAJOR-MINOR`) only with `host_cuda`.", def.CUDA),
				"nccl":       version("NCCL `MAJOR.MINOR.PATCH`; with `host_cuda` installed on the host as `libnccl2=VERSION-1+cudaCUDA`, so the pair must exist in NVIDIA's repository.", def.NCCL),
				"kubernetes": version("Kubernetes `1.MINOR` (the provider's pinned release of that minor, such as 1.33.6 for 1.33) or `1.MINOR.PATCH`; kubeadm gets that exact release.", def.Kubernetes),
			},
		},
	}
}

// nodeBootstrapKubernetesAttributes: how the node joins Kubernetes (the kubernetes block).
func nodeBootstrapKubernetesAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"kubernetes": schema.SingleNestedAttribute{
			Required:            true,
			MarkdownDescription: "How the node creates or joins the cluster.",
			Attributes: map[string]schema.Attribute{
				"api_endpoint": schema.StringAttribute{
					Optional: true,
					MarkdownDescription: "API server `host:port`. Required for `gpu_worker`; for `control_plane` it becomes kubeadm's " +
						"`controlPlaneEndpoint` (a load balancer or DNS name in front of the control plane).",
				},
				"api_server_name": schema.StringAttribute{
					Optional: true,
					MarkdownDescription: "DNS name the API is reached by when `api_endpoint` is a control plane's internal load balancer " +
						"(`gpucluster_control_plane_endpoint.<name>.api_server_name`): `controlPlaneEndpoint` and the joins use it, and the node " +
						"maps it in `/etc/hosts` to `api_endpoint`'s address (a control-plane node: to itself once it serves the API, since the " +
						"load balancer does not answer its own backend servers). `api_endpoint` must then be `IPv4:port`.",
				},
				"join_token": schema.StringAttribute{
					Required: true, Sensitive: true,
					MarkdownDescription: "kubeadm bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`. The control plane creates it with a time to live of " +
						"24 h (kubeadm's default); workers use it to join, so they join within that day. Rotate it by changing it here.",
				},
				"ca_cert_hash": schema.StringAttribute{
					Optional: true,
					MarkdownDescription: "`sha256:<hex>` of the cluster CA (`gpucluster_cluster_ca.<name>.ca_cert_hash`), pinned by workers. " +
						"Required for `gpu_worker` unless `insecure_skip_ca_verification = true`.",
				},
				"insecure_skip_ca_verification": schema.BoolAttribute{
					Optional: true,
					MarkdownDescription: "Let a `gpu_worker` join without pinning the cluster CA (kubeadm's `unsafeSkipCAVerification`) when " +
						"`ca_cert_hash` is empty: a machine that impersonates the API endpoint could take it over. Default false; a warning says when it is on.",
				},
				"pod_subnet": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "Pod network CIDR for `kubeadm init` (control plane only), as your CNI expects, such as `10.244.0.0/16`.",
				},
				"image_registry": schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: imageRegistryDoc},
				"labels": schema.MapAttribute{
					Optional: true, ElementType: types.StringType,
					MarkdownDescription: "Node labels, set by the kubelet at registration, added to `" + bootstrap.NodeRoleLabel + "=<role>` (and on `gpu_worker` `" + bootstrap.GPUPresentLabel + "=true`). " +
						"Keys under `kubernetes.io` and `k8s.io` are refused (the NodeRestriction admission plugin forbids them) except `node.kubernetes.io/` and the well-known topology keys.",
				},
				"taints": schema.ListNestedAttribute{
					Optional: true,
					MarkdownDescription: "Node taints. GPU workers always get `" + bootstrap.GPUTaint().String() +
						"` unless a taint here uses that key; the control plane keeps kubeadm's control-plane taint.",
					NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
						"key":   schema.StringAttribute{Required: true, MarkdownDescription: "Taint key."},
						"value": schema.StringAttribute{Optional: true, MarkdownDescription: "Taint value."},
						"effect": schema.StringAttribute{
							Required: true, MarkdownDescription: "One of " + mdValues(bootstrap.TaintEffects()) + ".",
							Validators: []validator.String{stringvalidator.OneOf(bootstrap.TaintEffects()...)},
						},
					}},
				},
			},
		},
	}
}

// nodeBootstrapNodeAttributes: the node's mounts, network settings, package mirror, and the rendered cloud-init.
func nodeBootstrapNodeAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"mounts": schema.ListAttribute{
			Optional: true, ElementType: types.StringType,
			MarkdownDescription: "`/etc/fstab` lines from the storage tiers (`spec mountpoint type options [dump pass]`). Each is added " +
				"once, its mount point created, then `mount -a`; `nfs-common` is installed when a line is NFS.",
		},
		"erdma": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Install the eRDMA driver (Alibaba Cloud's `env_setup.sh --egs`) for instances with HighPerformance " +
				"ENIs, and use the eRDMA NCCL environment. Default `false`.",
		},
		"package_mirror": schema.StringAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: packageMirrorDoc + " Unset, the provider's region's default.",
			Validators:          []validator.String{stringvalidator.OneOf(bootstrap.PackageMirrors()...)},
		},
		"nvswitch": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "The instance type's GPUs are connected by NVSwitches (`nvswitch` of `gpucluster_instance_types`): the " +
				"bootstrap installs NVIDIA Fabric Manager at exactly the driver's version and starts it before kubelet. " +
				"`gpu_worker` only. Default `false`.",
		},
		"host_cuda": schema.BoolAttribute{
			Optional: true,
			MarkdownDescription: "Also install the CUDA toolkit (`versions.cuda`) and NCCL (`versions.nccl`) on the host, from NVIDIA's " +
				"repository (developer.download.nvidia.com, several GB, from the internet). Default `false`: containers bring " +
				"their own CUDA and NCCL and need only the driver from the host. `gpu_worker` only.",
		},
		"internet_sources": schema.ListAttribute{
			Computed: true, ElementType: types.StringType,
			MarkdownDescription: "What this bootstrap still downloads from the internet, so its nodes need a route out " +
				"(a network `egress` of `nat` or `existing`). With `package_mirror = \"alibaba_vpc\"` only the container images, " +
				"and nothing when `kubernetes.image_registry` is a registry's VPC endpoint too (the defaults in mainland China): " +
				"then a network with `egress.mode = \"none\"` serves.",
		},
		"nccl_env": schema.MapAttribute{
			Optional: true, Computed: true, ElementType: types.StringType,
			MarkdownDescription: "NCCL environment for GPU workers: the network's defaults for the `erdma` setting (" +
				mdValues(netplan.NCCLNames()) + ") overridden by what you set. Unset, it reads back as those defaults (empty for `control_plane`).",
		},
		"bootstrap_script": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "The bootstrap script the document writes (gzip-compressed there, to stay under the 32 KB " +
				"user data limit), for review: the phases the node runs, in order. It holds no secret: the join token is " +
				"only in the kubeadm configuration.",
		},
		"cloud_init": schema.StringAttribute{
			Computed: true, Sensitive: true,
			MarkdownDescription: "The `#cloud-config` document. Sensitive: it carries the join token.",
		},
	}
}

type nodeBootstrapModel struct {
	Role            types.String         `tfsdk:"role"`
	Versions        *bootstrapVersions   `tfsdk:"versions"`
	Kubernetes      *bootstrapKubernetes `tfsdk:"kubernetes"`
	Mounts          []string             `tfsdk:"mounts"`
	ERDMA           types.Bool           `tfsdk:"erdma"`
	PackageMirror   types.String         `tfsdk:"package_mirror"`
	NVSwitch        types.Bool           `tfsdk:"nvswitch"`
	HostCUDA        types.Bool           `tfsdk:"host_cuda"`
	InternetSources types.List           `tfsdk:"internet_sources"`
	NCCLEnv         types.Map            `tfsdk:"nccl_env"`
	BootstrapScript types.String         `tfsdk:"bootstrap_script"`
	CloudInit       types.String         `tfsdk:"cloud_init"`
}

type bootstrapVersions struct {
	Driver     types.String `tfsdk:"driver"`
	CUDA       types.String `tfsdk:"cuda"`
	NCCL       types.String `tfsdk:"nccl"`
	Kubernetes types.String `tfsdk:"kubernetes"`
}

type bootstrapKubernetes struct {
	APIEndpoint types.String      `tfsdk:"api_endpoint"`
	APIName     types.String      `tfsdk:"api_server_name"`
	JoinToken   types.String      `tfsdk:"join_token"`
	CACertHash  types.String      `tfsdk:"ca_cert_hash"`
	Insecure    types.Bool        `tfsdk:"insecure_skip_ca_verification"`
	PodSubnet   types.String      `tfsdk:"pod_subnet"`
	Registry    types.String      `tfsdk:"image_registry"`
	Labels      map[string]string `tfsdk:"labels"`
	Taints      []bootstrapTaint  `tfsdk:"taints"`
}

type bootstrapTaint struct {
	Key    types.String `tfsdk:"key"`
	Value  types.String `tfsdk:"value"`
	Effect types.String `tfsdk:"effect"`
}

func (d *nodeBootstrapDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m nodeBootstrapModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	role := m.Role.ValueString()
	summary := "Rendering node bootstrap for role " + role
	opts := bootstrap.Options{Role: role, Mounts: m.Mounts, ERDMA: m.ERDMA.ValueBool(), PackageMirror: m.PackageMirror.ValueString(),
		NVSwitch: m.NVSwitch.ValueBool(), HostCUDA: m.HostCUDA.ValueBool()}
	opts.Region = d.region
	if opts.PackageMirror == "" {
		opts.PackageMirror = bootstrap.DefaultPackageMirror(opts.Region)
	}
	m.PackageMirror = types.StringValue(opts.PackageMirror)
	if m.Versions != nil {
		opts.Versions = bootstrap.Versions{Driver: m.Versions.Driver.ValueString(), CUDA: m.Versions.CUDA.ValueString(),
			NCCL: m.Versions.NCCL.ValueString(), Kubernetes: m.Versions.Kubernetes.ValueString()}
	}
	if k := m.Kubernetes; k != nil {
		// A gpu_worker rendered here is a GPU node: the same NodeIdentity as a node pool's gives it
		// the GPU labels and taint.
		identity := bootstrap.NodeIdentity{Role: role, GPU: role == bootstrap.RoleGPUWorker, UserLabels: k.Labels}
		for _, t := range k.Taints {
			identity.UserTaints = append(identity.UserTaints, bootstrap.Taint{Key: t.Key.ValueString(), Value: t.Value.ValueString(), Effect: t.Effect.ValueString()})
		}
		opts.Kubernetes = bootstrap.Kubernetes{APIEndpoint: k.APIEndpoint.ValueString(), APIServerName: k.APIName.ValueString(), JoinToken: k.JoinToken.ValueString(),
			CACertHash: k.CACertHash.ValueString(), InsecureSkipCAVerification: k.Insecure.ValueBool(), PodSubnet: k.PodSubnet.ValueString(),
			Labels: identity.Labels(), Taints: identity.Taints()}
		registry, warn := resolveImageRegistry(k.Registry, d.region)
		addImageRegistryWarning(&resp.Diagnostics, path.Root("kubernetes").AtName("image_registry"), warn)
		opts.Kubernetes.ImageRegistry = registry
		k.Registry = types.StringValue(registry)
	}
	userEnv := map[string]string{}
	if !m.NCCLEnv.IsNull() && !m.NCCLEnv.IsUnknown() {
		resp.Diagnostics.Append(m.NCCLEnv.ElementsAs(ctx, &userEnv, false)...)
		if resp.Diagnostics.HasError() {
			return
		}
		opts.NCCLEnv = userEnv
	}

	warnings, err := bootstrap.Validate(opts)
	if err != nil {
		addPlanError(&resp.Diagnostics, err, summary)
		return
	}
	doc, err := bootstrap.Render(opts)
	if err != nil {
		addPlanError(&resp.Diagnostics, err, summary)
		return
	}
	for _, w := range warnings {
		resp.Diagnostics.AddWarning(summary, w)
	}

	v := opts.Versions.WithDefaults()
	m.Versions = &bootstrapVersions{Driver: types.StringValue(v.Driver), CUDA: types.StringValue(v.CUDA),
		NCCL: types.StringValue(v.NCCL), Kubernetes: types.StringValue(v.Kubernetes)}
	if m.NCCLEnv.IsNull() || m.NCCLEnv.IsUnknown() {
		env := map[string]string{}
		if role == bootstrap.RoleGPUWorker {
			env = bootstrap.ResolvedNCCLEnv(opts.ERDMA, nil)
		}
		var diags diag.Diagnostics
		m.NCCLEnv, diags = types.MapValueFrom(ctx, types.StringType, env)
		resp.Diagnostics.Append(diags...)
	}
	m.InternetSources = stringList(bootstrap.InternetSources(opts))
	m.CloudInit = types.StringValue(doc)
	files, err := bootstrap.DocumentFiles(doc)
	if err != nil {
		resp.Diagnostics.AddError(summary, "reading the rendered document back: "+err.Error())
		return
	}
	m.BootstrapScript = types.StringValue(files[bootstrap.ScriptPath])
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
