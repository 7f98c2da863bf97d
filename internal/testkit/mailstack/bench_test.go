//go:build linux && integration

package mailstack

import (
	"fmt"
	"testing"
)

// BenchmarkStartStop measures what a test pays for its own stack.
func BenchmarkStartStop(b *testing.B) {
	for b.Loop() {
		s := Start(b, Config{})
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSubmitToIMAP measures one message's way from SMTP submission
// through Postfix's queue and LMTP into the INBOX, as seen over IMAP.
func BenchmarkSubmitToIMAP(b *testing.B) {
	s := Start(b, Config{})
	if err := s.AddUser("host", "pw"); err != nil {
		b.Fatal(err)
	}
	c := login(b, s, "host", "pw")
	n := uint32(0)
	for b.Loop() {
		n++
		id := fmt.Sprintf("<bench-%d@players.test>", n)
		if err := trySend(s, "x@players.test", s.Address("host+t"), message("x@players.test", s.Address("host"), id, "VOTE Bob")); err != nil {
			b.Fatal(err)
		}
		awaitCount(b, c, n)
	}
}
