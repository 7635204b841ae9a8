package backend

import "time"

// Environment is what a backend's commands find besides the workspace, as
// a model needs to know it: the MCP instructions are built from it, so
// that what the model is told about where it can write, and for how long,
// is what the backend does.
type Environment struct {
	// ScratchDir is a writable directory besides the workspace ("" none)
	// of ScratchBytes. It lasts as long as the session's container, which
	// goes after ScratchIdle without a command or a running job (0: with
	// the session); the kernel tells the model the sooner of it and
	// session_idle_timeout.
	ScratchDir   string
	ScratchBytes int64
	ScratchIdle  time.Duration
	// Home is $HOME of commands ("" when the image decides it), and
	// HomeWritable says whether files can be written there: on a
	// read-only root it cannot, and `git config --global` fails.
	Home         string
	HomeWritable bool
}

// Describer is implemented by a backend that can say what its commands
// find besides the workspace. A backend that does not is described by the
// workspace alone.
type Describer interface {
	Environment() Environment
}
