//go:build race

package engine

// raceEnabled: the race detector makes the random games some ten times
// slower; see randomGames.
const raceEnabled = true
