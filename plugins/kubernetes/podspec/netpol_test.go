package podspec

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// selects reports whether the policy's pod selector matches the pod.
func selects(t *testing.T, np *networkingv1.NetworkPolicy, pod *corev1.Pod) bool {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	return np.Namespace == pod.Namespace && sel.Matches(labels.Set(pod.Labels))
}

func TestNetworkPolicyDeniesAllByDefault(t *testing.T) {
	b := mustNew(t, Config{})
	np := b.NetworkPolicy()
	if np.Namespace != "wai" || np.Name != NetworkPolicyName {
		t.Errorf("policy %s/%s", np.Namespace, np.Name)
	}
	types := np.Spec.PolicyTypes
	if !slices.Contains(types, networkingv1.PolicyTypeIngress) || !slices.Contains(types, networkingv1.PolicyTypeEgress) {
		t.Errorf("policy types %v: want Ingress and Egress, or the missing one is not restricted", types)
	}
	if len(np.Spec.Ingress) > 0 || len(np.Spec.Egress) > 0 {
		t.Errorf("rules ingress %v egress %v: want none (deny all)", np.Spec.Ingress, np.Spec.Egress)
	}
	// It confines every session's pod, and nothing that is not wai's.
	for _, sess := range []Session{{Name: "s1"}, {Name: "x.y", User: "ada", Keep: true}} {
		if pod := mustPod(t, b, sess); !selects(t, np, pod) {
			t.Errorf("the policy does not select the pod of %+v (labels %v)", sess, pod.Labels)
		}
	}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "wai", Labels: map[string]string{"app": "db"}}}
	if selects(t, np, other) {
		t.Error("the policy selects a pod wai did not make")
	}
}

func TestNetworkPolicyEgress(t *testing.T) {
	b := mustNew(t, Config{Network: "egress", EgressDeny: []string{"203.0.113.0/24", "2001:db8::/32"}})
	np := b.NetworkPolicy()
	if len(np.Spec.Ingress) > 0 || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("ingress is not denied: types %v, rules %v", np.Spec.PolicyTypes, np.Spec.Ingress)
	}
	if len(np.Spec.Egress) != 2 {
		t.Fatalf("egress rules %v, want the internet rule and the DNS rule", np.Spec.Egress)
	}
	except := map[string][]string{}
	for _, peer := range np.Spec.Egress[0].To {
		if peer.IPBlock == nil || peer.PodSelector != nil || peer.NamespaceSelector != nil {
			t.Fatalf("internet rule peer %+v, want an ipBlock only", peer)
		}
		except[peer.IPBlock.CIDR] = peer.IPBlock.Except
	}
	if len(np.Spec.Egress[0].Ports) > 0 {
		t.Errorf("internet rule limited to ports %v", np.Spec.Egress[0].Ports)
	}
	for _, c := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "203.0.113.0/24"} {
		if !slices.Contains(except["0.0.0.0/0"], c) {
			t.Errorf("0.0.0.0/0 does not except %s: %v", c, except["0.0.0.0/0"])
		}
	}
	for _, c := range []string{"fc00::/7", "fe80::/10", "::1/128", "2001:db8::/32"} {
		if !slices.Contains(except["::/0"], c) {
			t.Errorf("::/0 does not except %s: %v", c, except["::/0"])
		}
	}
	dns := np.Spec.Egress[1]
	if len(dns.To) != 1 || dns.To[0].PodSelector == nil || dns.To[0].PodSelector.MatchLabels["k8s-app"] != "kube-dns" ||
		dns.To[0].NamespaceSelector == nil || dns.To[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "kube-system" {
		t.Errorf("DNS rule peers %+v, want kube-dns in kube-system", dns.To)
	}
	var protos []corev1.Protocol
	for _, p := range dns.Ports {
		if p.Port == nil || p.Port.IntValue() != 53 {
			t.Errorf("DNS rule port %v, want 53", p.Port)
		}
		protos = append(protos, *p.Protocol)
	}
	if !slices.Contains(protos, corev1.ProtocolUDP) || !slices.Contains(protos, corev1.ProtocolTCP) {
		t.Errorf("DNS rule protocols %v, want UDP and TCP", protos)
	}
}
