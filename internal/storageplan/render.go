package storageplan

import (
	"fmt"
	"math"
	"strings"
)

// NFSOptions are the mount options for large sequential reads: NFSv3 over TCP with the largest
// read and write sizes (1 MiB), hard mounts with a long timeout so a busy server stalls readers
// instead of failing them, no lock daemon, and noresvport so a reconnect picks a fresh source
// port.
const NFSOptions = "vers=3,nolock,proto=tcp,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport"

// MountPoint is where the rendered commands mount a tier: /mnt/<name>.
func MountPoint(name string) string { return "/mnt/" + name }

// exportPath is the path a mount target exports: "/" for general-purpose NAS, "/share" for
// Extreme NAS and CPFS.
func exportPath(b Backend) string {
	if b.FileSystemType == "extreme" || b.FileSystemType == "cpfs" {
		return "/share"
	}
	return "/"
}

// fsType is the mount type: nfs, or cpfs-nfs (the CPFS-NFS client) for CPFS.
func fsType(b Backend) string {
	if b.FileSystemType == "cpfs" {
		return "cpfs-nfs"
	}
	return "nfs"
}

// MountCommand renders the shell command that mounts the file system on a node.
func MountCommand(b Backend, domain, name string) string {
	mp := MountPoint(name)
	return fmt.Sprintf("sudo mkdir -p %s && sudo mount -t %s -o %s %s:%s %s", mp, fsType(b), NFSOptions, domain, exportPath(b), mp)
}

// FstabLine renders the /etc/fstab line for the same mount; _netdev waits for the network.
func FstabLine(b Backend, domain, name string) string {
	return fmt.Sprintf("%s:%s %s %s %s,_netdev 0 0", domain, exportPath(b), MountPoint(name), fsType(b), NFSOptions)
}

// Cache engines the cache block accepts.
const CacheEngineAlluxio = "alluxio"

// CacheEngines lists the cache engines, for the schema's validator and docs.
func CacheEngines() []string { return []string{CacheEngineAlluxio} }

// Cache is the cache in front of a cold bucket.
type Cache struct {
	Engine        string
	SizeGiB       int64
	TargetHitRate float64
	// HotDatasetGiB is the data read repeatedly (the working set); 0 when not given.
	HotDatasetGiB int64
}

// CacheDir is where the rendered properties put the cache on each worker.
const CacheDir = "/mnt/alluxio-cache"

// SizeCache checks the cache against its hit-rate target. The vendor publishes no hit-rate
// formula; the figure used is the plain model of a working set read evenly through an LRU cache:
// hit rate ~ min(1, cache / working set), so a target h needs h x working set. It returns notes
// and the warnings for a cache smaller than that.
func SizeCache(c Cache) (notes, warnings []string) {
	if c.HotDatasetGiB <= 0 {
		notes = append(notes, fmt.Sprintf("cache: %d GiB; the hit rate it reaches depends on the working set, which is not given (set cache.hot_dataset_gib to check the %g target)",
			c.SizeGiB, c.TargetHitRate))
		return notes, nil
	}
	need := int64(math.Ceil(float64(c.HotDatasetGiB) * c.TargetHitRate))
	expected := math.Min(1, float64(c.SizeGiB)/float64(c.HotDatasetGiB))
	notes = append(notes, fmt.Sprintf("cache: a working set of %d GiB read evenly needs about %d GiB for a %g hit rate (model: hit rate ~ cache / working set; no vendor formula); %d GiB gives about %.2f",
		c.HotDatasetGiB, need, c.TargetHitRate, c.SizeGiB, expected))
	if c.SizeGiB < need {
		warnings = append(warnings, fmt.Sprintf("cache.size_gib = %d is below the %d GiB a %g hit rate on a %d GiB working set needs (model: hit rate ~ cache / working set): raise cache.size_gib to %d",
			c.SizeGiB, need, c.TargetHitRate, c.HotDatasetGiB, need))
	}
	return notes, warnings
}

// AlluxioProperties renders an alluxio-site.properties that mounts the bucket as Alluxio's root
// and sizes the worker cache. Credentials are never written: the workers take them from a RAM
// role or from the environment.
func AlluxioProperties(bucket, region string, c Cache) string {
	lines := []string{
		"# alluxio-site.properties for the cold tier bucket " + bucket + " (rendered by terraform-provider-gpucluster)",
		"# OSS credentials are not written here: give the workers a RAM role, or set",
		"# fs.oss.accessKeyId and fs.oss.accessKeySecret from a secret store.",
		"alluxio.master.mount.table.root.ufs=oss://" + bucket + "/",
		"fs.oss.endpoint=oss-" + region + "-internal.aliyuncs.com",
		"alluxio.worker.tieredstore.levels=1",
		"alluxio.worker.tieredstore.level0.alias=SSD",
		"alluxio.worker.tieredstore.level0.dirs.path=" + CacheDir,
		fmt.Sprintf("alluxio.worker.tieredstore.level0.dirs.quota=%dGB", c.SizeGiB),
		"alluxio.worker.block.annotator.class=alluxio.worker.block.annotator.LRUAnnotator",
		"alluxio.user.file.readtype.default=CACHE",
		"alluxio.user.file.writetype.default=THROUGH",
		fmt.Sprintf("# target hit rate %g", c.TargetHitRate),
	}
	return strings.Join(lines, "\n") + "\n"
}
