package main

import (
	"fmt"
	"strings"

	"github.com/wai-dev/wai/pdk"
)

type netInfo struct {
	Name       string   `json:"name"`
	Internal   bool     `json:"internal"`
	Persistent bool     `json:"persistent"`
	Project    string   `json:"project,omitempty"`
	Subnets    []string `json:"subnets,omitempty"`
	Containers []string `json:"containers,omitempty"`
}

type composeInfo struct {
	Project  string `json:"project"`
	File     string `json:"file,omitempty"`
	Network  string `json:"network,omitempty"`
	Services []struct {
		Service   string `json:"service"`
		Container string `json:"container"`
		Image     string `json:"image"`
		State     string `json:"state"`
		Running   bool   `json:"running"`
	} `json:"services"`
}

func (n netInfo) line() string {
	egress := "with egress"
	if n.Internal {
		egress = "internal"
	}
	return facts(n.Name+" ("+egress, flag(n.Persistent, "persistent"), fact("compose project ", n.Project),
		fact("containers ", strings.Join(n.Containers, " ")))
}

func (c composeInfo) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Project %s on network %s:", c.Project, c.Network)
	for _, s := range c.Services {
		fmt.Fprintf(&b, "\n- %s: container %s (%s, %s)", s.Service, s.Container, s.Image, s.State)
	}
	if len(c.Services) == 0 {
		b.WriteString("\n(no services)")
	}
	return b.String()
}

// removed says what compose_down took away. The states compose_down
// carries are from before it (running, mostly), so none is shown: listing
// removed containers as running would tell the model they still are.
func (c composeInfo) removed() string {
	var names []string
	for _, s := range c.Services {
		names = append(names, s.Service+" (container "+s.Container+")")
	}
	msg := "Stopped and removed project " + c.Project + ":"
	if len(names) > 0 {
		msg += " services " + strings.Join(names, ", ") + ";"
	}
	if c.Network != "" {
		msg += " network " + c.Network + ";"
	}
	return strings.TrimSuffix(msg, ";") + ". Nothing of it runs now."
}

// networkAnswer writes the message of the network and compose
// operations; ok is false for the others.
func networkAnswer(p params, r response) (pdk.Result, bool) {
	switch p.Operation {
	case "create_network":
		return pdk.OK("Created network "+r.Network.line()+". Create containers on it with network = \""+r.Network.Name+
			"\": they reach each other by container name.", r), true
	case "destroy_network":
		return pdk.OK("Destroyed network "+r.Network.Name+".", r), true
	case "list_networks":
		return pdk.OK(listing("No networks.", "Networks:", r.Networks), r), true
	case "compose_up", "compose_status":
		msg := r.Compose.text()
		if p.Operation == "compose_up" {
			msg = "Started. " + msg + "\nServices reach each other by service name; run commands with exec and the container's name."
		}
		return pdk.OK(msg, r), true
	case "compose_down":
		return pdk.OK(r.Compose.removed(), r), true
	}
	return pdk.Result{}, false
}
