// Package clustertest holds the acceptance tests that go past the cloud API: each scenario
// module is applied with real OpenTofu (or Terraform) against the emulator, whose node agent
// turns the Running instances into Nodes of a real Kubernetes control plane (internal/offlinekube)
// as their user data would on the real cloud. The tests then ask the API server, not the
// provider, whether the cluster works: Ready GPU nodes with the pool's labels, taints and GPU
// capacity, the validation pods spread over the GPU nodes, the reaper scheduled, and no pod
// without the GPU toleration on a GPU node. The agent plays the region too (issue #29): the
// modules on their defaults in cn-wulanchabu take everything from the region; one applied with
// the public registries must be refused, the blocked host named. They run with TF_ACC=1, like
// internal/provider's.
package clustertest
