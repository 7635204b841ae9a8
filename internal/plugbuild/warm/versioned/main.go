// Command versioned is a main package whose test binary warms the wazero
// cache for the test binaries of main packages that import wazero (the
// tools, cmd/wai): their build information lists wazero's version, so
// they read another part of the cache than package warm's (see there).
// It is never run as a command.
package main

// A main package's test binary lists in its build information the
// modules of the package's own imports: without wazero among them, this
// one would read and write warm's "dev" part.
import _ "github.com/wai-dev/wai/internal/plugbuild/warm"

func main() {}
