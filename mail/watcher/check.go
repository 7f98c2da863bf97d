package watcher

import (
	"context"
	"fmt"

	"github.com/emersion/go-imap/v2/imapclient"
)

// CheckResult is what Check found out about the account.
type CheckResult struct {
	Security    string // implicit TLS, STARTTLS or plain (loopback)
	IDLE        bool   // the server offers IDLE
	Messages    uint32 // messages in the mailbox
	UIDValidity uint32
}

// Check connects, logs in and selects the mailbox as Run does, then logs
// out; it changes nothing on the server. The error says which step failed.
func Check(ctx context.Context, cfg Config) (CheckResult, error) {
	w, err := New(cfg, func(context.Context, Fetched) error { return nil })
	if err != nil {
		return CheckResult{}, err
	}
	res := CheckResult{Security: w.ep.Security.String()}
	c, err := w.dial(ctx, &imapclient.Options{TLSConfig: w.tls})
	if err != nil {
		return res, err
	}
	defer c.Close()
	s := &session{w: w, c: c}
	if err := s.login(ctx); err != nil {
		return res, err
	}
	if err := s.cmd(ctx, "SELECT "+w.cfg.Mailbox, func() error {
		sel, err := c.Select(w.cfg.Mailbox, nil).Wait()
		if err != nil {
			return err
		}
		res.Messages, res.UIDValidity = sel.NumMessages, sel.UIDValidity
		return nil
	}); err != nil {
		return res, fmt.Errorf("open mailbox %q: %w", w.cfg.Mailbox, err)
	}
	res.IDLE = c.Caps().Has("IDLE")
	s.logout()
	return res, nil
}
