//go:build integration

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/mailbox"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/store"
)

// e2eWait bounds every wait for mail or for the game to move on. It only
// matters when something is broken: a healthy step takes well under a
// second, but the machine may be loaded.
const e2eWait = 90 * time.Second

// e2ePass is the password of every mailbox the end-to-end tests read.
const e2ePass = "e2e-secret"

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

// outboxDrained reports whether no outgoing message is pending or being
// sent, both read in one snapshot (see store's Waiting).
func outboxDrained(st *store.Store) (bool, error) {
	waiting, err := st.Waiting(context.Background())
	return err == nil && len(waiting) == 0, err
}

// readMailbox fetches every message of user's INBOX on the IMAP server at
// imapAddr without changing flags.
func readMailbox(t *testing.T, imapAddr, user string) []letter {
	t.Helper()
	return readMailboxAs(t, imapAddr, user, e2ePass)
}
