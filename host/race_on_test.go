//go:build race

package host

// raceEnabled: under the race detector, which makes every message the
// host handles some ten times as costly, the tag's full counts are left to
// the run without it (see fullCounts).
const raceEnabled = true
