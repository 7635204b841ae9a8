package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/wai-dev/wai/host"
	"github.com/wai-dev/wai/host/backend"
)

func init() {
	register(&command{
		name:    "image",
		args:    "build PURPOSE [--force] | ls [--json]",
		summary: "build and list the local purpose images (python, node, go, rust, general)",
		text: `
wai image build PURPOSE builds localhost/wai-PURPOSE:HASH from Debian
bookworm packages (the recipe scripts/images/wai-PURPOSE.packages, built
into wai; HASH is the recipe's hash) with mmdebstrap on this machine and
imports it into the configured Podman service. An image of the current
recipe is not rebuilt unless --force is given. Building needs root and
mmdebstrap; it takes minutes and prints its steps on stderr.

wai image ls lists the purpose images: current (built from the recipe this
wai carries), stale (an older recipe) or missing.`,
		flags: func(fs *flag.FlagSet) func(context.Context, stdio, []string) int {
			var config string
			fs.StringVar(&config, "config", "", "config `file` (default ./wai.toml, else $XDG_CONFIG_HOME/wai/config.toml)")
			return func(ctx context.Context, std stdio, args []string) int {
				if len(args) == 0 || (args[0] != "build" && args[0] != "ls") {
					fmt.Fprintf(std.err, "wai image: want `build PURPOSE` or `ls`, got %q\n", args)
					return exitError
				}
				if args[0] == "ls" {
					return imageList(ctx, std, config, args[1:])
				}
				return imageBuild(ctx, std, config, args[1:])
			}
		},
	})
}

// parseSub parses the flags of `wai image build|ls`, which may come before
// or after the positional arguments (`build python --force`), and returns
// those arguments.
func parseSub(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func imageBuild(ctx context.Context, std stdio, config string, args []string) int {
	fs := flag.NewFlagSet("wai image build", flag.ContinueOnError)
	fs.SetOutput(std.err)
	force := fs.Bool("force", false, "rebuild even when the image of the current recipe exists")
	fs.StringVar(&config, "config", config, "config `file`")
	args, err := parseSub(fs, args)
	if err != nil {
		return exitError
	}
	return withConfigKernel(ctx, std, config, func(k *host.Kernel) int {
		if len(args) != 1 {
			purposes, _ := k.ImagePurposes()
			fmt.Fprintf(std.err, "wai image build: want one PURPOSE (one of %v), got %q\n", purposes, args)
			return exitError
		}
		progress := func(ev backend.ImageProgress) {
			fmt.Fprintf(std.err, "wai image: %-9s %s\n", ev.Phase, oneLine(ev.Message))
		}
		ref, err := k.BuildImage(ctx, args[0], backend.ImageBuild{Force: *force, Progress: progress})
		if err != nil {
			return imageFail(ctx, std.err, err)
		}
		fmt.Fprintln(std.out, ref.Name)
		return exitOK
	})
}

func imageList(ctx context.Context, std stdio, config string, args []string) int {
	fs := flag.NewFlagSet("wai image ls", flag.ContinueOnError)
	fs.SetOutput(std.err)
	asJSON := fs.Bool("json", false, "print the images as JSON")
	fs.StringVar(&config, "config", config, "config `file`")
	args, err := parseSub(fs, args)
	if err != nil {
		return exitError
	}
	if len(args) > 0 {
		fmt.Fprintf(std.err, "wai image ls: takes no arguments, got %q\n", args)
		return exitError
	}
	return withConfigKernel(ctx, std, config, func(k *host.Kernel) int {
		refs, err := k.Images(ctx)
		if err != nil {
			return imageFail(ctx, std.err, err)
		}
		if *asJSON {
			return writeJSON(std, refs)
		}
		return printImages(std.out, refs)
	})
}

// printImages prints the purpose images as a table.
func printImages(out io.Writer, refs []backend.ImageRef) int {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PURPOSE\tIMAGE\tRECIPE\tSTATUS")
	for _, r := range refs {
		status := "missing"
		switch {
		case r.Exists && r.Current:
			status = "current"
		case r.Exists:
			status = "stale"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Purpose, r.Name, r.Recipe, status)
	}
	if err := tw.Flush(); err != nil {
		return exitError
	}
	return exitOK
}

// imageFail reports an image error without fail's generic hint by kind:
// these messages say what to install or run themselves, and "a policy
// refused this" or "pick another backend" would mislead here.
func imageFail(ctx context.Context, stderr io.Writer, err error) int {
	if ctx.Err() != nil {
		return fail(ctx, stderr, err)
	}
	fmt.Fprintf(stderr, "wai: %s\n", printable(err.Error()))
	return exitError
}
