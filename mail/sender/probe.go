package sender

import (
	"context"
	"fmt"
)

// SendOne connects with cfg, sends raw from the envelope sender from to
// the recipients to in one message, and quits: what a setup does to prove
// that the account sends, outside any outbox.
func SendOne(ctx context.Context, cfg Config, from string, to []string, raw []byte) error {
	s, err := New(cfg, noOutbox{}, nil)
	if err != nil {
		return err
	}
	cn, err := s.connect(ctx)
	if err != nil {
		return err
	}
	defer cn.close()
	r := cn.send(ctx, Message{From: from, To: to, Raw: raw})
	if !r.sent {
		return fmt.Errorf("send to %v: %w", to, r.err)
	}
	if len(r.refused) > 0 {
		return fmt.Errorf("send: %w", &RecipientsError{Refused: r.refused})
	}
	cn.quit()
	return nil
}
