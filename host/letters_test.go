package host_test

import (
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/mailbox"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
)

// e2eWait bounds every wait for mail or for the game to move on. It only
// matters when something is broken: a healthy step takes well under a
// second, but the machine may be loaded.
const e2eWait = 90 * time.Second

type letter = mailbox.Letter

var (
	readMailboxAs = mailbox.Read
	htmlLines     = mailbox.HTMLLines
)

// waitFor polls cond until it holds, failing the test after e2eWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	mailtest.WaitFor(t, what, e2eWait, 50*time.Millisecond, cond)
}
