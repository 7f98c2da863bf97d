//go:build !integration

package host

// integration: without the build tag, TestEveryVerbEveryChannel gives
// Alice the roles of everydayRoles alone.
const integration = false
