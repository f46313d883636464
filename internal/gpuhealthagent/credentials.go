package gpuhealthagent

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/ecsmetadata"
)

// InstanceReplacer is the Replacer of a deployed agent: it signs its calls with the node's
// instance RAM role, read from the metadata service at each request (the role's keys are
// temporary and renewed by the service, so none are kept), and picks the pool's way of
// replacing a node: a node with a provider id is an autoscaled pool's (only their bootstrap
// registers one), replaced through Auto Scaling (ESSReplacer); a node without one is a fixed
// pool's, whose instance is tagged for the next apply (TagReplacer).
//
// The agent's pod reaches the metadata service only on the host network: the bootstrap's
// metadata guard drops pod traffic to it.
type InstanceReplacer struct {
	Metadata ecsmetadata.Client
	// CloudEndpoint is one base URL for every product's API; "" is the vendor's public endpoint
	// of the instance's region. Tests point it at the emulator.
	CloudEndpoint string
}

// Replace asks the instance's pool for a new instance in place of the node's.
func (r InstanceReplacer) Replace(ctx context.Context, node *corev1.Node, reason string) error {
	client, err := r.cloudClient(ctx)
	if err != nil {
		return err
	}
	if node.Spec.ProviderID != "" {
		return ESSReplacer{Client: client}.Replace(ctx, node, reason)
	}
	id, err := r.Metadata.InstanceID(ctx)
	if err != nil {
		return err
	}
	return TagReplacer{Client: client, InstanceID: id}.Replace(ctx, node, reason)
}

// cloudClient builds a client of the instance's region with the role's current keys.
func (r InstanceReplacer) cloudClient(ctx context.Context) (*cloud.Client, error) {
	region, err := r.Metadata.RegionID(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := r.Metadata.RoleKeys(ctx)
	if err != nil {
		return nil, err
	}
	client, err := cloud.New(ctx, cloud.Config{
		Region: region,
		Credentials: cloud.Credentials{AccessKeyID: keys.AccessKeyID, AccessKeySecret: keys.AccessKeySecret,
			SecurityToken: keys.SecurityToken, Source: "the instance RAM role"},
		Endpoint:   r.CloudEndpoint,
		MaxRetries: cloud.DefaultMaxRetries,
		RateLimit:  cloud.DefaultRateLimit,
		UserAgent:  "gpucluster-gpu-health-agent",
	})
	if err != nil {
		return nil, fmt.Errorf("the cloud client from the instance RAM role: %w", err)
	}
	return client, nil
}
