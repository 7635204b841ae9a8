package podspec

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wai-dev/wai/host/backend"
)

// Session names the session a pod is built for.
type Session struct {
	Name string // required; backend.WorkspaceSpec's rules
	User string // optional
	Keep bool
}

// Mount points inside the pod.
const (
	WorkspacePath = "/workspace"
	TmpPath       = "/tmp"
	// ContainerName is the pod's one container; pods/exec names it.
	ContainerName = "sandbox"
	// logsHeadroom is added to the workspace size for the pod's
	// ephemeral-storage limit: the container's logs count against it, and
	// the workspace's own emptyDir limit must be what stops a write first.
	logsHeadroom = 256 << 20
)

// Builder builds the objects of sessions from one validated
// configuration. Build one with New; it is safe for concurrent use.
type Builder struct {
	s settings
}

// New validates cfg (defaults filled in) and returns its builder, or an
// ErrInvalid that names the key to fix.
func New(cfg Config) (*Builder, error) {
	s, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	return &Builder{s: s}, nil
}

// Parse decodes the backend's config table (as JSON, the way
// backend.Options carries it) strictly, an unknown key being ErrInvalid,
// and returns its builder.
func Parse(raw json.RawMessage) (*Builder, error) {
	var cfg Config
	if err := backend.DecodeConfig("kubernetes", raw, &cfg); err != nil {
		return nil, err
	}
	return New(cfg)
}

// Namespace is where the objects go.
func (b *Builder) Namespace() string { return b.s.Namespace }

// AgentCommand is the argv the backend runs through pods/exec to start the
// in-sandbox agent.
func (b *Builder) AgentCommand() []string { return []string{b.s.AgentPath} }

// Labels are the labels of sess's objects; a selector made of them finds
// the session's pod.
func (b *Builder) Labels(sess Session) map[string]string {
	keep := "false"
	if sess.Keep {
		keep = "true"
	}
	return map[string]string{
		LabelManaged: "true",
		LabelSession: labelValue(sess.Name),
		LabelUser:    labelValue(sess.User),
		LabelKeep:    keep,
		LabelPod:     PodName(b.s.NamePrefix, sess.User, sess.Name),
	}
}

// Pod returns the pod that runs sess.
func (b *Builder) Pod(sess Session) (*corev1.Pod, error) {
	if err := (backend.WorkspaceSpec{Session: sess.Name, User: sess.User}).Validate(); err != nil {
		return nil, err
	}
	s := &b.s
	name := PodName(s.NamePrefix, sess.User, sess.Name)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   s.Namespace,
			Labels:      b.Labels(sess),
			Annotations: map[string]string{AnnotationSession: sess.Name, AnnotationUser: sess.User},
		},
		Spec: corev1.PodSpec{
			Containers:                   []corev1.Container{b.container()},
			Volumes:                      b.volumes(),
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: new(false),
			EnableServiceLinks:           new(false),
			HostNetwork:                  false,
			HostPID:                      false,
			HostIPC:                      false,
			ShareProcessNamespace:        new(false),
			HostUsers:                    nil, // user namespaces: see docs/KUBERNETES.md
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser:      new(s.uid),
				RunAsGroup:     new(s.gid),
				RunAsNonRoot:   new(true),
				FSGroup:        new(s.gid),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			TerminationGracePeriodSeconds: new(ceilSeconds(time.Duration(s.KillGrace))),
		},
	}
	if s.RuntimeClass != "" {
		pod.Spec.RuntimeClassName = new(s.RuntimeClass)
	}
	if s.MaxUptime > 0 {
		pod.Spec.ActiveDeadlineSeconds = new(ceilSeconds(time.Duration(s.MaxUptime)))
	}
	return pod, nil
}

func (b *Builder) container() corev1.Container {
	s := &b.s
	limits := corev1.ResourceList{
		corev1.ResourceMemory:           s.memory,
		corev1.ResourceCPU:              s.cpus,
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(s.wsSize.Value()+logsHeadroom, resource.BinarySI),
	}
	env := []corev1.EnvVar{{Name: "HOME", Value: WorkspacePath}, {Name: "TMPDIR", Value: TmpPath}}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, corev1.EnvVar{Name: k, Value: s.Env[k]})
	}
	mounts := []corev1.VolumeMount{
		{Name: "workspace", MountPath: WorkspacePath},
		{Name: "tmp", MountPath: TmpPath},
	}
	if s.AgentImage != "" {
		mounts = append(mounts, corev1.VolumeMount{Name: "agent", MountPath: agentMount, ReadOnly: true})
	}
	return corev1.Container{
		Name:            ContainerName,
		Image:           s.Image,
		ImagePullPolicy: corev1.PullPolicy(s.ImagePullPolicy),
		Command:         slices.Clone(s.Command),
		WorkingDir:      WorkspacePath,
		Env:             env,
		VolumeMounts:    mounts,
		// Requests equal limits: the pod is in the Guaranteed QoS class,
		// last to be evicted, and gets what it was promised.
		Resources: corev1.ResourceRequirements{Limits: limits, Requests: limits.DeepCopy()},
		SecurityContext: &corev1.SecurityContext{
			RunAsUser:                new(s.uid),
			RunAsGroup:               new(s.gid),
			RunAsNonRoot:             new(true),
			Privileged:               new(false),
			AllowPrivilegeEscalation: new(false),
			ReadOnlyRootFilesystem:   new(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			ProcMount:                new(corev1.DefaultProcMount),
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
}

func (b *Builder) volumes() []corev1.Volume {
	s := &b.s
	ws := corev1.Volume{Name: "workspace"}
	if s.WorkspaceStorageClass == "" {
		ws.EmptyDir = &corev1.EmptyDirVolumeSource{SizeLimit: new(s.wsSize.DeepCopy())}
	} else {
		ws.Ephemeral = &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{
			// The claim is owned by the pod and deleted with it; its labels
			// stay free of the session so the spec is the same for all.
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{LabelManaged: "true"}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: new(s.WorkspaceStorageClass),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: s.wsSize.DeepCopy()}},
			},
		}}
	}
	vols := []corev1.Volume{ws, {Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
		Medium: corev1.StorageMediumMemory, SizeLimit: new(s.tmpfs.DeepCopy()),
	}}}}
	if s.AgentImage != "" {
		vols = append(vols, corev1.Volume{Name: "agent", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{
			Reference: s.AgentImage, PullPolicy: corev1.PullPolicy(s.ImagePullPolicy),
		}}})
	}
	return vols
}

// ceilSeconds rounds d up to whole seconds, the unit Kubernetes counts a
// pod's deadlines in (a zero stays zero).
func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
