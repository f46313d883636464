package nodeagent

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

// fieldManager owns what the agent writes: the nodes' registration, as kubelet would.
const fieldManager = "gpucluster-nodeagent"

// clientKube is Kube over client-go: typed Nodes, and add-ons applied server-side through the
// dynamic client with a discovery-backed REST mapper (what kubectl apply --server-side does).
type clientKube struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// NewKube connects to the API server of cfg.
func NewKube(cfg *rest.Config) (Kube, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clientKube{cs: cs, dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}, nil
}

// NewKubeFromFile connects to the API server of a kubeconfig file.
func NewKubeFromFile(path string) (Kube, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	return NewKube(cfg)
}

// RegisterNode creates the Node (or takes over one of the same name, as a re-registering
// kubelet does) and sets its capacity and addresses in its status.
func (k *clientKube) RegisterNode(ctx context.Context, node *corev1.Node) error {
	nodes := k.cs.CoreV1().Nodes()
	_, err := nodes.Create(ctx, node, metav1.CreateOptions{FieldManager: fieldManager})
	if apierrors.IsAlreadyExists(err) {
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := nodes.Get(ctx, node.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Labels = node.Labels
			if cur.Annotations == nil {
				cur.Annotations = map[string]string{}
			}
			maps.Copy(cur.Annotations, node.Annotations)
			cur.Spec.Taints = node.Spec.Taints
			_, err = nodes.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
			return err
		})
	}
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nodes.Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Capacity = node.Status.Capacity
		cur.Status.Allocatable = node.Status.Allocatable
		cur.Status.Addresses = node.Status.Addresses
		cur.Status.NodeInfo.Architecture = node.Status.NodeInfo.Architecture
		cur.Status.NodeInfo.OperatingSystem = node.Status.NodeInfo.OperatingSystem
		cur.Status.NodeInfo.KubeletVersion = node.Status.NodeInfo.KubeletVersion
		for _, c := range node.Status.Conditions {
			setCondition(&cur.Status, c)
		}
		_, err = nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
}

// setCondition replaces the condition of c's type, or adds it.
func setCondition(st *corev1.NodeStatus, c corev1.NodeCondition) {
	for i := range st.Conditions {
		if st.Conditions[i].Type == c.Type {
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

// DeleteNode deletes a Node; one already gone is fine.
func (k *clientKube) DeleteNode(ctx context.Context, name string) error {
	err := k.cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// kubeletConditions are the conditions the kubelet posts, which the node lifecycle controller
// turns Unknown when the kubelet stops posting.
var kubeletConditions = []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// SetKubeletRunning plays a kubelet that stops and starts with its instance. Stopping takes the
// node from kwok (the annotation no longer matches kwok's selector), so nothing renews its Lease
// or posts its status, and marks its conditions Unknown as the node lifecycle controller does
// once the grace period passes; the controller then taints it unreachable itself. Starting hands
// the node back to kwok, whose initialise stage makes it Ready again.
func (k *clientKube) SetKubeletRunning(ctx context.Context, name string, running bool) error {
	nodes := k.cs.CoreV1().Nodes()
	owner := "fake"
	if !running {
		owner = "stopped"
	}
	if err := k.setKwokOwner(ctx, name, owner); err != nil || running {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		for i := range cur.Status.Conditions {
			c := &cur.Status.Conditions[i]
			if !slices.Contains(kubeletConditions, c.Type) {
				continue // NetworkUnavailable is the CNI's, not the kubelet's
			}
			if c.Status != corev1.ConditionUnknown {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
		}
		_, err = nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
}

// setKwokOwner sets the node's KwokNodeAnnotation: "fake" hands it to kwok, any other value takes
// it from kwok (nothing renews its Lease or posts its status then).
func (k *clientKube) setKwokOwner(ctx context.Context, name, owner string) error {
	nodes := k.cs.CoreV1().Nodes()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[KwokNodeAnnotation] = owner
		_, err = nodes.Update(ctx, cur, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
}
