// Package podspec translates a wai session and the kubernetes backend's
// configuration into the Kubernetes objects that would run it: a hardened
// Pod (the sandbox), and the NetworkPolicy that cuts it off from the
// network. It only builds objects; it talks to no cluster.
//
// Everything the podman backend enforces on a container has a field here
// (docs/KUBERNETES.md maps one to the other): a non-root user, a read-only
// root file system, no capabilities, no privilege escalation, seccomp
// RuntimeDefault, no service-account token, no host namespaces, resource
// requests equal to limits, a size-limited /workspace and /tmp, and
// optionally a RuntimeClass (gVisor, Kata) for a kernel of its own. The
// builder refuses a configuration that would weaken any of them.
package podspec
