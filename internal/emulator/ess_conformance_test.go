package emulator

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/requests"
	"github.com/aliyun/alibaba-cloud-sdk-go/sdk/responses"
	"github.com/aliyun/alibaba-cloud-sdk-go/services/ess"
)

// The generated conformance tables read the alibabacloud-go models, which have none for ESS
// 2014-08-28 (the Go module cache holds the aliyun SDK's services/ess, whose structs the
// emulator builds its answers from). TestESSConformance holds every served ESS action to that
// SDK instead: the request is the SDK's own (its Create<Action>Request, so the wire names are
// the SDK's), the call succeeds, and the answer decodes into the SDK's response struct with no
// field the struct lacks.
func TestESSConformance(t *testing.T) {
	e := newEnv(t, Config{BootTime: 50 * time.Millisecond})
	f := e.essGroup(0, 10, []string{"ecs.gn7i-c8g1.2xlarge"}, nil)
	c := e.essClient()
	settle := func() { e.advance(time.Second) }
	var ruleID, ruleAri, instance string
	steps := []struct {
		action string
		call   func() (responses.AcsResponse, any, error)
	}{
		{"DescribeScalingGroups", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDescribeScalingGroupsRequest()
			r.RegionId, r.ScalingGroupId = testRegion, &[]string{f.group}
			out, err := c.DescribeScalingGroups(r)
			return out, out, err
		}},
		{"ModifyScalingGroup", func() (responses.AcsResponse, any, error) {
			r := ess.CreateModifyScalingGroupRequest()
			r.RegionId, r.ScalingGroupId, r.MaxSize = testRegion, f.group, requests.NewInteger(12)
			out, err := c.ModifyScalingGroup(r)
			return out, out, err
		}},
		{"DescribeScalingConfigurations", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDescribeScalingConfigurationsRequest()
			r.RegionId, r.ScalingGroupId, r.ScalingConfigurationId = testRegion, f.group, &[]string{f.config}
			out, err := c.DescribeScalingConfigurations(r)
			return out, out, err
		}},
		{"ModifyScalingConfiguration", func() (responses.AcsResponse, any, error) {
			r := ess.CreateModifyScalingConfigurationRequest()
			r.RegionId, r.ScalingConfigurationId, r.UserData = testRegion, f.config, "IyEvYmluL3NoCg=="
			out, err := c.ModifyScalingConfiguration(r)
			return out, out, err
		}},
		{"CreateScalingRule", func() (responses.AcsResponse, any, error) {
			r := ess.CreateCreateScalingRuleRequest()
			r.RegionId, r.ScalingGroupId, r.AdjustmentType, r.AdjustmentValue = testRegion, f.group, "TotalCapacity", requests.NewInteger(2)
			out, err := c.CreateScalingRule(r)
			if err == nil {
				ruleID, ruleAri = out.ScalingRuleId, out.ScalingRuleAri
			}
			return out, out, err
		}},
		{"ModifyScalingRule", func() (responses.AcsResponse, any, error) {
			r := ess.CreateModifyScalingRuleRequest()
			r.RegionId, r.ScalingRuleId, r.AdjustmentValue = testRegion, ruleID, requests.NewInteger(3)
			out, err := c.ModifyScalingRule(r)
			return out, out, err
		}},
		{"DescribeScalingRules", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDescribeScalingRulesRequest()
			r.RegionId, r.ScalingGroupId = testRegion, f.group
			out, err := c.DescribeScalingRules(r)
			return out, out, err
		}},
		{"ExecuteScalingRule", func() (responses.AcsResponse, any, error) {
			r := ess.CreateExecuteScalingRuleRequest()
			r.RegionId, r.ScalingRuleAri = testRegion, ruleAri
			out, err := c.ExecuteScalingRule(r)
			settle()
			return out, out, err
		}},
		{"ScaleWithAdjustment", func() (responses.AcsResponse, any, error) {
			r := ess.CreateScaleWithAdjustmentRequest()
			r.RegionId, r.ScalingGroupId, r.AdjustmentType, r.AdjustmentValue = testRegion, f.group, "QuantityChangeInCapacity", requests.NewInteger(1)
			out, err := c.ScaleWithAdjustment(r)
			settle()
			return out, out, err
		}},
		{"DescribeLimitation", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDescribeLimitationRequest()
			r.RegionId = testRegion
			out, err := c.DescribeLimitation(r)
			return out, out, err
		}},
		{"DescribeScalingActivities", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDescribeScalingActivitiesRequest()
			r.RegionId, r.ScalingGroupId = testRegion, f.group
			out, err := c.DescribeScalingActivities(r)
			return out, out, err
		}},
		{"DescribeScalingInstances", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDescribeScalingInstancesRequest()
			r.RegionId, r.ScalingGroupId = testRegion, f.group
			out, err := c.DescribeScalingInstances(r)
			if err == nil && len(out.ScalingInstances.ScalingInstance) > 0 {
				instance = out.ScalingInstances.ScalingInstance[0].InstanceId
			}
			return out, out, err
		}},
		{"EnterStandby", func() (responses.AcsResponse, any, error) {
			r := ess.CreateEnterStandbyRequest()
			r.RegionId, r.ScalingGroupId, r.InstanceId = testRegion, f.group, &[]string{instance}
			out, err := c.EnterStandby(r)
			return out, out, err
		}},
		{"ExitStandby", func() (responses.AcsResponse, any, error) {
			r := ess.CreateExitStandbyRequest()
			r.RegionId, r.ScalingGroupId, r.InstanceId = testRegion, f.group, &[]string{instance}
			out, err := c.ExitStandby(r)
			return out, out, err
		}},
		{"SetInstanceHealth", func() (responses.AcsResponse, any, error) {
			r := ess.CreateSetInstanceHealthRequest()
			r.RegionId, r.InstanceId, r.HealthStatus = testRegion, instance, "Healthy"
			out, err := c.SetInstanceHealth(r)
			return out, out, err
		}},
		{"RemoveInstances", func() (responses.AcsResponse, any, error) {
			r := ess.CreateRemoveInstancesRequest()
			r.RegionId, r.ScalingGroupId, r.InstanceId = testRegion, f.group, &[]string{instance}
			out, err := c.RemoveInstances(r)
			return out, out, err
		}},
		{"TagResources", func() (responses.AcsResponse, any, error) {
			r := ess.CreateTagResourcesRequest()
			r.RegionId, r.ResourceType, r.ResourceId = testRegion, "scalinggroup", &[]string{f.group}
			r.Tag = &[]ess.TagResourcesTag{{Key: "conformance", Value: "yes"}}
			out, err := c.TagResources(r)
			return out, out, err
		}},
		{"ListTagResources", func() (responses.AcsResponse, any, error) {
			r := ess.CreateListTagResourcesRequest()
			r.RegionId, r.ResourceType, r.ResourceId = testRegion, "scalinggroup", &[]string{f.group}
			out, err := c.ListTagResources(r)
			return out, out, err
		}},
		{"UntagResources", func() (responses.AcsResponse, any, error) {
			r := ess.CreateUntagResourcesRequest()
			r.RegionId, r.ResourceType, r.ResourceId, r.TagKey = testRegion, "scalinggroup", &[]string{f.group}, &[]string{"conformance"}
			out, err := c.UntagResources(r)
			return out, out, err
		}},
		{"DeleteScalingRule", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDeleteScalingRuleRequest()
			r.RegionId, r.ScalingRuleId = testRegion, ruleID
			out, err := c.DeleteScalingRule(r)
			return out, out, err
		}},
		{"DisableScalingGroup", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDisableScalingGroupRequest()
			r.RegionId, r.ScalingGroupId = testRegion, f.group
			out, err := c.DisableScalingGroup(r)
			return out, out, err
		}},
		{"EnableScalingGroup", func() (responses.AcsResponse, any, error) {
			r := ess.CreateEnableScalingGroupRequest()
			r.RegionId, r.ScalingGroupId = testRegion, f.group
			out, err := c.EnableScalingGroup(r)
			return out, out, err
		}},
		{"CreateScalingConfiguration", func() (responses.AcsResponse, any, error) {
			r := ess.CreateCreateScalingConfigurationRequest()
			r.RegionId, r.ScalingGroupId, r.ImageId, r.SecurityGroupId = testRegion, f.group, "ubuntu_22_04_x64_20G_alibase_20240101.vhd", f.sgID
			r.InstanceTypes = &[]string{"ecs.gn6i-c4g1.xlarge"}
			out, err := c.CreateScalingConfiguration(r)
			if err == nil {
				f.config = out.ScalingConfigurationId
			}
			return out, out, err
		}},
		{"DeleteScalingConfiguration", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDeleteScalingConfigurationRequest()
			r.RegionId, r.ScalingConfigurationId = testRegion, f.config
			out, err := c.DeleteScalingConfiguration(r)
			return out, out, err
		}},
		{"CreateScalingGroup", func() (responses.AcsResponse, any, error) {
			r := ess.CreateCreateScalingGroupRequest()
			r.RegionId, r.MinSize, r.MaxSize, r.VSwitchIds = testRegion, "0", "1", &[]string{f.vswID}
			r.Tag = &[]ess.CreateScalingGroupTag{{Key: "conformance", Value: "yes"}}
			out, err := c.CreateScalingGroup(r)
			return out, out, err
		}},
		{"DeleteScalingGroup", func() (responses.AcsResponse, any, error) {
			r := ess.CreateDeleteScalingGroupRequest()
			r.RegionId, r.ScalingGroupId, r.ForceDelete = testRegion, f.group, requests.NewBoolean(true)
			out, err := c.DeleteScalingGroup(r)
			return out, out, err
		}},
	}
	checked := map[string]bool{}
	var mu sync.Mutex
	unpruned := map[string][]byte{}
	e.s.seeUnpruned = func(k string, body []byte) {
		mu.Lock()
		defer mu.Unlock()
		unpruned[k] = bytes.Clone(body)
	}
	for _, s := range steps {
		raw, typed, err := s.call()
		if err != nil {
			t.Fatalf("%s: %v", s.action, err)
		}
		key := versionESS + "/" + s.action
		checked[key] = true
		mu.Lock()
		before := unpruned[key]
		mu.Unlock()
		essHeldToShape(t, key, raw.GetHttpContentBytes(), before)
		model := reflect.New(reflect.TypeOf(typed).Elem()).Interface()
		dec := json.NewDecoder(bytes.NewReader(raw.GetHttpContentBytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(model); err != nil {
			t.Errorf("%s: the answer does not fit ess.%sResponse: %v\n%s", s.action, s.action, err, raw.GetHttpContentString())
		}
		t.Run(s.action, func(t *testing.T) { noNulls(t, decodeJSON(t, raw.GetHttpContentBytes())) })
	}
	var missing []string
	for _, key := range ServedActions() {
		if strings.HasPrefix(key, versionESS+"/") && !checked[key] {
			missing = append(missing, key)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("served ESS actions the conformance test does not call: %s", strings.Join(missing, ", "))
	}
}

// essHeldToShape holds one ESS answer to the vendor's per-action response shape
// (response_fields_ess_gen.go): the answer carries no field the shape lacks, and the emulator
// filled no value under such a field before pruning dropped it. The SDK struct the answer is
// built from merges the fields of several actions (its Tag has Key and Value for scaling
// configurations and TagKey, TagValue and Propagate for scaling groups), so decoding into it
// alone does not show an answer carrying another action's fields.
func essHeldToShape(t *testing.T, key string, answer, unpruned []byte) {
	t.Helper()
	tree := responseTrees[key]
	if tree == nil {
		t.Errorf("%s has no vendor response shape to hold its answer to", key)
		return
	}
	for _, extra := range extraShapeFields(decodeJSON(t, answer), tree, "") {
		t.Errorf("%s answers %s, which the vendor's response model lacks", key, extra)
	}
	if unpruned == nil {
		t.Errorf("%s: the answer was not seen before pruning", key)
		return
	}
	for _, path := range filledOutsideShape(decodeJSON(t, unpruned), tree, "") {
		t.Errorf("the emulator fills %s %s, which the vendor's response model lacks: pruning drops it", key, path)
	}
}
