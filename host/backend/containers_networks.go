package backend

import (
	"context"
	"time"
)

// ContainerNetworks is implemented by backends whose managed containers
// can share networks an agent creates: containers on one reach each other
// by name. A network belongs to one user and was made by one of that
// user's sessions, like a container (ContainerOwner); another user's
// networks are ErrNotFound. A network is internal (no route out) unless
// the backend's configuration allows egress and the request asks for it.
type ContainerNetworks interface {
	// CreateNetwork creates a network; a name in use is ErrExist, egress
	// the configuration does not allow is ErrPermission.
	CreateNetwork(ctx context.Context, spec NetworkSpec) (NetworkInfo, error)
	// ListNetworks lists the owner's networks (of every session of the
	// user when owner.Session is empty), sorted by name.
	ListNetworks(ctx context.Context, owner ContainerOwner) ([]NetworkInfo, error)
	// DestroyNetwork removes one network. A network containers still use
	// is ErrUnavailable naming them: destroy them first.
	DestroyNetwork(ctx context.Context, ref ContainerRef) (NetworkInfo, error)
	// DestroyNetworks removes every network ListNetworks(owner) lists, or
	// only the non-persistent ones with keepPersistent (what a closing
	// session does after its containers). Failures are joined.
	DestroyNetworks(ctx context.Context, owner ContainerOwner, keepPersistent bool) ([]NetworkInfo, error)
	// ReadHostFile reads a small file for the kernel (a compose file): a
	// relative path is in the owner's session workspace, an absolute one
	// must lie under the backend's allowed host roots. It returns the
	// data and the resolved path.
	ReadHostFile(ctx context.Context, owner ContainerOwner, path string, maxBytes int64) ([]byte, string, error)
}

// NetworkSpec is a network to create.
type NetworkSpec struct {
	Owner ContainerOwner
	Name  string
	// Egress asks for a route out; without it the network is internal.
	Egress     bool
	Persistent bool
	// Project is the compose project the network was made for ("" for
	// none).
	Project string
}

// NetworkInfo describes a managed network.
type NetworkInfo struct {
	Name       string    `json:"name"`
	ID         string    `json:"id"`
	Session    string    `json:"session"`
	User       string    `json:"user,omitempty"`
	Created    time.Time `json:"created"`
	Internal   bool      `json:"internal"`
	Persistent bool      `json:"persistent"`
	Project    string    `json:"project,omitempty"`
	Subnets    []string  `json:"subnets,omitempty"`
	// Containers are the managed containers attached to it (set by
	// ListNetworks and DestroyNetwork's refusal).
	Containers []string `json:"containers,omitempty"`
}

// ManagedNetworkLister is implemented by backends with ContainerNetworks,
// for wai ps: every user's managed networks (the kernel filters by user).
type ManagedNetworkLister interface {
	ListManagedNetworks(ctx context.Context) ([]NetworkInfo, error)
}
