//go:build integration

package store_test

// integration: with the build tag, which CI runs, TestKillChildProcess
// streams its full count of commands through its full count of kills.
const integration = true
