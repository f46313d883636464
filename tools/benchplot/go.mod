module github.com/gpucluster/terraform-provider-gpucluster/tools/benchplot

go 1.26.0

require golang.org/x/image v0.48.0
