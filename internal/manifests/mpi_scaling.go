package manifests

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Scaling-validation problem: the Lennard-Jones melt at 8x8x8 (16.4 million atoms), large enough
// that a pool's worth of GPUs still has work per rank, for 2000 steps.
const (
	scalingSize  = 8
	scalingSteps = 2000
)

// scaling validates molecular dynamics' parallel efficiency: the same LAMMPS input on the first
// worker's GPUs, then on every worker's, in one MPIJob (so Kueue admits both runs' nodes at
// once and the 1-node run does not wait for the N-node one). Strong scaling: efficiency =
// rate(N nodes) / (N x rate(1 node)), from LAMMPS's "Performance: ... timesteps/s" line. It
// reports against the scenario's 90% target and fails only below MinParallelEfficiencyPercent,
// like the all-reduce validation's bandwidth threshold.
func (j mpiJobContext) scaling() []object {
	name := ScalingJobName
	cm, vol, mount := inputConfigMap(name+"-input", j.namespace, "in.lj", LAMMPSInput)
	g, n := j.pool.GPUsPerNode, j.pool.Nodes
	one := j.mpirun(name, 1, g, "slot", nil, j.lammpsArgs(scalingSize, scalingSteps)...)
	all := j.mpirunAll(name, nil, j.lammpsArgs(scalingSize, scalingSteps)...)
	rate := `awk '/^Performance:/ { for (i = 2; i <= NF; i++) if ($i ~ /^timesteps\/s/) r = $(i-1) } END { if (r == "") exit 1; print r }'`
	script := fmt.Sprintf(`set -euo pipefail
echo "1 node (%[1]d ranks):"
%[2]s 2>&1 | tee /tmp/one.log
one=$(%[3]s /tmp/one.log)
`, g, shellJoin(one), rate)
	if n == 1 {
		script += fmt.Sprintf(`echo "parallel efficiency: one node (${one} timesteps/s), nothing to compare; the pool needs 2 or more nodes (target %d%%)"
`, ScalingTargetPercent())
	} else {
		script += fmt.Sprintf(`echo "%[1]d nodes (%[2]d ranks):"
%[3]s 2>&1 | tee /tmp/all.log
all=$(%[4]s /tmp/all.log)
awk -v one="$one" -v all="$all" -v n=%[1]d -v target=%[5]d -v min=%[6]g 'BEGIN {
  e = 100 * all / (n * one)
  printf "parallel efficiency %%.1f%%%% on %%d nodes vs 1 (target %%d%%%%): 1 node %%s timesteps/s, %%d nodes %%s timesteps/s\n", e, n, target, one, n, all
  if (min > 0 && e < min) { printf "FAIL: below the threshold %%g%%%%\n", min; exit 1 }
}'
`, n, n*g, shellJoin(all), rate, ScalingTargetPercent(), j.m.MinParallelEfficiencyPercent)
	}
	job := j.job(name, j.m.Images.LAMMPS, n, script, []corev1.Volume{vol}, []corev1.VolumeMount{mount})
	// A validation, not a workload: it is deleted a day after it ends and never retried.
	job.Spec.RunPolicy.ActiveDeadlineSeconds = ptr(int64(3600))
	return []object{cm, job}
}
