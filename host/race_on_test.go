//go:build race

package host

// raceEnabled: under the race detector, which makes every message the
// host handles some ten times as costly, the tag's full counts are left to
// the run without it (see fullCounts), and TestEveryVerbEveryChannel
// plays the worlds before the start and by day.
const raceEnabled = true
