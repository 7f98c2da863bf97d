//go:build integration

package host

// integration: with the build tag, which CI runs, TestEveryVerbEveryChannel
// gives Alice every role, TestForgedMailGetsTheVictimOneShortAnswer sends
// 100 forgeries and TestHugePostDoesNotFanOut posts 7.8 MB; CI makes these
// full counts in its run without the race detector (see fullCounts).
const integration = true
