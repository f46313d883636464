// Package controllertest runs the real Kueue manager and the real MPI Operator, built from the Go
// module proxy by `make controllers` (scripts/build-controllers.sh), against the offline test
// cluster (internal/offlinekube), and checks that what internal/manifests renders works with them:
// the team queues admit a team's MPIJob within its quota and hold another team's beyond it, the
// operator's workers land on the pool's GPU nodes through the real scheduler, and a team reclaims
// its lent quota by preemption. The package has tests only.
package controllertest
