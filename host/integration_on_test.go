//go:build integration

package host

// integration: with the build tag, TestEveryVerbEveryChannel gives Alice
// every role.
const integration = true
