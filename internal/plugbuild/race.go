//go:build race

package plugbuild

// raceEnabled: this binary runs with the race detector, under which
// wazero compiles modules about ten times slower.
const raceEnabled = true
