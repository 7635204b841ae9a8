//go:build !race

package plugbuild

const raceEnabled = false
