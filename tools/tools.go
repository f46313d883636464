//go:build tools

// Package tools pins the modules the project builds with, so `go mod tidy` keeps them while the
// code that uses them is being written, and the tool versions live in go.mod like everything else.
package tools

import (
	_ "github.com/aliyun/alibaba-cloud-sdk-go/services/ecs"
	_ "github.com/aliyun/alibaba-cloud-sdk-go/services/nas"
	_ "github.com/aliyun/alibaba-cloud-sdk-go/services/sts"
	_ "github.com/aliyun/alibaba-cloud-sdk-go/services/vpc"
	_ "github.com/aliyun/alibabacloud-oss-go-sdk-v2/oss"
	_ "github.com/hashicorp/go-retryablehttp"
	_ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
	_ "github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	_ "github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	_ "github.com/hashicorp/terraform-plugin-framework/providerserver"
	_ "github.com/hashicorp/terraform-plugin-log/tflog"
	_ "github.com/hashicorp/terraform-plugin-testing/helper/resource"
	_ "golang.org/x/time/rate"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/api/autoscaling/v2"
	_ "k8s.io/api/batch/v1"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/api/rbac/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "sigs.k8s.io/yaml"
)
