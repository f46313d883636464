package manifests

import (
	_ "embed"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PoolAllReduceName names the cross-node all-reduce validation: its ConfigMap, headless Service
// and Indexed Job. Pod i is reachable as PoolAllReduceName-i.PoolAllReduceName.
const PoolAllReduceName = "nccl-all-reduce-pool"

// PoolAllReducePort is the torchrun rendezvous (TCPStore) port on rank pod 0.
const PoolAllReducePort = 29500

// AllReduceScript is the bandwidth script torchrun runs in every pod of the cross-node
// validation; it reads its settings from the environment (see its docstring).
//
//go:embed all_reduce.py
var AllReduceScript string

// poolAllReduce validates the fabric between the pool's nodes: one all-reduce over every GPU of
// every node, which the per-node nccl-tests job cannot show.
//
// Launcher: torchrun with torch.distributed's NCCL backend, not nccl-tests' all_reduce_perf under
// mpirun. Multi-node all_reduce_perf needs an MPI launcher: either the MPI Operator's MPIJob (a
// custom resource outside k8s.io/api) or mpirun in pod 0 reaching the others over SSH, which
// means an sshd in every pod, a generated key pair in a Secret and a hostfile — more moving parts
// than the thing under test. torchrun needs only a reachable rank-0 address: an Indexed Job gives
// every pod its rank (JOB_COMPLETION_INDEX) and, with subdomain set to a headless Service, a
// stable DNS name, so pod 0 is the master by name. The collective is still NCCL's all-reduce
// over the same transports, and the script reports algbw/busbw by nccl-tests' formulas.
//
// hostNetwork: true. With eRDMA, NCCL's IB transport uses the eRDMA device of the node's primary
// ENI and NCCL_SOCKET_IFNAME=eth0 (netplan) names that ENI; in a pod network namespace eth0 is
// the CNI's veth instead, and the overlay is not the fabric this job is meant to measure. Without
// eRDMA, NCCL's TCP sockets then also measure the node network rather than the CNI. dnsPolicy
// ClusterFirstWithHostNet keeps the Service's DNS names resolvable. When NCCL's IB transport is
// on (NCCL_IB_DISABLE=0) the container is privileged: the cluster has no RDMA device plugin, so
// that is how the pod gets /dev/infiniband and the locked memory (IPC_LOCK) verbs registration
// needs; NCCL_NET=IB then makes NCCL fail instead of silently falling back to TCP, which would
// pass a broken fabric.
func poolAllReduce(o Options) []object {
	name := PoolAllReduceName
	labels := map[string]string{ReplicaGroupLabel: name, "app.kubernetes.io/name": name}
	script := &corev1.ConfigMap{TypeMeta: tm("v1", "ConfigMap"), ObjectMeta: meta(name, o.WorkloadNamespace, nil),
		Data: map[string]string{"all_reduce.py": AllReduceScript}}
	// Headless, publishing pods before they are ready: the ranks resolve each other while they
	// start, and they have no readiness probe to wait for.
	svc := &corev1.Service{
		TypeMeta: tm("v1", "Service"), ObjectMeta: meta(name, o.WorkloadNamespace, nil),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone, Selector: labels, PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{Name: "rendezvous", Port: PoolAllReducePort, TargetPort: intstr.FromInt32(PoolAllReducePort)}},
		},
	}
	master := fmt.Sprintf("%s-0.%s", name, name)
	run := fmt.Sprintf(`set -eu
# Pod 0's DNS record appears once it has an IP; wait for it (every pod, pod 0 included, connects to it).
# The ranks' images may finish pulling minutes apart, hence 30 minutes here and for torchrun's
# static rendezvous (default 10).
deadline=$(( $(date +%%s) + 1800 ))
until python3 -c 'import socket, sys; socket.getaddrinfo(sys.argv[1], None)' "$MASTER_ADDR" 2>/dev/null; do
  if [ "$(date +%%s)" -ge "$deadline" ]; then echo "rank 0 ($MASTER_ADDR) not resolvable after 1800 s" >&2; exit 1; fi
  sleep 2
done
echo "node $NODE_NAME: rank pod $JOB_COMPLETION_INDEX of %d, master $MASTER_ADDR"
exec torchrun --nnodes=%d --nproc-per-node=%d --node-rank="$JOB_COMPLETION_INDEX" \
  --master-addr="$MASTER_ADDR" --master-port=%d --rdzv-conf=timeout=1800 --max-restarts=0 /opt/all-reduce/all_reduce.py
`, o.Nodes, o.Nodes, o.GPUsPerNode, PoolAllReducePort)
	env := ncclEnv(o)
	for _, e := range []corev1.EnvVar{{Name: "NCCL_DEBUG", Value: "INFO"}, {Name: "NCCL_DEBUG_SUBSYS", Value: "INIT,NET"}} {
		if _, set := o.NCCLEnv[e.Name]; !set {
			env = append(env, e)
		}
	}
	env = append(env, rdmaEnv(o)...)
	env = append(env,
		corev1.EnvVar{Name: "MASTER_ADDR", Value: master},
		corev1.EnvVar{Name: "NODES", Value: fmt.Sprint(o.Nodes)},
		corev1.EnvVar{Name: "MIN_BUS_BANDWIDTH_GBS", Value: fmt.Sprint(o.MinCrossNodeBusBandwidthGBs)},
		corev1.EnvVar{Name: "MIN_BYTES", Value: "1048576"}, corev1.EnvVar{Name: "MAX_BYTES", Value: "1073741824"},
		corev1.EnvVar{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
	)
	sc := rdmaSecurityContext(o)
	job := &batchv1.Job{
		TypeMeta: tm("batch/v1", "Job"), ObjectMeta: meta(name, o.WorkloadNamespace, nil),
		Spec: batchv1.JobSpec{
			CompletionMode: ptr(batchv1.IndexedCompletion),
			Completions:    ptr(int32(o.Nodes)), Parallelism: ptr(int32(o.Nodes)),
			// One collective: a rank that fails leaves the others nothing to talk to, so the
			// first failure fails the Job (which stops the remaining pods) instead of retrying.
			BackoffLimit: ptr(int32(0)), ActiveDeadlineSeconds: ptr(int64(3600)),
			TTLSecondsAfterFinished: ptr(int32(86400)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Subdomain:     name,
					HostNetwork:   true,
					DNSPolicy:     corev1.DNSClusterFirstWithHostNet,
					RestartPolicy: corev1.RestartPolicyNever,
					NodeSelector:  gpuNodeSelector(),
					Tolerations:   []corev1.Toleration{gpuToleration()},
					Affinity:      antiAffinity(name),
					Containers: []corev1.Container{{
						Name: "all-reduce", Image: o.Images.PyTorch,
						Command: []string{"/bin/bash", "-c", run},
						Env:     env,
						// hostNetwork defaults hostPort to containerPort; say so, so a server-side apply sees no drift.
						Ports:           []corev1.ContainerPort{{Name: "rendezvous", ContainerPort: PoolAllReducePort, HostPort: PoolAllReducePort}},
						Resources:       gpuLimits(o.GPUsPerNode),
						SecurityContext: sc,
						VolumeMounts: []corev1.VolumeMount{
							{Name: "script", MountPath: "/opt/all-reduce", ReadOnly: true},
							{Name: "dshm", MountPath: "/dev/shm"},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "script", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
						{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
					},
				},
			},
		},
	}
	return []object{script, svc, job}
}

// RenderPoolAllReduce is the cross-node all-reduce validation alone (ConfigMap, headless
// Service, Indexed Job), also part of Render's output, for applying on its own.
func RenderPoolAllReduce(o Options) ([]Document, error) {
	o, _, err := withDefaults(o)
	if err != nil {
		return nil, err
	}
	return documents(poolAllReduce(o))
}

// usesRDMA reports whether the NCCL environment sends collectives over eRDMA (IB verbs).
func usesRDMA(o Options) bool { return o.NCCLEnv["NCCL_IB_DISABLE"] == "0" }

// rdmaEnv is what a pod adds to the NCCL environment when it uses eRDMA: NCCL_NET=IB, so a broken
// fabric fails the job instead of NCCL quietly falling back to TCP (unless the user set NCCL_NET).
func rdmaEnv(o Options) []corev1.EnvVar {
	if _, set := o.NCCLEnv["NCCL_NET"]; usesRDMA(o) && !set {
		return []corev1.EnvVar{{Name: "NCCL_NET", Value: "IB"}}
	}
	return nil
}

// rdmaSecurityContext gives a pod that uses eRDMA the verbs devices (/dev/infiniband) and locked
// memory: privileged, because the bootstrap installs no RDMA device plugin. Nil without eRDMA.
func rdmaSecurityContext(o Options) *corev1.SecurityContext {
	if !usesRDMA(o) {
		return nil
	}
	return &corev1.SecurityContext{Privileged: ptr(true)}
}
