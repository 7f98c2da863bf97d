package watcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// Found is a message FindAndRemove found: its header as stored, and when
// it reached the mailbox (INTERNALDATE).
type Found struct {
	Header  []byte
	Arrived time.Time
}

// ErrNotArrived: the message was not in the mailbox within the wait.
var ErrNotArrived = errors.New("the message did not arrive")

// FindAndRemove connects and logs in as Run does, waits up to wait for
// the message whose Message-ID is messageID (with its angle brackets) to
// be in the mailbox, reads its header, and deletes it: a setup's test
// message, which the host would otherwise read as mail to it.
func FindAndRemove(ctx context.Context, cfg Config, messageID string, wait time.Duration) (Found, error) {
	w, err := New(cfg, func(context.Context, Fetched) error { return nil })
	if err != nil {
		return Found{}, err
	}
	c, err := w.dial(ctx, &imapclient.Options{TLSConfig: w.tls})
	if err != nil {
		return Found{}, err
	}
	defer c.Close()
	s := &session{w: w, c: c}
	if err := s.login(ctx); err != nil {
		return Found{}, err
	}
	defer s.logout()
	end := time.Now().Add(wait)
	for {
		// SELECT again each time: some servers show new mail to a
		// selected mailbox only on the next command that asks.
		if err := s.cmd(ctx, "SELECT "+w.cfg.Mailbox, func() error {
			_, err := c.Select(w.cfg.Mailbox, nil).Wait()
			return err
		}); err != nil {
			return Found{}, fmt.Errorf("open mailbox %q: %w", w.cfg.Mailbox, err)
		}
		var uids []imap.UID
		if err := s.cmd(ctx, "UID SEARCH", func() error {
			data, err := c.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-ID", Value: messageID}}}, nil).Wait()
			if err == nil {
				uids = data.AllUIDs()
			}
			return err
		}); err != nil {
			return Found{}, err
		}
		if len(uids) > 0 {
			return s.readAndRemove(ctx, uids)
		}
		if time.Now().After(end) {
			return Found{}, fmt.Errorf("%w within %v", ErrNotArrived, wait)
		}
		select {
		case <-ctx.Done():
			return Found{}, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// readAndRemove reads the first message's header and arrival, and
// deletes every one of uids.
func (s *session) readAndRemove(ctx context.Context, uids []imap.UID) (Found, error) {
	var f Found
	set := imap.UIDSetNum(uids...)
	header := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true}
	if err := s.cmd(ctx, "UID FETCH", func() error {
		msgs, err := s.c.Fetch(imap.UIDSetNum(uids[0]), &imap.FetchOptions{InternalDate: true, BodySection: []*imap.FetchItemBodySection{header}}).Collect()
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return errors.New("the message went away while it was read")
		}
		f.Header, f.Arrived = msgs[0].FindBodySection(header), msgs[0].InternalDate
		return nil
	}); err != nil {
		return Found{}, err
	}
	if err := s.cmd(ctx, "UID STORE \\Deleted", func() error {
		return s.c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close()
	}); err != nil {
		return f, fmt.Errorf("delete the test message: %w", err)
	}
	if err := s.cmd(ctx, "EXPUNGE", func() error {
		if s.c.Caps().Has(imap.CapUIDPlus) {
			return s.c.UIDExpunge(set).Close()
		}
		return s.c.Expunge().Close()
	}); err != nil {
		return f, fmt.Errorf("delete the test message: %w", err)
	}
	return f, nil
}
