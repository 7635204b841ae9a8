package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wai-dev/wai/pdk"
	"github.com/wai-dev/wai/tools/internal/shellfmt"
)

// response is the kernel's answer (host.ContainerResponse on the wire).
type response struct {
	Operation  string       `json:"operation"`
	Container  *info        `json:"container,omitempty"`
	Containers []info       `json:"containers,omitempty"`
	Exec       *execResult  `json:"exec,omitempty"`
	Setup      []execResult `json:"setup,omitempty"`
	Copy       *struct {
		HostPath      string `json:"host_path"`
		ContainerPath string `json:"container_path"`
		Files         int    `json:"files"`
		Bytes         int64  `json:"bytes"`
	} `json:"copy,omitempty"`
	Hint *struct {
		Container string `json:"container"`
		Shell     string `json:"shell"`
		Command   string `json:"command"`
	} `json:"hint,omitempty"`
	Preflight *struct {
		Ready   bool   `json:"ready"`
		Summary string `json:"summary"`
		Checks  []struct {
			Name     string `json:"name"`
			Passed   bool   `json:"passed"`
			Detail   string `json:"detail"`
			Guidance string `json:"guidance,omitempty"`
			Optional bool   `json:"optional,omitempty"`
		} `json:"checks"`
	} `json:"preflight,omitempty"`
	Notes     []string        `json:"notes,omitempty"`
	Dotfiles  *dotfilesResult `json:"dotfiles,omitempty"`
	Snapshot  *snapshot       `json:"snapshot,omitempty"`
	Snapshots []snapshot      `json:"snapshots,omitempty"`
	// Profile is what create's purpose resolved to.
	Profile *struct {
		Purpose    string `json:"purpose"`
		Detected   bool   `json:"detected,omitempty"`
		Marker     string `json:"marker,omitempty"`
		Image      string `json:"image,omitempty"`
		ImageBuilt bool   `json:"image_built,omitempty"`
		Dotfiles   bool   `json:"dotfiles"`
		Repo       string `json:"repo,omitempty"`
	} `json:"profile,omitempty"`
	// Networks and compose projects (answer_networks.go).
	Network  *netInfo     `json:"network,omitempty"`
	Networks []netInfo    `json:"networks,omitempty"`
	Compose  *composeInfo `json:"compose,omitempty"`
	// Error and Kind say why an operation failed or was denied (the
	// failed result's value); empty on success.
	Error string `json:"error,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Job   *job   `json:"job,omitempty"`
	Jobs  []job  `json:"jobs,omitempty"`
}

// dotfilesResult is host.DotfilesResult on the wire.
type dotfilesResult struct {
	Source   string   `json:"source,omitempty"`
	Branch   string   `json:"branch,omitempty"`
	Target   string   `json:"target,omitempty"`
	Script   string   `json:"script,omitempty"`
	ExitCode int      `json:"exit_code"`
	TimedOut bool     `json:"timed_out,omitempty"`
	Output   string   `json:"output,omitempty"`
	Linked   []string `json:"linked,omitempty"`
	Inline   []string `json:"inline,omitempty"`
	Skipped  string   `json:"skipped,omitempty"`
	Failed   string   `json:"failed,omitempty"`
}

// line says what dotfiles did, for the create's message; failures are
// in the notes.
func (d *dotfilesResult) line() string {
	var parts []string
	switch {
	case d.Skipped != "":
		return "\nDotfiles: skipped (" + d.Skipped + ")."
	case d.Failed != "":
		parts = append(parts, fmt.Sprintf("%s failed (exit %d)", d.Failed, d.ExitCode))
	case d.Script != "":
		parts = append(parts, "ran "+d.Script)
	case len(d.Linked) > 0:
		parts = append(parts, "linked "+strings.Join(d.Linked, " "))
	}
	if len(d.Inline) > 0 {
		parts = append(parts, "wrote "+strings.Join(d.Inline, " "))
	}
	where := ""
	if d.Source != "" && d.Source != "inline" {
		where = " from " + d.Source + " in " + d.Target
	}
	return "\nDotfiles" + where + ": " + strings.Join(parts, ", ") + "."
}

type info struct {
	Name       string   `json:"name"`
	Image      string   `json:"image"`
	Purpose    string   `json:"purpose,omitempty"`
	State      string   `json:"state"`
	Persistent bool     `json:"persistent"`
	EnvKeys    []string `json:"env_keys,omitempty"`
	Health     string   `json:"health,omitempty"`
	Network    string   `json:"network,omitempty"`
	Project    string   `json:"project,omitempty"`
	Service    string   `json:"service,omitempty"`
	// EarlierSession: a persistent container of an earlier session.
	EarlierSession bool `json:"earlier_session,omitempty"`
}

type snapshot struct {
	Name        string   `json:"name"`
	Image       string   `json:"image"`
	Container   string   `json:"container"`
	Created     string   `json:"created"`
	Size        int64    `json:"size,omitempty"`
	StrippedEnv []string `json:"stripped_env,omitempty"`
}

func (s snapshot) line() string {
	l := fmt.Sprintf("%s (of container %s, %s", s.Name, s.Container, s.Created)
	if s.Size > 0 {
		l += fmt.Sprintf(", %d MB", (s.Size+(1<<20)-1)>>20)
	}
	return l + ")"
}

type execResult struct {
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	ExitCode  int    `json:"exit_code"`
	TimedOut  bool   `json:"timed_out"`
	Truncated bool   `json:"truncated"`
	// TimeoutMS is the timeout the command ran with; TimeoutNote says why
	// it is shorter than asked (the tool call's deadline).
	TimeoutMS   int64  `json:"timeout_ms,omitempty"`
	TimeoutNote string `json:"timeout_note,omitempty"`
}

func (i info) line() string {
	return facts(fmt.Sprintf("%s (%s, %s", i.Name, i.Image, i.State), flag(i.Persistent, "persistent"),
		flag(i.EarlierSession, "from an earlier session"), fact("purpose ", i.Purpose), fact("env ", strings.Join(i.EnvKeys, " ")), i.Health, fact("network ", i.Network))
}

// facts ends the line of a listed container or network, open being its
// name and first facts ("box (img, running"), with each of more that is
// not "" after a comma. Each kind words its own facts; they share how the
// optional ones are left out.
func facts(open string, more ...string) string {
	for _, f := range more {
		if f != "" {
			open += ", " + f
		}
	}
	return open + ")"
}

// fact is label followed by v, or "" when v is "".
func fact(label, v string) string {
	if v == "" {
		return ""
	}
	return label + v
}

// flag is word when on, else "".
func flag(on bool, word string) string {
	if !on {
		return ""
	}
	return word
}

// answer writes the message for the model; the value is the kernel's
// response as it came.
func answer(p params, r response) pdk.Result {
	notes := ""
	if len(r.Notes) > 0 {
		notes = "\nNotes:\n- " + strings.Join(r.Notes, "\n- ")
	}
	switch {
	case r.Exec != nil:
		return execAnswer(r, notes)
	case r.Job != nil:
		return jobAnswer(p, r)
	case r.Preflight != nil:
		return preflightAnswer(r, notes)
	case r.Hint != nil:
		return pdk.OK("A person gets a shell in "+r.Hint.Container+" with:\n  "+r.Hint.Command, r)
	case r.Copy != nil:
		return copyAnswer(p, r)
	}
	if res, ok := networkAnswer(p, r); ok {
		return res
	}
	return containerAnswer(p, r, notes)
}

// preflightAnswer lists the checks; it fails when the machine is not
// ready, so the model does not go on as if it were.
func preflightAnswer(r response, notes string) pdk.Result {
	var b strings.Builder
	b.WriteString(r.Preflight.Summary)
	for _, c := range r.Preflight.Checks {
		mark := "ok"
		switch {
		case !c.Passed && c.Optional:
			mark = "not available (optional: only for what needs it): " + c.Guidance
		case !c.Passed:
			mark = "FAILED: " + c.Guidance
		}
		fmt.Fprintf(&b, "\n- %s: %s (%s)", c.Name, mark, c.Detail)
	}
	if !r.Preflight.Ready {
		return pdk.FailWith(b.String()+notes, r)
	}
	return pdk.OK(b.String()+notes, r)
}

// copyAnswer says what was copied, in the direction it went.
func copyAnswer(p params, r response) pdk.Result {
	dir := "into " + p.Container + ":" + r.Copy.ContainerPath + " from " + r.Copy.HostPath
	if p.Operation == "copy_out" {
		dir = "from " + p.Container + ":" + r.Copy.ContainerPath + " to " + r.Copy.HostPath
	}
	return pdk.OK(fmt.Sprintf("Copied %d file(s), %d bytes, %s.", r.Copy.Files, r.Copy.Bytes, dir), r)
}

// containerAnswer words the operations on containers and snapshots, by
// the operation asked for.
func containerAnswer(p params, r response, notes string) pdk.Result {
	switch p.Operation {
	case "create":
		return pdk.OK(createMessage(r)+setupAndNext(r)+notes, r)
	case "list", "destroy_all":
		head := "Containers:"
		if p.Operation == "destroy_all" {
			head = "Destroyed:"
		}
		return pdk.OK(listing("No containers.", head, r.Containers)+notes, r)
	case "destroy":
		return pdk.OK("Destroyed "+r.Container.Name+".", r)
	case "start":
		return pdk.OK("Started "+r.Container.line()+"; its files are as they were. Run commands with operation exec.", r)
	case "status":
		return pdk.OK(r.Container.line()+jobLines(r.Jobs)+notes, r)
	case "stop":
		return pdk.OK("Stopped "+r.Container.line()+"; its files are kept: operation start runs it again, destroy removes it for good.", r)
	case "restore":
		return pdk.OK("Restored snapshot "+p.Snapshot+" as "+r.Container.line()+"."+setupAndNext(r)+notes, r)
	case "snapshot":
		return pdk.OK("Saved snapshot "+r.Snapshot.line()+". Restore it with operation restore and snapshot "+strconv.Quote(r.Snapshot.Name)+"."+notes, r)
	case "delete_snapshot":
		return pdk.OK("Deleted snapshot "+r.Snapshot.Name+".", r)
	case "list_snapshots":
		return pdk.OK(listing("No snapshots.", "Snapshots:", r.Snapshots), r)
	}
	return pdk.OK(r.Container.line(), r)
}

// createMessage says what create made: the container, the profile its
// purpose resolved to, and what dotfiles did.
func createMessage(r response) string {
	msg := "Created " + r.Container.line() + "."
	if p := r.Profile; p != nil {
		msg += "\nProfile " + p.Purpose
		if p.Detected {
			msg += " (detected from " + strconv.Quote(p.Marker) + ")"
		}
		if p.ImageBuilt {
			msg += ", image " + p.Image + " built for it"
		}
		if p.Repo != "" {
			msg += "; the repository is at " + p.Repo
		}
		msg += "."
	}
	if r.Dotfiles != nil {
		msg += r.Dotfiles.line()
	}
	return msg
}

// setupAndNext ends the answer of a container just made: how each setup
// command exited, and how to run commands in it.
func setupAndNext(r response) string {
	var b strings.Builder
	for i, s := range r.Setup {
		fmt.Fprintf(&b, "\nSetup %d: exit %d", i+1, s.ExitCode)
	}
	return b.String() + "\nRun commands with operation exec and container " + strconv.Quote(r.Container.Name) + "."
}

// listing words a list for the model: head, then a "- " line an item; or
// none when there is nothing to list.
func listing[T interface{ line() string }](none, head string, items []T) string {
	if len(items) == 0 {
		return none
	}
	var b strings.Builder
	b.WriteString(head)
	for _, it := range items {
		b.WriteString("\n- " + it.line())
	}
	return b.String()
}

func execAnswer(r response, notes string) pdk.Result {
	e := r.Exec
	out, errs := shellfmt.Bytes(e.Stdout, outputBytes), shellfmt.Bytes(e.Stderr, outputBytes)
	// The timeout note leads, as shell_execute's does: a model whose
	// command was cut sooner than it asked must see why, and what to use.
	var fields []shellfmt.Field
	if e.TimeoutNote != "" {
		fields = append(fields, shellfmt.Field{Name: "Timeout", Value: e.TimeoutNote})
	}
	limit := time.Duration(e.TimeoutMS) * time.Millisecond
	msg := shellfmt.Block(shellfmt.Headline(e.ExitCode, e.TimedOut, limit), fields, out, errs) + notes
	if e.ExitCode != 0 || e.TimedOut {
		return pdk.FailWith(msg, r)
	}
	return pdk.OK(msg, r)
}
