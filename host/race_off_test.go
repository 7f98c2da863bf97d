//go:build !race

package host

// raceEnabled: see race_on_test.go.
const raceEnabled = false
