//go:build integration

package engine

// allRandomGames: with the tag integration, TestRandomGames plays its full
// count.
const allRandomGames = true
