package podspec

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// NetworkPolicyName names the one policy that confines every wai pod of
// the namespace.
const NetworkPolicyName = "wai-sandbox"

// NetworkPolicy returns the policy that confines every pod labelled
// wai.managed in the namespace. It denies all ingress, always. With
// network "none" it denies all egress too; with "egress" it allows
// outbound traffic to public addresses and to the cluster's DNS (pods
// labelled k8s-app=kube-dns in kube-system), and never to private,
// link-local or loopback ranges, the cluster's own among them, nor to
// EgressDeny.
//
// A NetworkPolicy is enforced only by a network plugin that implements
// it (Calico, Cilium, ...): docs/KUBERNETES.md says what an operator must
// check.
func (b *Builder) NetworkPolicy() *networkingv1.NetworkPolicy {
	np := &networkingv1.NetworkPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      NetworkPolicyName,
			Namespace: b.s.Namespace,
			Labels:    map[string]string{LabelManaged: "true"},
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{LabelManaged: "true"}},
			// Both types listed with no ingress rule: nothing may connect
			// in; no egress rule (network "none"): nothing may go out.
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
	if b.s.Network == "egress" {
		np.Spec.Egress = b.egressRules()
	}
	return np
}

func (b *Builder) egressRules() []networkingv1.NetworkPolicyEgressRule {
	var v4, v6 []string
	for _, c := range b.s.egressDeny {
		if isV6(c) {
			v6 = append(v6, c)
		} else {
			v4 = append(v4, c)
		}
	}
	dns := func(p corev1.Protocol) networkingv1.NetworkPolicyPort {
		return networkingv1.NetworkPolicyPort{Protocol: new(p), Port: new(intstr.FromInt32(53))}
	}
	return []networkingv1.NetworkPolicyEgressRule{
		{To: []networkingv1.NetworkPolicyPeer{
			{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: v4}},
			{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: v6}},
		}},
		{
			To: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
				PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
			}},
			Ports: []networkingv1.NetworkPolicyPort{dns(corev1.ProtocolUDP), dns(corev1.ProtocolTCP)},
		},
	}
}

func isV6(cidr string) bool {
	for i := 0; i < len(cidr); i++ {
		if cidr[i] == ':' {
			return true
		}
	}
	return false
}
