package watcher

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/mafiamail/mafiamail/mail/mailurl"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
)

// logoutTimeout bounds the polite goodbye when Run's context ends.
const logoutTimeout = 5 * time.Second

// session is one connection, from dial to logout.
type session struct {
	w *Watcher
	c *imapclient.Client
	// wake receives a value when the server reports new mail. The
	// client's reader goroutine sends to it and must never block, nor
	// call the client (go-imap issue 668): the channel is buffered and
	// the send never waits.
	wake    chan struct{}
	canIdle bool
	// unseen caches the sender and size of unseen mail, for fair turns
	// through a backlog; a message leaves it once it is handled.
	unseen map[imap.UID]envelope
	// turn is the fair queue through a backlog (see turns); reset once
	// the backlog is gone.
	turn fairQueue
}

// envelope is what the watcher knows of an unseen message before fetching
// it: its sender (the envelope's From, lower case; "" if unknown) and its
// size (-1 if unknown).
type envelope struct {
	from string
	size int64
}

// fairQueue shares the handler among the senders of a backlog, much as
// start-time fair queueing does: each sender has a tag that counts its
// messages taken, and the next message is the oldest of the sender with
// the lowest tag. vtime is the highest tag taken so far. A sender who was
// idle starts just below it: it gains no credit from having been idle, yet
// goes ahead of every sender who is working off a backlog, whose tags are
// at least vtime. So mail from people who write now and then is taken in
// the order it came, and backlogs share what time is left in turns, with
// one place in each batch kept for them.
type fairQueue struct {
	tags  map[string]int64
	vtime int64
}

func (s *session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// drain forgets a pending new-mail signal; the scan that follows looks at
// everything anyway.
func (s *session) drain() {
	select {
	case <-s.wake:
	default:
	}
}

// guard runs fn, and calls abort if ctx ends or d passes before fn returns,
// which makes fn return. It reports whether d passed.
func guard(ctx context.Context, d time.Duration, abort func(), fn func() error) (err error, timedOut bool) {
	var fired atomic.Bool
	t := time.AfterFunc(d, func() {
		fired.Store(true)
		abort()
	})
	stop := context.AfterFunc(ctx, abort)
	err = fn()
	t.Stop()
	stop()
	return err, fired.Load()
}

// do runs one exchange with the server, bounded by d: a server that does
// not answer in time has its connection closed, so that a dead connection
// is noticed rather than waited on for ever.
func (s *session) do(ctx context.Context, d time.Duration, what string, fn func() error) error {
	err, timedOut := guard(ctx, d, func() { s.c.Close() }, fn)
	switch {
	case timedOut:
		return fmt.Errorf("%s: no answer within %v", what, d)
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (s *session) cmd(ctx context.Context, what string, fn func() error) error {
	return s.do(ctx, s.w.cfg.CommandTimeout, what, fn)
}

// runSession connects, logs in and watches until an error or until ctx
// ends. ready is called once the first scan is complete: the connection
// works, and the reconnection backoff can start afresh.
func (w *Watcher) runSession(ctx context.Context, ready func()) error {
	s := &session{w: w, wake: make(chan struct{}, 1)}
	opts := &imapclient.Options{
		TLSConfig: w.tls,
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					s.signal()
				}
			},
		},
	}
	c, err := w.dial(ctx, opts)
	if err != nil {
		return err
	}
	s.c = c
	defer c.Close()

	if err := s.login(ctx); err != nil {
		return err
	}
	if err := s.open(ctx); err != nil {
		return err
	}
	w.update(func(st *Stats) {
		st.Connected = true
		st.Connects++
	})
	w.log.Info("logged in", "uidvalidity", w.uidValidity, "idle", s.canIdle, "move_to", w.cfg.MoveTo)

	first := true
	for {
		s.drain()
		if err := s.scan(ctx); err != nil {
			return err
		}
		if first {
			ready()
			first = false
		}
		w.caughtUp()
		if s.canIdle {
			err = s.idle(ctx)
		} else {
			err = s.poll(ctx)
		}
		w.update(func(st *Stats) { st.CaughtUp = false })
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			s.logout()
			return ctx.Err()
		}
	}
}

// dial opens the connection as the URL policy says: TLS from the start,
// STARTTLS (which must succeed), or plain text on loopback.
func (w *Watcher) dial(ctx context.Context, opts *imapclient.Options) (*imapclient.Client, error) {
	nd := &net.Dialer{Timeout: w.cfg.CommandTimeout}
	switch w.ep.Security {
	case mailurl.TLS:
		td := &tls.Dialer{NetDialer: nd, Config: w.tls}
		conn, err := td.DialContext(ctx, "tcp", w.ep.Addr)
		if err != nil {
			return nil, fmt.Errorf("connect with TLS: %w", err)
		}
		return w.greet(ctx, conn, opts)
	case mailurl.StartTLS:
		conn, err := nd.DialContext(ctx, "tcp", w.ep.Addr)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		// NewStartTLS reads the greeting, sends STARTTLS and does the
		// handshake; it fails, before any credentials are sent, when the
		// server does not offer STARTTLS.
		var c *imapclient.Client
		err, timedOut := guard(ctx, w.cfg.CommandTimeout, func() { conn.Close() }, func() (err error) {
			c, err = imapclient.NewStartTLS(conn, opts)
			return err
		})
		if timedOut {
			err = fmt.Errorf("no answer within %v", w.cfg.CommandTimeout)
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("STARTTLS (required for a server that is not on loopback): %w", err)
		}
		return c, nil
	default:
		conn, err := nd.DialContext(ctx, "tcp", w.ep.Addr)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		return w.greet(ctx, conn, opts)
	}
}

// greet wraps conn in a client and waits for the server's greeting.
func (w *Watcher) greet(ctx context.Context, conn net.Conn, opts *imapclient.Options) (*imapclient.Client, error) {
	c := imapclient.New(conn, opts)
	s := &session{w: w, c: c}
	if err := s.cmd(ctx, "greeting", c.WaitGreeting); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// login authenticates with AUTHENTICATE PLAIN or LOGIN.
func (s *session) login(ctx context.Context) error {
	cfg := &s.w.cfg
	var caps imap.CapSet
	if err := s.cmd(ctx, "CAPABILITY", func() error {
		if caps = s.c.Caps(); caps == nil {
			return errors.New("the server sent no capabilities")
		}
		return nil
	}); err != nil {
		return err
	}
	method := strings.ToLower(cfg.Auth)
	if method == "" {
		method = "login"
		if slices.ContainsFunc(caps.AuthMechanisms(), func(m string) bool { return strings.EqualFold(m, sasl.Plain) }) {
			method = "plain"
		}
	}
	if method == "login" && caps.Has(imap.CapLoginDisabled) {
		return errors.New("the server refuses LOGIN (LOGINDISABLED) and the watcher may not use AUTHENTICATE PLAIN")
	}
	var err error
	if method == "plain" {
		err = s.cmd(ctx, "AUTHENTICATE PLAIN", func() error {
			return s.c.Authenticate(sasl.NewPlainClient("", cfg.Username, cfg.Password))
		})
	} else {
		err = s.cmd(ctx, "LOGIN", func() error { return s.c.Login(cfg.Username, cfg.Password).Wait() })
	}
	if err != nil {
		return fmt.Errorf("log in as %q: %w", cfg.Username, err)
	}
	return nil
}

// open selects the mailbox, makes sure MoveTo exists, and learns whether
// IDLE can be used. Capabilities are asked again: servers may announce
// more after login.
func (s *session) open(ctx context.Context) error {
	cfg := &s.w.cfg
	var sel *imap.SelectData
	if err := s.cmd(ctx, "SELECT "+cfg.Mailbox, func() (err error) {
		sel, err = s.c.Select(cfg.Mailbox, nil).Wait()
		return err
	}); err != nil {
		return err
	}
	s.w.setUIDValidity(sel.UIDValidity)

	if cfg.MoveTo != "" {
		var found []*imap.ListData
		if err := s.cmd(ctx, "LIST "+cfg.MoveTo, func() (err error) {
			found, err = s.c.List("", cfg.MoveTo, nil).Collect()
			return err
		}); err != nil {
			return err
		}
		if len(found) == 0 {
			if err := s.cmd(ctx, "CREATE "+cfg.MoveTo, func() error { return s.c.Create(cfg.MoveTo, nil).Wait() }); err != nil {
				return err
			}
			s.w.log.Info("created the folder for processed mail", "folder", cfg.MoveTo)
		}
	}

	var caps imap.CapSet
	if err := s.cmd(ctx, "CAPABILITY", func() error {
		caps = s.c.Caps()
		return nil
	}); err != nil {
		return err
	}
	s.canIdle = !cfg.DisableIdle && caps.Has(imap.CapIdle)
	return nil
}

// scan offers every unseen message that is due to the handler, in UID
// order, in batches.
func (s *session) scan(ctx context.Context) error {
	if err := s.moveLeftovers(ctx); err != nil {
		return err
	}
	for {
		unseen, err := s.search(ctx, "UID SEARCH UNSEEN", &imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}})
		if err != nil {
			return err
		}
		slices.Sort(unseen)
		due, _ := s.w.due(unseen, time.Now())
		if len(due) > 0 {
			s.w.log.Debug("unseen mail", "unseen", len(unseen), "due", len(due))
		}
		if len(due) <= s.w.cfg.BatchSize {
			s.turn = fairQueue{}
			if len(due) == 0 {
				return nil
			}
			return s.batch(ctx, due)
		}
		// A backlog: one sender's flood, or a crowd of auto-responders,
		// must not hold up everyone else's mail behind it. The next batch
		// takes the senders in fair turns, each sender's mail in the order
		// it came, and then the mailbox is searched again, so that mail
		// arriving meanwhile gets its turn.
		next, err := s.turns(ctx, due, min(s.w.cfg.BatchSize, turnBatch))
		if err != nil {
			return err
		}
		if err := s.batch(ctx, next); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// turnBatch bounds a batch taken by turns: mail that arrives during a
// backlog waits for at most this many messages before its sender's turn.
const turnBatch = 10

// turns returns the next limit of uids (ascending) in the order in which
// senders take fair turns (fairQueue), each sender's mail oldest first.
// The senders come from the envelopes, fetched once per message with the
// sizes that batch needs.
func (s *session) turns(ctx context.Context, uids []imap.UID, limit int) ([]imap.UID, error) {
	if s.unseen == nil {
		s.unseen = map[imap.UID]envelope{}
	}
	want := make(map[imap.UID]bool, len(uids))
	var unknown []imap.UID
	for _, u := range uids {
		want[u] = true
		if _, ok := s.unseen[u]; !ok {
			unknown = append(unknown, u)
		}
	}
	for u := range s.unseen {
		if !want[u] {
			delete(s.unseen, u) // handled, or gone
		}
	}
	const chunk = 1000
	for len(unknown) > 0 {
		n := min(len(unknown), chunk)
		var envs []*imapclient.FetchMessageBuffer
		if err := s.cmd(ctx, "UID FETCH ENVELOPE", func() (err error) {
			envs, err = s.c.Fetch(imap.UIDSetNum(unknown[:n]...), &imap.FetchOptions{UID: true, Envelope: true, RFC822Size: true}).Collect()
			return err
		}); err != nil {
			return nil, err
		}
		for _, m := range envs {
			from := ""
			if m.Envelope != nil && len(m.Envelope.From) > 0 {
				from = strings.ToLower(m.Envelope.From[0].Addr())
			}
			s.unseen[m.UID] = envelope{from: from, size: m.RFC822Size}
		}
		for _, u := range unknown[:n] {
			if _, ok := s.unseen[u]; !ok {
				s.unseen[u] = envelope{size: -1} // no envelope came back: a sender of its own
			}
		}
		unknown = unknown[n:]
	}
	queues := map[string][]imap.UID{}
	var order []string // senders by their first message
	for _, u := range uids {
		from := s.unseen[u].from
		if from == "" {
			from = fmt.Sprintf("uid:%d", u)
		}
		if _, ok := queues[from]; !ok {
			order = append(order, from)
		}
		queues[from] = append(queues[from], u)
	}
	return s.turn.take(order, queues, min(limit, len(uids))), nil
}

// take picks limit messages from queues, the senders' mail oldest first;
// order lists the senders by their oldest message, which breaks ties.
func (f *fairQueue) take(order []string, queues map[string][]imap.UID, limit int) []imap.UID {
	if f.tags == nil {
		f.tags = map[string]int64{}
	}
	for from, tag := range f.tags {
		if _, waiting := queues[from]; !waiting && tag <= f.vtime {
			delete(f.tags, from) // it would start again below vtime anyway
		}
	}
	fresh := make(map[string]bool, len(order))
	for _, from := range order {
		if tag, ok := f.tags[from]; !ok || tag < f.vtime {
			f.tags[from] = f.vtime - 1
			fresh[from] = true
		}
	}
	// The last place of a batch is kept for the senders working off a
	// backlog, when one waits and has had no place yet: however many
	// people write meanwhile, a backlog still moves.
	lowest := func(keep func(from string) bool) string {
		best := ""
		for _, from := range order {
			if keep(from) && (best == "" || f.tags[from] < f.tags[best]) {
				best = from
			}
		}
		return best
	}
	taken := make(map[string]int, len(order))
	backlogTaken := false
	out := make([]imap.UID, 0, limit)
	for len(out) < limit {
		waiting := func(from string) bool { return taken[from] < len(queues[from]) }
		best := ""
		if len(out) == limit-1 && !backlogTaken {
			best = lowest(func(from string) bool { return waiting(from) && !fresh[from] })
		}
		if best == "" {
			best = lowest(waiting)
		}
		if best == "" {
			break
		}
		backlogTaken = backlogTaken || !fresh[best]
		out = append(out, queues[best][taken[best]])
		taken[best]++
		f.vtime = max(f.vtime, f.tags[best])
		f.tags[best]++
	}
	return out
}

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

// sizes returns the size of each of uids, in UID order: from the envelopes
// fetched for turns when they are all known, otherwise asked of the server.
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
	var header []byte
	for _, m := range msgs {
		if m.UID == uid {
			header = m.FindBodySection(headerSection)
		}
	}
	if header == nil {
		s.w.log.Warn("the server returned no header for an unseen message", "uid", uid)
		return nil
	}
	s.w.log.Info("message over the size limit: handled from its header", "uid", uid, "bytes", size)
	msg := Message{Mailbox: s.w.cfg.Mailbox, UIDValidity: s.w.uidValidity, UID: uint32(uid), Raw: header,
		Size: size, HeaderOnly: true}
	if !s.w.handle(ctx, msg) {
		return ctx.Err()
	}
	return s.done(ctx, []imap.UID{uid})
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

	// The handled messages are flagged together once the group is done:
	// one STORE (and MOVE) per group rather than per message, which counts
	// when the server is busy taking in a flood for the same mailbox. A
	// message handled but not yet flagged when the connection or the
	// process dies is offered again, and the handler knows it by its UID.
	var handled []imap.UID
	var stopped error
	for _, m := range msgs {
		if m.UID == 0 {
			continue
		}
		raw := m.FindBodySection(bodySection)
		if raw == nil {
			// No body: the message was expunged meanwhile, or the server
			// misbehaves. It stays unseen and is looked at again.
			s.w.log.Warn("the server returned no body for an unseen message", "uid", m.UID)
			continue
		}
		msg := Message{Mailbox: cfg.Mailbox, UIDValidity: s.w.uidValidity, UID: uint32(m.UID), Raw: raw, Size: int64(len(raw))}
		if !s.w.handle(ctx, msg) {
			if stopped = ctx.Err(); stopped != nil {
				break
			}
			continue
		}
		handled = append(handled, m.UID)
	}
	if err := s.done(ctx, handled); err != nil {
		return err
	}
	return stopped
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

// wakeAfter is how long to wait for new mail before looking again: the
// refresh or poll interval, or less when a deferred message is due sooner.
func (s *session) wakeAfter(interval time.Duration) time.Duration {
	if next := s.w.nextRetry(); !next.IsZero() {
		if d := time.Until(next); d < interval {
			return max(d, time.Millisecond)
		}
	}
	return interval
}

// idle waits in IDLE for new mail, for the refresh interval, for a
// deferred message to become due, or for ctx to end. It leaves IDLE with
// DONE and, after a refresh interval, checks the connection with NOOP.
func (s *session) idle(ctx context.Context) error {
	var cmd *imapclient.IdleCommand
	if err := s.cmd(ctx, "IDLE", func() (err error) {
		cmd, err = s.c.Idle()
		return err
	}); err != nil {
		return err
	}
	s.w.update(func(st *Stats) { st.Idling = true })
	t := time.NewTimer(s.wakeAfter(s.w.cfg.IdleRefresh))
	defer t.Stop()
	refresh := false
	select {
	case <-ctx.Done():
	case <-s.wake:
	case <-t.C:
		refresh = true
	case <-s.c.Closed():
		return errors.New("the server closed the connection during IDLE")
	}
	s.w.update(func(st *Stats) { st.Idling = false })
	// DONE is sent even when ctx has ended, so that LOGOUT can follow.
	stopCtx := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		stopCtx, cancel = context.WithTimeout(stopCtx, logoutTimeout)
		defer cancel()
	}
	if err := s.cmd(stopCtx, "DONE", func() error {
		if err := cmd.Close(); err != nil {
			return err
		}
		return cmd.Wait()
	}); err != nil {
		return err
	}
	if refresh && ctx.Err() == nil {
		return s.cmd(ctx, "NOOP", func() error { return s.c.Noop().Wait() })
	}
	return nil
}

// poll waits for the poll interval (or a deferred message) without a
// command in progress.
func (s *session) poll(ctx context.Context) error {
	t := time.NewTimer(s.wakeAfter(s.w.cfg.PollInterval))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-s.wake:
	case <-t.C:
	case <-s.c.Closed():
		return errors.New("the server closed the connection")
	}
	return nil
}

// logout says goodbye politely, briefly.
func (s *session) logout() {
	ctx, cancel := context.WithTimeout(context.Background(), logoutTimeout)
	defer cancel()
	if err := s.cmd(ctx, "LOGOUT", func() error { return s.c.Logout().Wait() }); err != nil {
		s.w.log.Debug("LOGOUT failed", "err", err)
	}
}
