//go:build !integration

package compose_test

// integration: without the build tag, the plays that repeat another's
// batches in another language or with another secret input leave out
// the cross-check of every batch laid out alone (see harness.sampled).
const integration = false
