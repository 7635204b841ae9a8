// Package podman is wai's container backend: one hardened Podman container
// per session, driven through the Podman REST API.
//
// Importing the package registers the backend as "podman". A session's
// container (<name_prefix>-<session>, labelled wai.managed=true and
// wai.session=<session>) is created on first use from the configured image
// (pulled when missing, with exponential backoff between failed pulls) and
// runs `sleep infinity` as user 65534:65534 with no network, 1 GiB of memory
// and no swap, one CPU, a pids limit, every capability dropped,
// no-new-privileges, a read-only root, an init process, explicit rlimits, a
// tmpfs /tmp and the session's workspace directory bind-mounted at
// /workspace as the only other writable mount. Commands run as exec sessions
// in it; one that outlives its timeout is killed inside the container with
// every process it started (SIGTERM, then SIGKILL). A container that died is
// recreated on the next call; idle containers are removed by a reaper.
//
// The workspace directory lives on this host, so the Filesystem capability
// works on it directly, confined chroot-style by host/backend/rootfs, with
// files owned by the container user.
//
// The Podman bindings only build with the tags
//
//	remote exclude_graphdriver_btrfs exclude_graphdriver_devicemapper containers_image_openpgp
//
// (the Makefile's GOTAGS). Without them this package still compiles, and
// the "podman" backend it registers answers every Open with
// backend.ErrUnavailable saying how to build it in; List, GC and Preflight
// say the same.
//
// Configuration is the [backends.podman] table of wai.toml; see Config for
// every key and its default.
package podman
