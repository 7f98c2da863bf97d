//go:build integration && race

package budgetsim_test

// raceEnabled: under the race detector TestWholeGamesAgainstBudget plays
// the first cell alone.
const raceEnabled = true
