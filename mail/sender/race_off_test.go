//go:build integration && !race

package sender_test

const raceEnabled = false
