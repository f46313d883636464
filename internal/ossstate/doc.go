// Package ossstate holds the test of team state in OSS: OpenTofu's built-in `oss` backend keeping a
// stack's state in a versioned bucket of the emulator, so that a second person's apply reads what
// the first wrote. It has no code of its own; the test drives the real CLI.
//
// What the backend needs from the emulator: with `endpoint` (or ALICLOUD_OSS_ENDPOINT) and static
// keys set it calls OSS only: ListObjects, HeadObject/GetObjectMeta, GetObject and PutObject,
// signed with signature V1 by the aliyun-oss-go-sdk, in path style because the endpoint is an IP
// address. It calls STS AssumeRole only when a role is configured, and the Location service
// (DescribeEndpoints) only when no endpoint is given. Locking and the state checksum live in a
// Tablestore table (tablestore_endpoint, tablestore_table); the emulator does not serve Tablestore,
// so the test runs without it and the backend takes no lock.
package ossstate
