package host

import (
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/mailbox"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
)

// The package's own end-to-end tests read mailboxes as the external ones do.

const (
	e2eWait  = 90 * time.Second
	e2ePass  = "e2e-secret"
	hostUser = "host"
)

type letter = mailbox.Letter

var parseLetter = mailbox.Parse

func readMailbox(t *testing.T, imapAddr, user string) []letter {
	t.Helper()
	return mailbox.Read(t, imapAddr, user, e2ePass)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	mailtest.WaitFor(t, what, e2eWait, 50*time.Millisecond, cond)
}
