package manifests

import (
	_ "embed"
)

// The MPI Operator as an add-on (AddonMPIOperator): its CRD and the operator itself, applied by
// the first control-plane node with the rest when the cluster's add-ons travel in a bootstrap
// bundle. The CRD alone is 219 KB of YAML (about 20 KB gzip'd and base64-encoded), so with the
// rest of a simulation scenario's add-ons it cannot go in the 32 KB of user data ECS accepts:
// AddonOptions.MPIOperator is for bundled pools only, and the modules set it only then.

// AddonMPIOperator is the MPI Operator's add-on file: the MPIJob CRD first, then the operator.
const AddonMPIOperator = "60-mpi-operator.yaml"

// mpiJobCRD is the MPIJob CRD of MPIOperatorVersion, as the release publishes it
// (https://github.com/kubeflow/mpi-operator/blob/v0.8.0/manifests/base/kubeflow.org_mpijobs.yaml)
// with its descriptions removed (they are documentation, not schema). The tests check the
// rendered MPIJobs against its schema, and internal/controllertest runs the real operator on it.
//
//go:embed crds/kubeflow.org_mpijobs.yaml
var mpiJobCRD string

// MPIJobCRDName is the CRD's name, as the API server serves it once established.
const MPIJobCRDName = "mpijobs.kubeflow.org"

// mpiOperatorAddon is AddonMPIOperator's documents: the CRD, then the operator in registry's
// images (the namespace first: mpiOperator's order).
func mpiOperatorAddon(registry string) ([]Document, error) {
	ops, err := documents(mpiOperator(MPIOptions{Images: MPIImagesIn(registry)}))
	if err != nil {
		return nil, err
	}
	crd := Document{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: MPIJobCRDName, YAML: mpiJobCRD}
	return append([]Document{crd}, ops...), nil
}
