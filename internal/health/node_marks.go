package health

// What the GPU health agent (internal/gpuhealthagent) writes on a node whose GPU is out of
// service, here so the add-on that deploys the agent (internal/manifests) tolerates the same
// taint the agent sets without linking the agent's Kubernetes client.
const (
	// UnhealthyCondition is the Node condition: True while a GPU is out of service.
	UnhealthyCondition = "GPUUnhealthy"
	// UnhealthyTaintKey is the NoSchedule taint's key; its value is the action, reset or replace.
	UnhealthyTaintKey = "gpucluster.io/gpu-unhealthy"
	// ReplaceAnnotation asks the node's pool for a new instance (RFC 3339 time of the request).
	ReplaceAnnotation = "gpucluster.io/replace-requested"
)
