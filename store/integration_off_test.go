//go:build !integration

package store_test

// integration: without the build tag, TestKillChildProcess streams fewer
// commands through fewer kills (see killCounts).
const integration = false
