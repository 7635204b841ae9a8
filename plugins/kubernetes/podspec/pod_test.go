package podspec

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/wai-dev/wai/host/backend"
)

func mustNew(t *testing.T, cfg Config) *Builder {
	t.Helper()
	b, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return b
}

func mustPod(t *testing.T, b *Builder, sess Session) *corev1.Pod {
	t.Helper()
	pod, err := b.Pod(sess)
	if err != nil {
		t.Fatalf("Pod(%+v): %v", sess, err)
	}
	return pod
}

// assertHardened checks every field the podman backend's hardening has a
// counterpart for; no configuration may change any of them.
func assertHardened(t *testing.T, pod *corev1.Pod, uid, gid int64) {
	t.Helper()
	spec := pod.Spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken is not false: the sandbox could talk to the API server")
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Errorf("host namespaces shared: network %v, pid %v, ipc %v", spec.HostNetwork, spec.HostPID, spec.HostIPC)
	}
	if spec.ShareProcessNamespace == nil || *spec.ShareProcessNamespace {
		t.Error("shareProcessNamespace is not false")
	}
	if spec.EnableServiceLinks == nil || *spec.EnableServiceLinks {
		t.Error("enableServiceLinks is not false: the cluster's services would be listed in the environment")
	}
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never", spec.RestartPolicy)
	}
	if spec.ServiceAccountName != "" || len(spec.ImagePullSecrets) > 0 || len(spec.InitContainers) > 0 || len(spec.EphemeralContainers) > 0 {
		t.Error("the pod has a service account, pull secrets, init or ephemeral containers it was not meant to")
	}
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser != uid || psc.RunAsGroup == nil || *psc.RunAsGroup != gid ||
		psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.FSGroup == nil || *psc.FSGroup != gid {
		t.Errorf("pod securityContext %+v: want runAsUser %d, runAsGroup and fsGroup %d, runAsNonRoot", psc, uid, gid)
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("pod seccomp profile is not RuntimeDefault")
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("container has no securityContext")
	case sc.RunAsUser == nil || *sc.RunAsUser != uid || sc.RunAsGroup == nil || *sc.RunAsGroup != gid:
		t.Errorf("container runs as %v:%v, want %d:%d", sc.RunAsUser, sc.RunAsGroup, uid, gid)
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Error("container runAsNonRoot is not true")
	case sc.Privileged == nil || *sc.Privileged:
		t.Error("container privileged is not false")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("container allowPrivilegeEscalation is not false")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("container readOnlyRootFilesystem is not true")
	case sc.Capabilities == nil || len(sc.Capabilities.Add) > 0 || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL":
		t.Errorf("container capabilities %+v, want drop [ALL] and add nothing", sc.Capabilities)
	case sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("container seccomp profile is not RuntimeDefault")
	case sc.ProcMount == nil || *sc.ProcMount != corev1.DefaultProcMount:
		t.Error("container procMount is not Default (masked /proc)")
	}
	if len(c.Ports) > 0 || c.Stdin || c.TTY {
		t.Errorf("container exposes ports %v or holds stdin/tty open", c.Ports)
	}
	// Requests equal limits, and every resource is limited.
	for _, r := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceCPU, corev1.ResourceEphemeralStorage} {
		lim, ok := c.Resources.Limits[r]
		req := c.Resources.Requests[r]
		if !ok || lim.Sign() <= 0 || lim.Cmp(req) != 0 {
			t.Errorf("resource %s: limit %v, request %v; want a positive limit equal to the request", r, lim.String(), req.String())
		}
	}
	// The only writable places are the size-limited volumes.
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			t.Errorf("mount %s has no volume", m.Name)
			continue
		}
		switch {
		case v.HostPath != nil:
			t.Errorf("volume %s is a hostPath", v.Name)
		case v.EmptyDir != nil && (v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.Sign() <= 0):
			t.Errorf("emptyDir %s has no size limit", v.Name)
		case v.Image != nil && !m.ReadOnly:
			t.Errorf("image volume %s is mounted writable", v.Name)
		case v.EmptyDir == nil && v.Image == nil && v.Ephemeral == nil:
			t.Errorf("volume %s is of an unexpected kind: %+v", v.Name, v.VolumeSource)
		}
	}
}

func TestDefaultPod(t *testing.T) {
	b := mustNew(t, Config{})
	pod := mustPod(t, b, Session{Name: "s1"})
	assertHardened(t, pod, 65534, 65534)
	if pod.Namespace != "wai" || pod.Spec.RuntimeClassName != nil || pod.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("namespace %q, runtimeClass %v, activeDeadline %v: want wai, none, none", pod.Namespace, pod.Spec.RuntimeClassName, pod.Spec.ActiveDeadlineSeconds)
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || *g != 1 {
		t.Errorf("terminationGracePeriodSeconds %v, want 1", g)
	}
	c := pod.Spec.Containers[0]
	if c.Image != DefaultImage || c.ImagePullPolicy != corev1.PullIfNotPresent || strings.Join(c.Command, " ") != "sleep infinity" || c.WorkingDir != WorkspacePath {
		t.Errorf("container image %q pull %q command %q dir %q", c.Image, c.ImagePullPolicy, c.Command, c.WorkingDir)
	}
	wantRes := map[corev1.ResourceName]string{corev1.ResourceMemory: "1Gi", corev1.ResourceCPU: "1", corev1.ResourceEphemeralStorage: "1280Mi"}
	for r, want := range wantRes {
		if got := c.Resources.Limits[r]; got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("limit %s = %s, want %s", r, got.String(), want)
		}
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v
	}
	if ws := vols["workspace"].EmptyDir; ws == nil || ws.Medium != "" || ws.SizeLimit.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("workspace volume %+v, want a 1Gi emptyDir on disk", vols["workspace"])
	}
	if tmp := vols["tmp"].EmptyDir; tmp == nil || tmp.Medium != corev1.StorageMediumMemory || tmp.SizeLimit.Cmp(resource.MustParse("64Mi")) != 0 {
		t.Errorf("tmp volume %+v, want a 64Mi memory emptyDir", vols["tmp"])
	}
	if _, ok := vols["agent"]; ok || len(pod.Spec.Volumes) != 2 {
		t.Errorf("volumes %v, want workspace and tmp only", pod.Spec.Volumes)
	}
	if got := strings.Join(b.AgentCommand(), " "); got != "/usr/local/bin/wai-agent" {
		t.Errorf("agent command %q", got)
	}
	wantLabels := map[string]string{LabelManaged: "true", LabelSession: "s1", LabelUser: "", LabelKeep: "false", LabelPod: pod.Name}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], v)
		}
	}
	if pod.Annotations[AnnotationSession] != "s1" {
		t.Errorf("annotations %v", pod.Annotations)
	}
}

func TestConfiguredPod(t *testing.T) {
	b := mustNew(t, Config{
		Namespace: "agents", Image: "registry.example/sbx:1", ImagePullPolicy: "Always", NamePrefix: "sbx",
		RuntimeClass: "gvisor", User: "1000:2000", Memory: "2Gi", CPUs: 1.5,
		WorkspaceSize: "5Gi", WorkspaceStorageClass: "fast-ssd", TmpfsSize: "128Mi",
		AgentImage: "registry.example/wai-agent:1", MaxUptime: backend.Duration(3600e9), KillGrace: backend.Duration(2500e6),
		Command: []string{"/opt/wai/wai-agent", "idle"}, Env: map[string]string{"PIP_INDEX_URL": "https://pypi.example/simple", "A": "1"},
	})
	pod := mustPod(t, b, Session{Name: "Build.42", User: "ada", Keep: true})
	assertHardened(t, pod, 1000, 2000)
	s := pod.Spec
	if pod.Namespace != "agents" || !strings.HasPrefix(pod.Name, "sbx-build-42-") {
		t.Errorf("pod %s/%s", pod.Namespace, pod.Name)
	}
	if s.RuntimeClassName == nil || *s.RuntimeClassName != "gvisor" {
		t.Errorf("runtimeClassName %v, want gvisor", s.RuntimeClassName)
	}
	if s.ActiveDeadlineSeconds == nil || *s.ActiveDeadlineSeconds != 3600 || *s.TerminationGracePeriodSeconds != 3 {
		t.Errorf("activeDeadlineSeconds %v, grace %v; want 3600 and 3 (rounded up)", s.ActiveDeadlineSeconds, *s.TerminationGracePeriodSeconds)
	}
	c := s.Containers[0]
	for r, want := range map[corev1.ResourceName]string{corev1.ResourceMemory: "2Gi", corev1.ResourceCPU: "1500m", corev1.ResourceEphemeralStorage: "5376Mi"} {
		if got := c.Resources.Limits[r]; got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("limit %s = %s, want %s", r, got.String(), want)
		}
	}
	if c.Image != "registry.example/sbx:1" || c.ImagePullPolicy != corev1.PullAlways || strings.Join(c.Command, " ") != "/opt/wai/wai-agent idle" {
		t.Errorf("container %q %q %q", c.Image, c.ImagePullPolicy, c.Command)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["PIP_INDEX_URL"] != "https://pypi.example/simple" || env["A"] != "1" || env["HOME"] != WorkspacePath {
		t.Errorf("env %v", c.Env)
	}
	var ws, agent *corev1.Volume
	for i, v := range s.Volumes {
		switch v.Name {
		case "workspace":
			ws = &s.Volumes[i]
		case "agent":
			agent = &s.Volumes[i]
		}
	}
	if ws == nil || ws.Ephemeral == nil || *ws.Ephemeral.VolumeClaimTemplate.Spec.StorageClassName != "fast-ssd" ||
		ws.Ephemeral.VolumeClaimTemplate.Spec.Resources.Requests.Storage().Cmp(resource.MustParse("5Gi")) != 0 {
		t.Errorf("workspace volume %+v, want a 5Gi ephemeral volume of class fast-ssd", ws)
	}
	if agent == nil || agent.Image == nil || agent.Image.Reference != "registry.example/wai-agent:1" {
		t.Errorf("agent volume %+v", agent)
	}
	if got := strings.Join(b.AgentCommand(), " "); got != "/opt/wai/wai-agent" {
		t.Errorf("agent command %q", got)
	}
	if pod.Labels[LabelUser] != "ada" || pod.Labels[LabelKeep] != "true" || pod.Labels[LabelSession] != "Build.42" {
		t.Errorf("labels %v", pod.Labels)
	}
}

func TestInvalidSessionRejected(t *testing.T) {
	b := mustNew(t, Config{})
	for _, sess := range []Session{{}, {Name: "a/b"}, {Name: ".."}, {Name: "s", User: "Root!"}} {
		if _, err := b.Pod(sess); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("Pod(%+v) = %v, want ErrInvalid", sess, err)
		}
	}
}

// Pod names are DNS-1123 labels, label keys and values are valid, and
// distinct (user, session) pairs never share a pod.
func TestNamesAndLabelsAreValid(t *testing.T) {
	long := strings.Repeat("x", 64)
	sessions := []string{"s", "S", "a.b", "a_b", "a-b", "-", "_", ".x", "x.", "..a", "0", long, strings.Repeat("A.", 32), "UPPER_case-1.2"}
	users := []string{"", "ada", "a-b_c", strings.Repeat("u", backend.MaxUserName)}
	seen := map[string]string{}
	for _, prefix := range []string{"wai", "a", strings.Repeat("p", maxNamePrefix)} {
		b := mustNew(t, Config{NamePrefix: prefix})
		for _, u := range users {
			for _, s := range sessions {
				pod := mustPod(t, b, Session{Name: s, User: u})
				if errs := validation.IsDNS1123Label(pod.Name); len(errs) > 0 {
					t.Errorf("pod name %q (user %q, session %q): %v", pod.Name, u, s, errs)
				}
				key := prefix + "\x00" + u + "\x00" + s
				if other, dup := seen[prefix+"/"+pod.Name]; dup {
					t.Errorf("pod name %q serves both %q and %q", pod.Name, other, key)
				}
				seen[prefix+"/"+pod.Name] = key
				for k, v := range pod.Labels {
					if errs := content.IsLabelKey(k); len(errs) > 0 {
						t.Errorf("label key %q: %v", k, errs)
					}
					if errs := content.IsLabelValue(v); len(errs) > 0 {
						t.Errorf("label %s=%q (user %q, session %q): %v", k, v, u, s, errs)
					}
				}
				if pod.Annotations[AnnotationSession] != s || pod.Annotations[AnnotationUser] != u {
					t.Errorf("annotations %v do not keep the exact names %q, %q", pod.Annotations, u, s)
				}
				again := mustPod(t, b, Session{Name: s, User: u})
				if again.Name != pod.Name || again.Labels[LabelSession] != pod.Labels[LabelSession] {
					t.Errorf("names are not deterministic: %q then %q", pod.Name, again.Name)
				}
			}
		}
	}
}

// The pod spec does not depend on the session, only the metadata does:
// the same spec can be an agent-sandbox SandboxTemplate's podTemplate, and
// a warm pool's pods can be made before any session exists
// (docs/KUBERNETES.md).
func TestSpecIsTheSameForEverySession(t *testing.T) {
	for _, cfg := range []Config{{}, {Network: "egress", AgentImage: "r/a:1", WorkspaceStorageClass: "ssd", RuntimeClass: "gvisor"}} {
		b := mustNew(t, cfg)
		a := mustPod(t, b, Session{Name: "one"})
		z := mustPod(t, b, Session{Name: "Two.2", User: "ada", Keep: true})
		if !equality.Semantic.DeepEqual(a.Spec, z.Spec) {
			t.Errorf("config %+v: the pod spec differs between two sessions", cfg)
		}
		if a.Name == z.Name || a.Labels[LabelSession] == z.Labels[LabelSession] {
			t.Errorf("two sessions share a name or label: %q, %v", a.Name, a.Labels)
		}
	}
}
