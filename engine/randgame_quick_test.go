//go:build !integration

package engine

// allRandomGames: without the tag integration, TestRandomGames plays
// quickGames of each setup, for an everyday run.
const allRandomGames = false
