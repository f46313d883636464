# The id is the load balancer id (lb-...); the load balancer must carry the gpucluster:network-id
# tag the endpoint puts on it.
terraform import gpucluster_control_plane_endpoint.api lb-2ze7o5h8x9k1abcdef
