//go:build integration

package compose_test

// integration: with the build tag, every play cross-checks every batch
// against its copies laid out alone.
const integration = true
