//go:build race

package reply

// raceEnabled: the race detector slows every line down unevenly, so timings
// mean nothing under it.
const raceEnabled = true
