package bootstrap

import (
	"maps"
	"slices"
	"testing"
)

func TestNodeIdentity(t *testing.T) {
	tests := []struct {
		name   string
		id     NodeIdentity
		labels map[string]string
		taints []string
	}{
		{
			name: "GPU worker",
			id:   NodeIdentity{Role: RoleGPUWorker, Scenario: "ai_training", Pool: "train", GPU: true, GPUProduct: "H800", UserLabels: map[string]string{"example.org/team": "nlp"}},
			labels: map[string]string{NodeRoleLabel: "gpu-worker", ScenarioLabel: "ai_training", PoolLabel: "train",
				GPUPresentLabel: "true", GPUProductLabel: "H800", "example.org/team": "nlp"},
			taints: []string{"nvidia.com/gpu:NoSchedule"},
		},
		{
			name:   "worker role on a CPU type gets no GPU label or taint",
			id:     NodeIdentity{Role: RoleGPUWorker, Scenario: "ai_training", Pool: "cpu"},
			labels: map[string]string{NodeRoleLabel: "gpu-worker", ScenarioLabel: "ai_training", PoolLabel: "cpu"},
			taints: []string{},
		},
		{
			name:   "control plane never gets the GPU ones",
			id:     NodeIdentity{Role: RoleControlPlane, Scenario: "ai_training", Pool: "cp", GPU: true, GPUProduct: "H800"},
			labels: map[string]string{NodeRoleLabel: "control-plane", ScenarioLabel: "ai_training", PoolLabel: "cp"},
			taints: []string{},
		},
		{
			name: "a user taint on the GPU key replaces the default; user labels override",
			id: NodeIdentity{Role: RoleGPUWorker, GPU: true, UserLabels: map[string]string{GPUPresentLabel: "false"},
				UserTaints: []Taint{{Key: GPUTaintKey, Value: "shared", Effect: "PreferNoSchedule"}, {Key: "a/b", Effect: "NoExecute"}}},
			labels: map[string]string{NodeRoleLabel: "gpu-worker", GPUPresentLabel: "false"},
			taints: []string{"nvidia.com/gpu=shared:PreferNoSchedule", "a/b:NoExecute"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.id.Labels(); !maps.Equal(got, tt.labels) {
				t.Errorf("Labels() = %v, want %v", got, tt.labels)
			}
			var got []string
			for _, taint := range tt.id.Taints() {
				got = append(got, taint.String())
				if ParseTaint(taint.String()) != taint {
					t.Errorf("ParseTaint(%q) = %+v, want %+v", taint.String(), ParseTaint(taint.String()), taint)
				}
			}
			if !slices.Equal(got, tt.taints) && (len(got) != 0 || len(tt.taints) != 0) {
				t.Errorf("Taints() = %v, want %v", got, tt.taints)
			}
		})
	}
}
