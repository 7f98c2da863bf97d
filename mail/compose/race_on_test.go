//go:build race

package compose_test

// raceEnabled: under the race detector the plays that repeat another's
// batches leave out their cross-check, as the everyday run does, and
// TestTownSeesNoSecretInput and TestEndMailTellsTheLastNight play a
// sample of their games; CI plays all of it without the race detector
// (see harness.sampled).
const raceEnabled = true
