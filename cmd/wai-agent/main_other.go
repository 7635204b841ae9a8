//go:build !linux

package main

import (
	"fmt"
	"os"
)

// wai-agent runs inside Linux containers only.
func main() {
	fmt.Fprintln(os.Stderr, "wai-agent runs inside Linux containers only: build it with GOOS=linux")
	os.Exit(2)
}
