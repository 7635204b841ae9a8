package rules

import (
	"fmt"
	"slices"
	"strings"
)

// RulePower refuses commands that stop or restart the machine, or signal
// every process: harmless in a container, where nobody may, but the host
// backend can run as root, and docs/ARCHITECTURE.md promises the refusal.
const RulePower = "power"

// powerCommands stop or restart the machine whatever their arguments.
var powerCommands = []string{"shutdown", "reboot", "halt", "poweroff"}

// systemctlPower are the systemctl verbs that do the same.
var systemctlPower = []string{"reboot", "poweroff", "halt", "kexec", "soft-reboot"}

// powerCheck judges one run by its command name (wrappers already taken
// off) and arguments. It looks at the command position only, unlike
// checkWords: `grep reboot log` is ordinary.
func powerCheck(name string, args []string) string {
	switch {
	case slices.Contains(powerCommands, name):
		return fmt.Sprintf("%s stops or restarts the machine", name)
	case name == "systemctl":
		for _, a := range args {
			if slices.Contains(systemctlPower, a) {
				return fmt.Sprintf("systemctl %s stops or restarts the machine", a)
			}
		}
	case name == "init" || name == "telinit":
		for _, a := range args {
			if a == "0" || a == "6" {
				return fmt.Sprintf("%s %s stops or restarts the machine", name, a)
			}
		}
	case name == "kill":
		if slices.Contains(killTargets(args), "-1") {
			return "kill -1 signals every process the user may signal"
		}
	}
	return ""
}

// killTargets returns kill's process operands: what follows the signal
// option (-9, -KILL, -s NAME, -n N, --signal NAME) and an optional "--".
// In `kill -9 -1` the -1 is a process (all of them); in `kill -1 123` it
// is the signal.
func killTargets(args []string) []string {
	i := 0
	if i < len(args) {
		switch a := args[i]; {
		case a == "-s" || a == "-n" || a == "--signal":
			i += 2
		case a == "-l" || a == "-L" || a == "--list" || a == "--table":
			return nil // lists signal names, kills nothing
		case strings.HasPrefix(a, "-") && a != "--" && len(a) > 1:
			i++
		}
	}
	if i < len(args) && args[i] == "--" {
		i++
	}
	if i >= len(args) {
		return nil
	}
	return args[i:]
}
