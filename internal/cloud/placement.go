package cloud

import (
	"context"
	"fmt"
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

const ecsPageSize = 50

// FindDeploymentSet returns the deployment set with this id, or an error for which IsNotFound
// is true.
func (c *Client) FindDeploymentSet(ctx context.Context, id string) (*ecs.DeploymentSet, error) {
	req := ecs.CreateDescribeDeploymentSetsRequest()
	req.RegionId = c.region
	req.DeploymentSetIds = fmt.Sprintf("[%q]", id)
	resp := ecs.CreateDescribeDeploymentSetsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.DeploymentSets.DeploymentSet {
		if ds := &resp.DeploymentSets.DeploymentSet[i]; ds.DeploymentSetId == id {
			return ds, nil
		}
	}
	return nil, notFound(ProductECS, "DescribeDeploymentSets", "InvalidDeploymentSetId.NotFound", "deployment set "+id)
}

// FindDeploymentSetsByPrefix lists the deployment sets of the region whose name starts with
// prefix (deployment sets take no tags, so names carry the owner), all pages.
func (c *Client) FindDeploymentSetsByPrefix(ctx context.Context, prefix string) ([]ecs.DeploymentSet, error) {
	var out []ecs.DeploymentSet
	seen := 0
	for page := 1; ; page++ {
		req := ecs.CreateDescribeDeploymentSetsRequest()
		req.RegionId = c.region
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(ecsPageSize)
		resp := ecs.CreateDescribeDeploymentSetsResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, err
		}
		for _, ds := range resp.DeploymentSets.DeploymentSet {
			if strings.HasPrefix(ds.DeploymentSetName, prefix) {
				out = append(out, ds)
			}
		}
		seen += len(resp.DeploymentSets.DeploymentSet)
		if len(resp.DeploymentSets.DeploymentSet) < ecsPageSize || seen >= resp.TotalCount {
			return out, nil
		}
	}
}

// DeleteDeploymentSet deletes a deployment set, retrying DependencyViolation (instances still
// in it) until ctx ends; not found counts as done.
func (c *Client) DeleteDeploymentSet(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := ecs.CreateDeleteDeploymentSetRequest()
		req.RegionId = c.region
		req.DeploymentSetId = id
		return c.Call(ctx, req, ecs.CreateDeleteDeploymentSetResponse())
	}, "DependencyViolation")
	if err != nil {
		return fmt.Errorf("deleting deployment set %s: %w", id, err)
	}
	return nil
}

// FindHpcClusterByName returns the HPC cluster with exactly this name, or an error for which
// IsNotFound is true (HPC clusters take no tags, so the name carries the owner).
func (c *Client) FindHpcClusterByName(ctx context.Context, name string) (*ecs.HpcCluster, error) {
	seen := 0
	for page := 1; ; page++ {
		req := ecs.CreateDescribeHpcClustersRequest()
		req.RegionId = c.region
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(ecsPageSize)
		resp := ecs.CreateDescribeHpcClustersResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, err
		}
		for i := range resp.HpcClusters.HpcCluster {
			if h := &resp.HpcClusters.HpcCluster[i]; h.Name == name {
				return h, nil
			}
		}
		seen += len(resp.HpcClusters.HpcCluster)
		if len(resp.HpcClusters.HpcCluster) < ecsPageSize || seen >= resp.TotalCount {
			return nil, notFound(ProductECS, "DescribeHpcClusters", "InvalidHpcClusterId.NotFound", "HPC cluster named "+name)
		}
	}
}

// FindHpcCluster returns the HPC cluster with this id, or an error for which IsNotFound is true.
func (c *Client) FindHpcCluster(ctx context.Context, id string) (*ecs.HpcCluster, error) {
	req := ecs.CreateDescribeHpcClustersRequest()
	req.RegionId = c.region
	req.HpcClusterIds = fmt.Sprintf("[%q]", id)
	resp := ecs.CreateDescribeHpcClustersResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.HpcClusters.HpcCluster {
		if h := &resp.HpcClusters.HpcCluster[i]; h.HpcClusterId == id {
			return h, nil
		}
	}
	return nil, notFound(ProductECS, "DescribeHpcClusters", "InvalidHpcClusterId.NotFound", "HPC cluster "+id)
}

// DeleteHpcCluster deletes an HPC cluster, retrying DependencyViolation until ctx ends; not
// found counts as done.
func (c *Client) DeleteHpcCluster(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := ecs.CreateDeleteHpcClusterRequest()
		req.RegionId = c.region
		req.HpcClusterId = id
		return c.Call(ctx, req, ecs.CreateDeleteHpcClusterResponse())
	}, "DependencyViolation")
	if err != nil {
		return fmt.Errorf("deleting HPC cluster %s: %w", id, err)
	}
	return nil
}
