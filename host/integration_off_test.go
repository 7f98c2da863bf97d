//go:build !integration

package host

// integration: without the build tag, TestEveryVerbEveryChannel gives
// Alice the roles of everydayRoles alone,
// TestForgedMailGetsTheVictimOneShortAnswer sends 25 forgeries and
// TestHugePostDoesNotFanOut posts 1 MB.
const integration = false
