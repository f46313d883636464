package cloud

import (
	"context"
	"fmt"
	"strings"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
)

// Placement: ECS deployment sets and HPC clusters. Neither takes tags, so the provider finds
// them by name.

const ecsPageSize = 50

// DeploymentSet is what the provider keeps of a deployment set.
type DeploymentSet struct {
	ID, Name, Strategy string
	// Instances is how many instances the set holds now.
	Instances int
}

func deploymentSetFromSDK(ds *ecs.DeploymentSet) DeploymentSet {
	return DeploymentSet{ID: ds.DeploymentSetId, Name: ds.DeploymentSetName, Strategy: ds.Strategy, Instances: ds.InstanceAmount}
}

// HPCCluster is what the provider keeps of an HPC cluster.
type HPCCluster struct {
	ID, Name string
}

// DeploymentSetInput is what CreateDeploymentSet needs.
type DeploymentSetInput struct {
	Name, Description, Strategy string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// CreateDeploymentSet creates a deployment set and returns its id.
func (c *Client) CreateDeploymentSet(ctx context.Context, in DeploymentSetInput) (string, error) {
	req := ecs.CreateCreateDeploymentSetRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.DeploymentSetName = in.Name
	req.Description = in.Description
	req.Strategy = in.Strategy
	resp := ecs.CreateCreateDeploymentSetResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	return resp.DeploymentSetId, nil
}

// FindDeploymentSet returns the deployment set with this id, or an error matching ErrNotFound.
func (c *Client) FindDeploymentSet(ctx context.Context, id string) (*DeploymentSet, error) {
	req := ecs.CreateDescribeDeploymentSetsRequest()
	req.RegionId = c.region
	req.DeploymentSetIds = fmt.Sprintf("[%q]", id)
	resp := ecs.CreateDescribeDeploymentSetsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.DeploymentSets.DeploymentSet {
		if ds := &resp.DeploymentSets.DeploymentSet[i]; ds.DeploymentSetId == id {
			out := deploymentSetFromSDK(ds)
			return &out, nil
		}
	}
	return nil, notFound(ProductECS, "DescribeDeploymentSets", "InvalidDeploymentSetId.NotFound", "deployment set "+id)
}

// FindDeploymentSetsByPrefix lists the deployment sets of the region whose name starts with
// prefix (deployment sets take no tags, so names carry the owner), all pages.
func (c *Client) FindDeploymentSetsByPrefix(ctx context.Context, prefix string) ([]DeploymentSet, error) {
	return pageNumbers("deployment sets named "+prefix+"*", ecsPageSize, 0, func(page int) ([]DeploymentSet, int, int, error) {
		req := ecs.CreateDescribeDeploymentSetsRequest()
		req.RegionId = c.region
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(ecsPageSize)
		resp := ecs.CreateDescribeDeploymentSetsResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, err
		}
		var kept []DeploymentSet
		for i := range resp.DeploymentSets.DeploymentSet {
			if ds := &resp.DeploymentSets.DeploymentSet[i]; strings.HasPrefix(ds.DeploymentSetName, prefix) {
				kept = append(kept, deploymentSetFromSDK(ds))
			}
		}
		return kept, len(resp.DeploymentSets.DeploymentSet), resp.TotalCount, nil
	})
}

// DeleteDeploymentSet deletes a deployment set, retrying DependencyViolation (instances still
// in it) until ctx ends; not found counts as done.
func (c *Client) DeleteDeploymentSet(ctx context.Context, id string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := ecs.CreateDeleteDeploymentSetRequest()
		req.RegionId = c.region
		req.DeploymentSetId = id
		return c.Call(ctx, req, ecs.CreateDeleteDeploymentSetResponse())
	})
	if err != nil {
		return fmt.Errorf("deleting deployment set %s: %w", id, err)
	}
	return nil
}

// HPCClusterInput is what CreateHpcCluster needs.
type HPCClusterInput struct {
	Name, Description string
	// ClientToken makes the create idempotent (see CreateOrAdopt).
	ClientToken string
}

// CreateHpcCluster creates an HPC cluster and returns its id.
func (c *Client) CreateHpcCluster(ctx context.Context, in HPCClusterInput) (string, error) {
	req := ecs.CreateCreateHpcClusterRequest()
	req.RegionId = c.region
	req.ClientToken = in.ClientToken
	req.Name = in.Name
	req.Description = in.Description
	resp := ecs.CreateCreateHpcClusterResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	return resp.HpcClusterId, nil
}

// FindHpcClusterByName returns the HPC cluster with exactly this name, or an error matching
// ErrNotFound (HPC clusters take no tags, so the name carries the owner).
func (c *Client) FindHpcClusterByName(ctx context.Context, name string) (*HPCCluster, error) {
	// Up to the first page holding the name: limit 1 over a list filtered to it.
	found, err := pageNumbers("HPC clusters", ecsPageSize, 1, func(page int) ([]HPCCluster, int, int, error) {
		req := ecs.CreateDescribeHpcClustersRequest()
		req.RegionId = c.region
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(ecsPageSize)
		resp := ecs.CreateDescribeHpcClustersResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, err
		}
		var kept []HPCCluster
		for _, h := range resp.HpcClusters.HpcCluster {
			if h.Name == name {
				kept = append(kept, HPCCluster{ID: h.HpcClusterId, Name: h.Name})
			}
		}
		return kept, len(resp.HpcClusters.HpcCluster), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, notFound(ProductECS, "DescribeHpcClusters", "InvalidHpcClusterId.NotFound", "HPC cluster named "+name)
	}
	return &found[0], nil
}

// FindHpcCluster returns the HPC cluster with this id, or an error matching ErrNotFound.
func (c *Client) FindHpcCluster(ctx context.Context, id string) (*HPCCluster, error) {
	req := ecs.CreateDescribeHpcClustersRequest()
	req.RegionId = c.region
	req.HpcClusterIds = fmt.Sprintf("[%q]", id)
	resp := ecs.CreateDescribeHpcClustersResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for _, h := range resp.HpcClusters.HpcCluster {
		if h.HpcClusterId == id {
			return &HPCCluster{ID: h.HpcClusterId, Name: h.Name}, nil
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
	})
	if err != nil {
		return fmt.Errorf("deleting HPC cluster %s: %w", id, err)
	}
	return nil
}
