package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// Exit statuses of wai itself. A command run by `wai exec` passes its own
// status through; these are what wai returns when it did not get that far.
const (
	exitOK          = 0
	exitError       = 2 // wai could not do what was asked (bad flag, config, refused request)
	exitInterrupted = 130
)

// stdio is the process state a subcommand may use: where it reads and
// writes, how it looks up environment variables, and the directory
// relative paths are taken from. Subcommands use these and never
// os.Stdin, os.Stdout, os.Stderr, os.Getenv or the process's working
// directory (configuration loading included, through configEnv), so
// tests run wai in their own process, in parallel, each with its own
// streams, environment and directory.
type stdio struct {
	in       io.Reader
	out, err io.Writer
	// getenv is os.Getenv in main; a test passes its own environment.
	getenv func(string) string
	// dir is the working directory; "" (main) is the process's own.
	dir string
}

// path is p taken from std's working directory.
func (s stdio) path(p string) string {
	if s.dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.dir, p)
}

// command is one subcommand. A new subcommand is one file that defines a
// command and registers it in init.
type command struct {
	name string
	// args is the synopsis after the name, e.g. "[flags] [--] CMD ARGS…".
	args string
	// summary is the one line `wai help` shows.
	summary string
	// text is the longer explanation `wai help NAME` and `wai NAME -h`
	// show above the flags; optional.
	text string
	// usageStatus is the exit status of a flag mistake; 0 means exitError.
	// `wai exec` sets its own so wai's failures never look like the
	// command's status.
	usageStatus int
	// noArgs refuses positional arguments before the subcommand runs,
	// in the same words for every subcommand that takes none.
	noArgs bool
	// flags declares the subcommand's flags on fs and returns the function
	// that runs it with the arguments left after them.
	flags func(fs *flag.FlagSet) func(ctx context.Context, std stdio, args []string) int
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("wai: subcommand registered twice: " + c.name)
	}
	commands[c.name] = c
}

// runStdio is run with the environment looked up through std.getenv.
func runStdio(ctx context.Context, args []string, std stdio) int {
	if len(args) == 0 {
		usage(std.err)
		return exitError
	}
	name, rest := args[0], args[1:]
	switch name {
	case "--version", "-version", "-V":
		name, rest = "version", nil
	}
	switch name {
	case "help", "-h", "-help", "--help":
		if len(rest) > 0 && name == "help" {
			c, ok := commands[rest[0]]
			if !ok {
				fmt.Fprintf(std.err, "wai: no subcommand %q%s\n\n", rest[0], subcommandSuggestion(rest[0]))
				usage(std.err)
				return exitError
			}
			fs, _ := c.flagSet(std.out)
			c.help(std.out, fs)
			return exitOK
		}
		usage(std.out)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(std.err, "wai: unknown subcommand %q%s\n\n", name, subcommandSuggestion(name))
		usage(std.err)
		return exitError
	}
	fs, runFn := c.flagSet(std.err)
	// flag calls Usage after a parse error and on -h: print nothing there,
	// and decide here what each case deserves.
	fs.Usage = func() {}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.help(std.out, fs)
			return exitOK
		}
		// flag has printed the error itself; add what it cannot know.
		if s := flagSuggestion(fs, err); s != "" {
			fmt.Fprintf(std.err, "wai %s: %s\n", c.name, s)
		}
		c.shortUsage(std.err)
		return c.errStatus()
	}
	if c.noArgs && fs.NArg() > 0 {
		fmt.Fprintf(std.err, "wai %s: takes no arguments, got %q\n", c.name, fs.Args())
		c.shortUsage(std.err)
		return exitError
	}
	// A subcommand that refuses its arguments calls fs.Usage.
	fs.Usage = func() { c.shortUsage(std.err) }
	return runFn(ctx, std, fs.Args())
}

// errStatus is the status of a mistake in the subcommand's flags.
func (c *command) errStatus() int {
	if c.usageStatus != 0 {
		return c.usageStatus
	}
	return exitError
}

// flagSet declares the subcommand's flags, printing errors to w.
func (c *command) flagSet(w io.Writer) (*flag.FlagSet, func(context.Context, stdio, []string) int) {
	fs := flag.NewFlagSet("wai "+c.name, flag.ContinueOnError)
	fs.SetOutput(w)
	return fs, c.flags(fs)
}

// shortUsage is what a mistake gets: the synopsis and where to read more,
// not a screenful of flags that buries the error above it.
func (c *command) shortUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: wai %s %s\n", c.name, c.args)
	fmt.Fprintf(w, "`wai help %s` lists the flags.\n", c.name)
}

// help is what -h and `wai help NAME` print: synopsis, text, flags.
func (c *command) help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: wai %s %s\n", c.name, c.args)
	if c.text != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.text))
	}
	var n int
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintf(w, "\nflags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
}

func usage(w io.Writer) {
	names := make([]string, 0, len(commands))
	width := 0
	for n := range commands {
		names = append(names, n)
		width = max(width, len(n))
	}
	sort.Strings(names)
	fmt.Fprintf(w, "wai gives an agent a shell and a filesystem it cannot hurt anyone with.\n\n")
	fmt.Fprintf(w, "usage: wai SUBCOMMAND [flags] [args]\n\nsubcommands:\n")
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintf(w, "\n`wai help SUBCOMMAND` or `wai SUBCOMMAND -h` explains one.\n")
}
