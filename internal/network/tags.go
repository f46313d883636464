package network

import "github.com/gpucluster/terraform-provider-gpucluster/internal/tagging"

// SystemTags are the reserved tags of one object of the network (networkID "" for the objects
// made before the network's id exists: its VPC and security group).
func SystemTags(name, networkID string) map[string]string {
	t := map[string]string{tagging.ManagedBy: tagging.ManagedByVal, tagging.Network: name}
	if networkID != "" {
		t[tagging.NetworkID] = networkID
	}
	return t
}
