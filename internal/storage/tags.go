package storage

import "github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"

// SystemTags are the tags the provider puts on a tier's file system or bucket: they are how an
// interrupted apply's file system or bucket is recognised as the tier's.
func SystemTags(name string) map[string]string {
	return map[string]string{tagging.ManagedBy: tagging.ManagedByVal, tagging.StorageTier: name}
}

// Tags is everything a tier's file system or bucket carries: the user's tags and the provider's.
func Tags(name string, user map[string]string) map[string]string {
	return tagging.Merge(user, SystemTags(name))
}
