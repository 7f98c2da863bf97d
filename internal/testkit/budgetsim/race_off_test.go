//go:build integration && !race

package budgetsim_test

const raceEnabled = false
