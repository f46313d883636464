// Package cloud is the provider's only door to Alibaba Cloud: resources and data sources never
// call the vendor SDKs themselves (a depguard rule in .golangci.yml holds the production files
// of internal/provider to it; the emulator uses the SDKs' structs only to speak their wire
// format). Every API call is a typed function here that takes plain Go values and returns domain
// types, never SDK structs.
//
// Where things are:
//
//   - client.go, transport.go, credentials.go, errors.go: the client, the call layer (Call, OSS)
//     with its retries and logging, credentials, and the error types (APIError, TransportError,
//     ErrNotFound).
//   - vpc.go (VPCs, vSwitches), ecs_security_groups.go, ecs_placement.go (deployment sets, HPC
//     clusters), ecs_instances.go, ecs_catalog.go (zones, instance types, stock, prices), nas.go
//     (file systems, mount targets), oss.go (buckets), vpc_nat.go (NAT gateways), vpc_eip.go
//     (elastic IP addresses, their bandwidth limits and ValidateEIPBandwidth), vpc_snat.go (SNAT
//     entries), slb.go (internal Classic Load Balancers, TCP listeners, backend servers), ess.go
//     (Auto Scaling groups, scaling configurations, scaling activities and instances): one file
//     per product or area.
//   - tags.go: tagging for every product (SyncTags, TagResources, UntagResources, DiffTags), with
//     a ResourceKind per taggable kind (KindNATGateway, KindEIP, KindLoadBalancer...).
//   - adopt.go: deterministic ClientTokens and CreateOrAdopt, which adopts what an interrupted
//     apply created instead of duplicating it.
//   - wait.go: waitFor, the one waiter under every Wait* function and DeleteUntilGone; page.go:
//     pageThrough, the one pager under every list that takes more than one call.
//   - concurrency.go: RunConcurrently.
//
// Finders (Find*) return a not-found error that matches ErrNotFound (errors.Is, or IsNotFound)
// both when the service says so and when a Describe call lists nothing.
//
// A new waiter is a waiter[T] given to waitFor, never a loop of its own: what it waits for
// ("NAT gateway ngw-1"), a refresh function (refreshStatus over the finder, for an object with a
// Status), and the vendor's states sorted into pending, target and failed, with the vendor
// page that documents them cited beside them. A failed state, or one in none of the lists, ends
// the wait at once with a *StateError; say what not found means (notFoundFails,
// notFoundPending right after an eventually consistent create, notFoundIsTarget for a delete);
// the deadline error names the last state seen. A new list is a fetch function of one page
// given to pageNumbers (PageNumber, PageSize, TotalCount), pageTokens (NextToken), or
// pageThrough for another cursor (OSS markers); they end on a short or empty page and fail,
// rather than loop, on a repeated cursor or after maxPages pages.
package cloud
