//go:build race

package compose_test

// raceEnabled: under the race detector the plays that repeat another's
// batches leave out their cross-check, as the everyday run does, the
// tests that play a game in every language play it in the first one or
// two (see languages), and TestTownSeesNoSecretInput compares the worlds
// without and with its first secret input; CI plays all of it without
// the race detector (see harness.sampled).
const raceEnabled = true
