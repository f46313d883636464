// Package network is the RDMA network's multi-step cloud workflows: how a network is found from
// its id by every resource that uses it (find.go: its security group, options tag, vSwitches,
// placement groups and HPC cluster), how it is built, updated and deleted (build.go: VPC,
// security group, vSwitches, rules, placement groups, HPC cluster, in dependency order, each
// create adopting what an interrupted apply left), its egress in mode "nat" (egress.go: NAT gateway, EIP, SNAT entries; built, completed, retagged,
// read and removed, adopting what an interrupted apply left) and the control-plane endpoint
// (endpoint.go: the internal load balancer, its 6443 listener and the endpoint's own security
// group rules). rules.go turns security group rules between the API's form and netplan.Rule;
// tags.go holds the reserved tags of the network's objects.
//
// Everything takes plain Go values and a *cloud.Client; internal/provider turns plans into
// them and results into state. Tests run against the in-process emulator
// (internal/cloud/cloudtest).
package network
