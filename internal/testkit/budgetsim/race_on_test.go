//go:build integration && race

package budgetsim_test

// raceEnabled: under the race detector TestWholeGamesAgainstBudget plays
// the classic cells alone.
const raceEnabled = true
