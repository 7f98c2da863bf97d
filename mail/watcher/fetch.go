package watcher

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// search returns the UIDs of the messages that meet criteria.
func (s *session) search(ctx context.Context, what string, criteria *imap.SearchCriteria) ([]imap.UID, error) {
	var data *imap.SearchData
	if err := s.cmd(ctx, what, func() (err error) {
		data, err = s.c.UIDSearch(criteria, nil).Wait()
		return err
	}); err != nil {
		return nil, err
	}
	return data.AllUIDs(), nil
}

// moveLeftovers moves mail that is \Seen but still in the watched mailbox
// to MoveTo: mail whose MOVE was cut off, by a lost connection or a crash,
// after \Seen had been set. In a mailbox dedicated to the host, \Seen
// means processed.
func (s *session) moveLeftovers(ctx context.Context) error {
	to := s.w.cfg.MoveTo
	if to == "" {
		return nil
	}
	seen, err := s.search(ctx, "UID SEARCH SEEN", &imap.SearchCriteria{Flag: []imap.Flag{imap.FlagSeen}})
	if err != nil {
		return err
	}
	if len(seen) == 0 {
		return nil
	}
	s.w.log.Info("moving processed mail left in the mailbox", "count", len(seen), "folder", to)
	return s.cmd(ctx, "UID MOVE "+to, func() error {
		_, err := s.c.Move(imap.UIDSetNum(seen...), to).Wait()
		return err
	})
}

// batch fetches and handles up to BatchSize messages: first their sizes,
// then their bodies in groups of at most MaxBatchBytes, so that a
// mailbox full of large mail does not have to fit in memory at once.
func (s *session) batch(ctx context.Context, uids []imap.UID) error {
	sizes, err := s.sizes(ctx, uids)
	if err != nil {
		return err
	}

	var group []imap.UID
	var groupBytes int64
	for _, m := range sizes {
		if m.UID == 0 {
			continue // the server left out the UID: not ours to guess
		}
		if limit := s.w.cfg.MaxMessageBytes; limit > 0 && m.RFC822Size > limit {
			// Too large to be read: its header is enough to refuse it. The
			// group before it goes first, to keep UID order.
			if len(group) > 0 {
				if err := s.fetchAndHandle(ctx, group, groupBytes); err != nil {
					return err
				}
				group, groupBytes = group[:0], 0
			}
			if err := s.handleHeader(ctx, m.UID, m.RFC822Size); err != nil {
				return err
			}
			continue
		}
		if len(group) > 0 && groupBytes+m.RFC822Size > s.w.cfg.MaxBatchBytes {
			if err := s.fetchAndHandle(ctx, group, groupBytes); err != nil {
				return err
			}
			group, groupBytes = group[:0], 0
		}
		group = append(group, m.UID)
		groupBytes += m.RFC822Size
	}
	if len(group) > 0 {
		return s.fetchAndHandle(ctx, group, groupBytes)
	}
	return nil
}

// sizes returns the size of each of uids, in UID order: from what look
// read when it is all known, otherwise asked of the server.
func (s *session) sizes(ctx context.Context, uids []imap.UID) ([]*imapclient.FetchMessageBuffer, error) {
	var sizes []*imapclient.FetchMessageBuffer
	for _, u := range uids {
		e, ok := s.unseen[u]
		if !ok || e.size < 0 {
			sizes = nil
			break
		}
		sizes = append(sizes, &imapclient.FetchMessageBuffer{UID: u, RFC822Size: e.size})
	}
	if sizes == nil {
		if err := s.cmd(ctx, "UID FETCH RFC822.SIZE", func() (err error) {
			sizes, err = s.c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, RFC822Size: true}).Collect()
			return err
		}); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(sizes, func(a, b *imapclient.FetchMessageBuffer) int { return cmp.Compare(a.UID, b.UID) })
	return sizes, nil
}

// bodySection is BODY.PEEK[]: the whole message, without setting \Seen.
var bodySection = &imap.FetchItemBodySection{Peek: true}

// headerSection is BODY.PEEK[HEADER]: the header alone.
var headerSection = &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, Peek: true}

// fetchSection fetches one body section of uids, bounded by timeout.
func (s *session) fetchSection(ctx context.Context, what string, timeout time.Duration, uids []imap.UID,
	section *imap.FetchItemBodySection) ([]*imapclient.FetchMessageBuffer, error) {
	var msgs []*imapclient.FetchMessageBuffer
	err := s.do(ctx, timeout, what, func() (err error) {
		msgs, err = s.c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{
			UID:         true,
			BodySection: []*imap.FetchItemBodySection{section},
		}).Collect()
		return err
	})
	return msgs, err
}

// handleHeader hands a message over the size limit to the handler with its
// header alone.
func (s *session) handleHeader(ctx context.Context, uid imap.UID, size int64) error {
	msgs, err := s.fetchSection(ctx, "UID FETCH BODY.PEEK[HEADER]", s.w.cfg.CommandTimeout, []imap.UID{uid}, headerSection)
	if err != nil {
		return err
	}
	// Everything fetched before goes first.
	if err := s.settleAll(ctx); err != nil {
		return err
	}
	var header []byte
	for _, m := range msgs {
		if m.UID == uid {
			header = m.FindBodySection(headerSection)
		}
	}
	if header == nil {
		s.w.log.Warn("the server returned no header for an unseen message", "uid", uid)
		s.forget([]imap.UID{uid})
		return nil
	}
	s.w.log.Info("message over the size limit: handled from its header", "uid", uid, "bytes", size)
	msg := s.message(uid, header)
	msg.Size, msg.HeaderOnly = size, true
	if !s.w.handle(ctx, []Fetched{msg})[0] {
		return ctx.Err()
	}
	if err := s.done(ctx, []imap.UID{uid}); err != nil {
		return err
	}
	s.forget([]imap.UID{uid})
	return nil
}

func (s *session) fetchAndHandle(ctx context.Context, uids []imap.UID, size int64) error {
	cfg := &s.w.cfg
	// A large fetch takes longer than a command: allow one more command
	// timeout per 8 MiB, as a slow link of about 1 Mbit/s would need.
	timeout := cfg.CommandTimeout * time.Duration(2+size/(8<<20))
	msgs, err := s.fetchSection(ctx, "UID FETCH BODY.PEEK[]", timeout, uids, bodySection)
	if err != nil {
		return err
	}
	slices.SortFunc(msgs, func(a, b *imapclient.FetchMessageBuffer) int { return cmp.Compare(a.UID, b.UID) })

	// The handled messages are flagged together once the group is done
	// (handOver): one STORE (and MOVE) per group rather than per message,
	// which counts when the server is busy taking in a flood for the same
	// mailbox. A message handled but not yet flagged when the connection
	// or the process dies is offered again, and the handler knows it by
	// its UID.
	returned := map[imap.UID]bool{}
	for _, m := range msgs {
		returned[m.UID] = true
	}
	for _, u := range uids {
		if !returned[u] {
			s.w.log.Warn("the server returned nothing for an unseen message", "uid", u)
			s.forget([]imap.UID{u})
		}
	}
	var group []Fetched
	for _, m := range msgs {
		if m.UID == 0 {
			continue
		}
		raw := m.FindBodySection(bodySection)
		if raw == nil {
			// No body: the message was expunged meanwhile, or the server
			// misbehaves. It stays unseen, and the next full search looks
			// at it again; it holds up nothing meanwhile.
			s.w.log.Warn("the server returned no body for an unseen message", "uid", m.UID)
			s.forget([]imap.UID{m.UID})
			continue
		}
		group = append(group, s.message(m.UID, raw))
	}
	// The group waits for the handler, or goes to it at once if it has
	// none (ahead.go).
	s.w.update(func(st *Stats) { st.Fetched += uint64(len(group)) })
	s.ready = append(s.ready, group...)
	if s.busy == nil && len(s.ready) > 0 {
		if err := s.handOver(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// message is the Message for uid with the given content, with what look
// learnt of it.
func (s *session) message(uid imap.UID, raw []byte) Fetched {
	m := Fetched{Mailbox: s.w.cfg.Mailbox, UIDValidity: s.w.uidValidity, UID: uint32(uid), Raw: raw, Size: int64(len(raw))}
	if p, ok := s.unseen[uid]; ok {
		m.Arrived, m.SetAside = p.arrived, p.setAside
		m.Flood = p.setAside && s.w.flooding()
	} else {
		m.Arrived = time.Now()
	}
	return m
}

// done marks handled messages \Seen and, if configured, moves them. The
// handler has committed, so this is worth finishing even while Run is
// being stopped: it saves handling the messages again after a restart.
func (s *session) done(ctx context.Context, uids []imap.UID) error {
	if len(uids) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.w.cfg.CommandTimeout)
	defer cancel()
	set := imap.UIDSetNum(uids...)
	if err := s.cmd(ctx, "UID STORE +FLAGS.SILENT (\\Seen)", func() error {
		return s.c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close()
	}); err != nil {
		return err
	}
	if to := s.w.cfg.MoveTo; to != "" {
		if err := s.cmd(ctx, "UID MOVE "+to, func() error {
			_, err := s.c.Move(set, to).Wait()
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
