package gpuhealthagent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
)

// Replacer asks the cloud for a new instance in place of a node's. The agent calls it for a GPU
// no reset mends, once no GPU pod is left on the node (evicted and ended), so nothing running is
// killed by the replacement. reason names the XID and the GPU behind the request.
type Replacer interface {
	Replace(ctx context.Context, node *corev1.Node, reason string) error
}

// ErrNotAutoscaled: the node is not a scaling group's (it has no provider id): its replacement is
// left to its pool, and the request annotation says it is due.
var ErrNotAutoscaled = errors.New("the node has no provider id: it is not in a scaling group")

// ESSReplacer replaces the nodes of autoscaled pools through Auto Scaling: the instance is marked
// unhealthy (SetInstanceHealth), which has its group remove and release it and launch another from
// the pool's scaling configuration; the new instance joins as any scaled-out node does. The
// autoscaled pools' nodes register with spec.providerID <region>.<instance id> (the bootstrap's
// ProviderID option), which is how the agent finds the instance.
type ESSReplacer struct {
	Client *cloud.Client
}

// Replace marks the node's instance unhealthy; Auto Scaling takes no reason.
func (r ESSReplacer) Replace(ctx context.Context, node *corev1.Node, _ string) error {
	id, err := instanceOf(node)
	if err != nil {
		return err
	}
	return r.Client.SetInstanceUnhealthy(ctx, id)
}

// instanceOf reads the instance id from a provider id "<region>.<instance id>".
func instanceOf(node *corev1.Node) (string, error) {
	p := node.Spec.ProviderID
	if p == "" {
		return "", ErrNotAutoscaled
	}
	i := strings.LastIndexByte(p, '.')
	if i < 0 || !strings.HasPrefix(p[i+1:], "i-") {
		return "", fmt.Errorf("node %s: provider id %q is not <region>.<instance id>", node.Name, p)
	}
	return p[i+1:], nil
}
