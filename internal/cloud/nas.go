package cloud

import (
	"context"
	"fmt"
	"sort"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
)

// Status values of NAS file systems and mount targets.
const (
	FileSystemStatusRunning   = "Running"
	FileSystemStatusExtending = "Extending"
	MountTargetStatusActive   = "Active"
)

// The file system and mount target states the waiters tell apart, as DescribeFileSystems and
// DescribeMountTargets spell them
// (https://www.alibabacloud.com/help/en/nas/nas-statuses,
// https://www.alibabacloud.com/help/en/nas/developer-reference/api-nas-2017-06-26-describefilesystems).
// Pending covers create, start, stop, delete and an Extreme scale-up; Stopped is "unavailable"
// and, like Stopping and Deleting, does not turn into Running by itself. An Inactive mount target
// is unavailable, one Deleting is going.
var (
	fileSystemPending  = []string{"Pending", FileSystemStatusExtending}
	fileSystemFailed   = []string{"Stopped", "Stopping", "Deleting"}
	mountTargetPending = []string{"Pending"}
	mountTargetFailed  = []string{"Inactive", "Deleting"}
)

// FileSystem is what the provider keeps of a NAS or CPFS file system.
type FileSystem struct {
	ID, Type, StorageType string
	ZoneID, VPCID         string
	Description, Status   string
	CapacityGiB           int64
	Encrypted             bool
	Tags                  map[string]string
}

func fileSystemFromSDK(fs *nas.FileSystem) FileSystem {
	return FileSystem{ID: fs.FileSystemId, Type: fs.FileSystemType, StorageType: fs.StorageType, ZoneID: fs.ZoneId,
		VPCID: fs.VpcId, Description: fs.Description, Status: fs.Status, CapacityGiB: fs.Capacity, Encrypted: fs.EncryptType != 0,
		Tags: tagsOf(fs.Tags.Tag, func(t nas.Tag) (string, string) { return t.Key, t.Value })}
}

// MountTarget is what the provider keeps of a file system's mount target.
type MountTarget struct {
	Domain, VPCID, VSwitchID, Status string
}

// FileSystemInput is what CreateFileSystem needs.
type FileSystemInput struct {
	FileSystemType, StorageType, ProtocolType string
	// CapacityGiB is sent when > 0 (Extreme and CPFS need it; general-purpose NAS is elastic).
	CapacityGiB int64
	ZoneID      string
	VpcID       string
	VSwitchID   string
	Description string
	Encrypted   bool
	// ClientToken makes the create idempotent across the call layer's retries.
	ClientToken string
}

// CreateFileSystem creates a NAS or CPFS file system and returns its id; it does not wait.
func (c *Client) CreateFileSystem(ctx context.Context, in FileSystemInput) (string, error) {
	req := nas.CreateCreateFileSystemRequest()
	req.RegionId = c.region
	req.FileSystemType = in.FileSystemType
	req.StorageType = in.StorageType
	req.ProtocolType = in.ProtocolType
	req.ZoneId = in.ZoneID
	req.Description = in.Description
	req.ClientToken = in.ClientToken
	req.ChargeType = "PayAsYouGo"
	if in.CapacityGiB > 0 {
		req.Capacity = requests.NewInteger(int(in.CapacityGiB))
	}
	// Extreme and CPFS file systems live in the VPC; general-purpose NAS joins it through the
	// mount target only.
	if in.FileSystemType != "standard" {
		req.VpcId = in.VpcID
		req.VSwitchId = in.VSwitchID
	}
	if in.Encrypted {
		req.EncryptType = requests.NewInteger(1) // NAS-managed key
	}
	resp := nas.CreateCreateFileSystemResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return "", err
	}
	return resp.FileSystemId, nil
}

// FindFileSystem returns the file system with this id, or an error matching ErrNotFound.
func (c *Client) FindFileSystem(ctx context.Context, id string) (*FileSystem, error) {
	req := nas.CreateDescribeFileSystemsRequest()
	req.RegionId = c.region
	req.FileSystemId = id
	resp := nas.CreateDescribeFileSystemsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	for i := range resp.FileSystems.FileSystem {
		if fs := &resp.FileSystems.FileSystem[i]; fs.FileSystemId == id {
			out := fileSystemFromSDK(fs)
			return &out, nil
		}
	}
	return nil, notFound(ProductNAS, "DescribeFileSystems", "InvalidFileSystem.NotFound", "file system "+id)
}

// FindFileSystemsByTags lists the file systems in the region that carry every tag (key and
// value), sorted by id: the finder that adopts what an interrupted apply left behind.
func (c *Client) FindFileSystemsByTags(ctx context.Context, tags map[string]string) ([]FileSystem, error) {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	filter := make([]nas.DescribeFileSystemsTag, 0, len(keys))
	for _, k := range keys {
		filter = append(filter, nas.DescribeFileSystemsTag{Key: k, Value: tags[k]})
	}
	const pageSize = 100
	out, err := pageNumbers(fmt.Sprintf("file systems tagged %v", tags), pageSize, 0, func(page int) ([]FileSystem, int, int, error) {
		req := nas.CreateDescribeFileSystemsRequest()
		req.RegionId = c.region
		req.Tag = &filter
		req.PageNumber = requests.NewInteger(page)
		req.PageSize = requests.NewInteger(pageSize)
		resp := nas.CreateDescribeFileSystemsResponse()
		if err := c.Call(ctx, req, resp); err != nil {
			return nil, 0, 0, fmt.Errorf("listing file systems tagged %v: %w", tags, err)
		}
		// The service filters; checking again keeps a lenient endpoint from handing back a file
		// system that is not the tier's.
		var kept []FileSystem
		for i := range resp.FileSystems.FileSystem {
			if fs := fileSystemFromSDK(&resp.FileSystems.FileSystem[i]); hasTags(fs.Tags, tags) {
				kept = append(kept, fs)
			}
		}
		return kept, len(resp.FileSystems.FileSystem), resp.TotalCount, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// WaitFileSystemRunning waits until the file system is Running (after a create or an upgrade).
// A file system Stopped, Stopping or Deleting fails the wait at once (a *StateError). With an
// error it returns the file system as last seen, if it saw it.
func (c *Client) WaitFileSystemRunning(ctx context.Context, id string) (*FileSystem, error) {
	return waitFor(ctx, waiter[*FileSystem]{
		what:    "file system " + id,
		refresh: refreshStatus(func() (*FileSystem, error) { return c.FindFileSystem(ctx, id) }, func(fs *FileSystem) string { return fs.Status }),
		pending: fileSystemPending, target: []string{FileSystemStatusRunning}, failed: fileSystemFailed,
	})
}

// WaitFileSystemDeleted waits until FindFileSystem says not found.
func (c *Client) WaitFileSystemDeleted(ctx context.Context, id string) error {
	return waitGone(ctx, "file system "+id, func() error { _, err := c.FindFileSystem(ctx, id); return err })
}

// UpgradeFileSystem grows an Extreme or CPFS file system to capacityGiB and waits until it is
// Running again.
func (c *Client) UpgradeFileSystem(ctx context.Context, id string, capacityGiB int64, clientToken string) error {
	req := nas.CreateUpgradeFileSystemRequest()
	req.RegionId = c.region
	req.FileSystemId = id
	req.Capacity = requests.NewInteger(int(capacityGiB))
	req.ClientToken = clientToken
	if err := c.Call(ctx, req, nas.CreateUpgradeFileSystemResponse(), RetryOn("IncorrectFileSystemStatus")); err != nil {
		return fmt.Errorf("upgrading file system %s to %d GiB: %w", id, capacityGiB, err)
	}
	_, err := c.WaitFileSystemRunning(ctx, id)
	return err
}

// SetFileSystemDescription changes the description (the tier's name).
func (c *Client) SetFileSystemDescription(ctx context.Context, id, description string) error {
	req := nas.CreateModifyFileSystemRequest()
	req.RegionId = c.region
	req.FileSystemId = id
	req.Description = description
	return c.Call(ctx, req, nas.CreateModifyFileSystemResponse())
}

// DeleteFileSystem deletes the file system's mount targets, then the file system, and waits
// until it is gone; not found counts as done.
func (c *Client) DeleteFileSystem(ctx context.Context, id string) error {
	targets, err := c.FindMountTargets(ctx, id)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, mt := range targets {
		if err := c.DeleteMountTarget(ctx, id, mt.Domain); err != nil {
			return err
		}
	}
	err = DeleteUntilGone(ctx, func() error {
		req := nas.CreateDeleteFileSystemRequest()
		req.RegionId = c.region
		req.FileSystemId = id
		return c.Call(ctx, req, nas.CreateDeleteFileSystemResponse())
	}, "IncorrectFileSystemStatus")
	if err != nil {
		return fmt.Errorf("deleting file system %s: %w", id, err)
	}
	return c.WaitFileSystemDeleted(ctx, id)
}

// CreateMountTarget adds a VPC mount target in the vSwitch and returns its domain; it does not
// wait.
func (c *Client) CreateMountTarget(ctx context.Context, fsID, vpcID, vswitchID string) (string, error) {
	req := nas.CreateCreateMountTargetRequest()
	req.RegionId = c.region
	req.FileSystemId = fsID
	req.NetworkType = "Vpc"
	req.VpcId = vpcID
	req.VSwitchId = vswitchID
	req.AccessGroupName = "DEFAULT_VPC_GROUP_NAME"
	resp := nas.CreateCreateMountTargetResponse()
	if err := c.Call(ctx, req, resp, RetryOn("IncorrectFileSystemStatus")); err != nil {
		return "", fmt.Errorf("creating a mount target for file system %s in vSwitch %s: %w", fsID, vswitchID, err)
	}
	return resp.MountTargetDomain, nil
}

// FindMountTargets lists the mount targets of a file system, sorted by domain.
func (c *Client) FindMountTargets(ctx context.Context, fsID string) ([]MountTarget, error) {
	req := nas.CreateDescribeMountTargetsRequest()
	req.RegionId = c.region
	req.FileSystemId = fsID
	req.PageSize = requests.NewInteger(100)
	resp := nas.CreateDescribeMountTargetsResponse()
	if err := c.Call(ctx, req, resp); err != nil {
		return nil, err
	}
	out := make([]MountTarget, 0, len(resp.MountTargets.MountTarget))
	for _, mt := range resp.MountTargets.MountTarget {
		out = append(out, MountTarget{Domain: mt.MountTargetDomain, VPCID: mt.VpcId, VSwitchID: mt.VswId, Status: mt.Status})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Domain < out[j].Domain })
	return out, nil
}

// FindMountTarget returns one mount target of a file system, or an error matching ErrNotFound.
func (c *Client) FindMountTarget(ctx context.Context, fsID, domain string) (*MountTarget, error) {
	targets, err := c.FindMountTargets(ctx, fsID)
	if err != nil {
		return nil, err
	}
	for i := range targets {
		if targets[i].Domain == domain {
			return &targets[i], nil
		}
	}
	return nil, notFound(ProductNAS, "DescribeMountTargets", "InvalidMountTarget.NotFound", "mount target "+domain)
}

// WaitMountTargetActive waits until the mount target is Active; one Inactive or going fails the
// wait at once.
func (c *Client) WaitMountTargetActive(ctx context.Context, fsID, domain string) (*MountTarget, error) {
	return waitFor(ctx, waiter[*MountTarget]{
		what:    "mount target " + domain,
		refresh: refreshStatus(func() (*MountTarget, error) { return c.FindMountTarget(ctx, fsID, domain) }, func(mt *MountTarget) string { return mt.Status }),
		pending: mountTargetPending, target: []string{MountTargetStatusActive}, failed: mountTargetFailed,
	})
}

// DeleteMountTarget deletes a mount target and waits until it is gone; not found counts as done.
func (c *Client) DeleteMountTarget(ctx context.Context, fsID, domain string) error {
	err := DeleteUntilGone(ctx, func() error {
		req := nas.CreateDeleteMountTargetRequest()
		req.RegionId = c.region
		req.FileSystemId = fsID
		req.MountTargetDomain = domain
		return c.Call(ctx, req, nas.CreateDeleteMountTargetResponse())
	}, "IncorrectMountTargetStatus", "IncorrectFileSystemStatus")
	if err != nil {
		return fmt.Errorf("deleting mount target %s of file system %s: %w", domain, fsID, err)
	}
	return waitGone(ctx, "mount target "+domain, func() error { _, err := c.FindMountTarget(ctx, fsID, domain); return err })
}
