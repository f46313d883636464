package nodepool

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/cloud"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"
)

// AdoptOrphans finds the nodes of an earlier apply of this pool that was killed before it could
// save state: they carry the pool's name and network. They are tagged with spec.PoolID and
// answered, so the create grows from them and a re-run never doubles the pool.
func AdoptOrphans(ctx context.Context, c *cloud.Client, spec Spec) ([]cloud.Instance, error) {
	orphans, err := c.ListInstancesByTags(ctx, map[string]string{tagging.PoolName: spec.Name, tagging.PoolNetwork: spec.Network.ID})
	if err != nil {
		return nil, fmt.Errorf("looking for nodes of an interrupted earlier apply: %w", err)
	}
	if len(orphans) == 0 {
		return nil, nil
	}
	ids := InstanceIDs(orphans)
	tflog.Info(ctx, fmt.Sprintf("adopting %d nodes of an interrupted earlier apply", len(ids)), map[string]any{"pool": spec.PoolID})
	if err := c.TagResources(ctx, cloud.KindInstance, ids, map[string]string{tagging.Pool: spec.PoolID}); err != nil {
		return nil, fmt.Errorf("adopting nodes of an interrupted earlier apply: %w", err)
	}
	return orphans, nil
}
