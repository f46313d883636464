// Package storage is the storage tier's multi-step cloud workflows: the hot and warm tiers' NAS
// or CPFS file system with its mount target (filesystem.go: created or adopted after an
// interrupted apply, tagged, waited for, grown, renamed, read and deleted) and the cold tier's
// OSS bucket (bucket.go: created or adopted, held to private, versioned, public access blocked,
// with one lifecycle rule, read and deleted, emptied first when forced). network.go finds
// where a file system's mount target goes; tags.go holds the tags of a tier's objects.
//
// Everything takes plain Go values and a *cloud.Client; internal/provider's
// gpucluster_storage_tier turns plans into them and results into state and diagnostics. Tests
// run against the in-process emulator (internal/cloud/cloudtest).
package storage
