//go:build remote && exclude_graphdriver_btrfs && exclude_graphdriver_devicemapper && containers_image_openpgp

package main

import "github.com/wai-dev/wai/plugins/podman"

// The wai gc these tests run sweeps their own sessions, which name_prefix
// and the state directory keep apart, and none of the service's files
// volumes: those belong to other wai builds, other test runs and real
// users, and no test here is about them (plugins/podman tests the sweep
// on volumes of its own).
func init() { podman.LimitFilesSweep(func(string) bool { return false }) }
