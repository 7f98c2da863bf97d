//go:build integration && race

package sender_test

// raceEnabled: under the race detector the Postfix burst plays fewer
// rounds (see burstRounds).
const raceEnabled = true
