package sender_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/store"
)

// concurrency counts the SMTP transactions a server is inside at once,
// from its fault hook; each one lingers there for a while, as a real
// server's does while it writes the message to disk.
type concurrency struct {
	linger      time.Duration
	now, most   atomic.Int64
	transaction atomic.Int64
}

func (c *concurrency) enter() {
	c.transaction.Add(1)
	n := c.now.Add(1)
	for {
		m := c.most.Load()
		if n <= m || c.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(c.linger)
	c.now.Add(-1)
}

// sentTwice watches every transaction a server receives for a message the
// outbox already has as sent: the sender must never send a message again
// once it has marked it sent.
type sentTwice struct {
	ob *memOutbox
	mu sync.Mutex
	// seen lists the Message-IDs that arrived after being marked sent.
	seen []string
}

func (w *sentTwice) check(m mailserver.Delivery) {
	id := headerID(m.Data)
	for _, o := range w.ob.snapshot() {
		if o.MessageID == id && o.Status == store.OutSent {
			w.mu.Lock()
			w.seen = append(w.seen, id)
			w.mu.Unlock()
		}
	}
}

func (w *sentTwice) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// With several connections, 200 due messages go out over more than one at
// the same time, each exactly once, and each is marked sent.
func TestSendsOverSeveralConnectionsAtOnce(t *testing.T) {
	const n = 200
	var got deliveries
	conc := &concurrency{linger: 2 * time.Millisecond}
	ob := &memOutbox{}
	after := &sentTwice{ob: ob}
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add, Fault: func(m mailserver.Delivery) mailserver.Fault {
		after.check(m)
		conc.enter()
		return mailserver.FaultNone
	}})
	for i := 1; i <= n; i++ {
		ob.add(outMsg(i, fmt.Sprintf("player%d@example.org", i%25)))
	}
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.BatchSize, cfg.Connections = 50, 4
	s := runSender(t, cfg, ob)
	waitFor(t, "all sent", func() bool { return ob.count(store.OutSent) == n })

	if most := conc.most.Load(); most < 2 || most > 4 {
		t.Errorf("at most %d transactions at once, want 2 to 4", most)
	}
	delivered := got.delivered()
	for i := 1; i <= n; i++ {
		if id := outMsg(i).MessageID; len(delivered[id]) != 1 {
			t.Errorf("%s delivered %d times, want once", id, len(delivered[id]))
		}
	}
	if c := conc.transaction.Load(); c != n {
		t.Errorf("%d transactions, want %d", c, n)
	}
	for _, m := range ob.snapshot() {
		if m.Attempts != 1 || m.SentAt.IsZero() {
			t.Errorf("message %d: %d attempts, sent at %v; want 1 attempt and a time", m.ID, m.Attempts, m.SentAt)
		}
	}
	st := s.Stats()
	if st.Sent != n || st.Retried != 0 || st.Connects < 2 || st.Connects > 4 || st.ConnectFailures != 0 {
		t.Errorf("stats %+v: want %d sent over 2 to 4 connections", st, n)
	}
	if bad := after.list(); len(bad) > 0 {
		t.Errorf("sent after being marked sent: %v", bad)
	}
	if bad := ob.misuse(); len(bad) > 0 {
		t.Errorf("outbox misuse: %v", bad)
	}
}

// Temporary failures, 421s and connections dropped before and after the
// server took the message, on several connections at once: every message
// ends sent, none failed, none is sent again once marked sent, and one is
// delivered twice only where the server dropped the connection after
// taking it.
func TestSeveralConnectionsSurviveFaults(t *testing.T) {
	const n = 120
	var got deliveries
	var transactions atomic.Int64
	faults := []mailserver.Fault{
		mailserver.FaultNone, mailserver.FaultTempFail, mailserver.FaultNone, mailserver.FaultShutdown,
		mailserver.FaultNone, mailserver.FaultDropBeforeDelivery, mailserver.FaultNone, mailserver.FaultDropAfterDelivery,
	}
	ob := &memOutbox{}
	after := &sentTwice{ob: ob}
	conc := &concurrency{linger: time.Millisecond}
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add, Fault: func(m mailserver.Delivery) mailserver.Fault {
		after.check(m)
		conc.enter()
		k := transactions.Add(1)
		if k > 3*n {
			return mailserver.FaultNone
		}
		return faults[int(k)%len(faults)]
	}})
	for i := 1; i <= n; i++ {
		ob.add(outMsg(i, fmt.Sprintf("player%d@example.org", i)))
	}
	var fails failures
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.BatchSize, cfg.Connections = 20, 4
	cfg.OnFailed = fails.record
	s := runSender(t, cfg, ob)
	waitFor(t, "all sent", func() bool { return ob.count(store.OutSent) == n })

	droppedAfter := map[string]int{}
	for _, m := range got.all() {
		if m.Fault == mailserver.FaultDropAfterDelivery {
			droppedAfter[headerID(m.Data)]++
		}
	}
	delivered := got.delivered()
	for i := 1; i <= n; i++ {
		id := outMsg(i).MessageID
		if c := len(delivered[id]); c < 1 || c > 1+droppedAfter[id] {
			t.Errorf("%s delivered %d times; the server dropped %d connections after taking it", id, c, droppedAfter[id])
		}
	}
	if f := fails.list(); len(f) != 0 {
		t.Errorf("OnFailed called for %v", f)
	}
	if conc.most.Load() < 2 {
		t.Errorf("never more than one transaction at once")
	}
	st := s.Stats()
	if st.Retried == 0 || st.Sent != n || st.Failed != 0 || st.Connects < 5 {
		t.Errorf("stats %+v: want retries, reconnections and %d sent", st, n)
	}
	if bad := after.list(); len(bad) > 0 {
		t.Errorf("sent after being marked sent: %v", bad)
	}
	if bad := ob.misuse(); len(bad) > 0 {
		t.Errorf("outbox misuse: %v", bad)
	}
}

// When the server goes away in the middle of a drain over several
// connections, the messages not yet sent are released, pending and not
// failed, and go out once it is back.
func TestServerStoppedMidDrain(t *testing.T) {
	const n = 200
	var got deliveries
	ob := &memOutbox{}
	after := &sentTwice{ob: ob}
	conc := &concurrency{linger: 5 * time.Millisecond}
	opts := mailserver.Config{AutoCreateUsers: true, OnMessage: got.add, Logger: discard, Fault: func(m mailserver.Delivery) mailserver.Fault {
		after.check(m)
		conc.enter()
		return mailserver.FaultNone
	}}
	srv, err := mailserver.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.SMTPAddr()
	for i := 1; i <= n; i++ {
		ob.add(outMsg(i, fmt.Sprintf("player%d@example.org", i%25)))
	}
	var fails failures
	cfg := testConfig(t, addr)
	cfg.BatchSize, cfg.Connections = 50, 4
	// Long enough that the released messages are still waiting when they
	// are looked at.
	cfg.MinBackoff, cfg.MaxBackoff = time.Second, 2*time.Second
	cfg.OnFailed = fails.record
	s := runSender(t, cfg, ob)
	waitFor(t, "some sent", func() bool { return ob.count(store.OutSent) >= 30 })
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	// Run records the error of a drain that stopped: from then on,
	// nothing is claimed until the server is back.
	waitFor(t, "a drain stopped by a failed connection", func() bool {
		return strings.HasPrefix(s.Stats().LastError, "connect:") && ob.count(store.OutSending) == 0
	})

	sent, pending := ob.count(store.OutSent), ob.count(store.OutPending)
	if sent+pending != n || sent == n || ob.count(store.OutFailed) != 0 {
		t.Fatalf("with the server gone: %d sent, %d pending, %d failed; want the %d others pending", sent, pending, ob.count(store.OutFailed), n-sent)
	}
	released := 0
	for _, m := range ob.snapshot() {
		if m.Status == store.OutPending && strings.HasPrefix(m.LastError, "not attempted: connect:") {
			released++
		}
	}
	if released == 0 {
		t.Errorf("no message was released as not attempted")
	}
	t.Logf("server stopped after %d sent: %d pending, %d of them released unattempted", sent, pending, released)

	opts.SMTPAddr = addr
	startServer(t, opts)
	waitFor(t, "all sent", func() bool { return ob.count(store.OutSent) == n })
	delivered := got.delivered()
	for _, m := range ob.snapshot() {
		// A message on its way when the server closed may have been
		// taken without the answer reaching the sender: then it was
		// tried again, and is there twice.
		if c := len(delivered[m.MessageID]); c < 1 || (c > 1 && m.Attempts < 2) {
			t.Errorf("%s delivered %d times after %d attempts", m.MessageID, c, m.Attempts)
		}
	}
	if f := fails.list(); len(f) != 0 {
		t.Errorf("OnFailed called for %v", f)
	}
	if bad := after.list(); len(bad) > 0 {
		t.Errorf("sent after being marked sent: %v", bad)
	}
	if bad := ob.misuse(); len(bad) > 0 {
		t.Errorf("outbox misuse: %v", bad)
	}
}

// limitProxy forwards TCP connections to an SMTP server, at most limit
// at a time; beyond that it answers the greeting with 421 and closes, as
// servers with a limit of connections per client do.
type limitProxy struct {
	ln       net.Listener
	upstream string
	limit    int

	mu            sync.Mutex
	open, most    int
	refused       int
	wg            sync.WaitGroup
	conns         map[net.Conn]struct{}
	closed        bool
	acceptStopped chan struct{}
}

func startLimitProxy(t *testing.T, upstream string, limit int) *limitProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &limitProxy{ln: ln, upstream: upstream, limit: limit, conns: map[net.Conn]struct{}{}, acceptStopped: make(chan struct{})}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *limitProxy) serve() {
	defer close(p.acceptStopped)
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.open >= p.limit || p.closed {
			p.refused++
			p.mu.Unlock()
			c.Write([]byte("421 4.7.0 Too many connections from your host\r\n"))
			c.Close()
			continue
		}
		p.open++
		p.most = max(p.most, p.open)
		p.conns[c] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go p.forward(c)
	}
}

func (p *limitProxy) forward(c net.Conn) {
	defer p.wg.Done()
	defer func() {
		p.mu.Lock()
		p.open--
		delete(p.conns, c)
		p.mu.Unlock()
		c.Close()
	}()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); up.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(c, up); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}

func (p *limitProxy) stats() (most, refused int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.most, p.refused
}

func (p *limitProxy) close() {
	p.ln.Close()
	<-p.acceptStopped
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// A server that takes fewer connections than configured is used with the
// ones it takes: the refused ones do not stop the drain or delay the mail.
func TestServerLimitsConnections(t *testing.T) {
	const n = 80
	var got deliveries
	conc := &concurrency{linger: 2 * time.Millisecond}
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add, Fault: func(mailserver.Delivery) mailserver.Fault {
		conc.enter()
		return mailserver.FaultNone
	}})
	proxy := startLimitProxy(t, srv.SMTPAddr(), 2)
	ob := &memOutbox{}
	for i := 1; i <= n; i++ {
		ob.add(outMsg(i, fmt.Sprintf("player%d@example.org", i)))
	}
	cfg := testConfig(t, proxy.ln.Addr().String())
	cfg.BatchSize, cfg.Connections = 20, 4
	// A drain that failed would wait this long: the test would notice.
	cfg.MinBackoff, cfg.MaxBackoff = time.Hour, time.Hour
	s := runSender(t, cfg, ob)
	waitFor(t, "all sent", func() bool { return ob.count(store.OutSent) == n })

	most, refused := proxy.stats()
	if most > 2 || refused == 0 {
		t.Errorf("the proxy had at most %d connections and refused %d; want at most 2, and refusals", most, refused)
	}
	delivered := got.delivered()
	for i := 1; i <= n; i++ {
		if id := outMsg(i).MessageID; len(delivered[id]) != 1 {
			t.Errorf("%s delivered %d times, want once", id, len(delivered[id]))
		}
	}
	st := s.Stats()
	if st.Sent != n || st.Retried != 0 || st.ConnectFailures == 0 || st.LastError != "" {
		t.Errorf("stats %+v: want %d sent, refused connections, and no error", st, n)
	}
	if conc.most.Load() != 2 {
		t.Errorf("at most %d transactions at once, want 2", conc.most.Load())
	}
	if bad := ob.misuse(); len(bad) > 0 {
		t.Errorf("outbox misuse: %v", bad)
	}
}

// BenchmarkDrain measures sending a batch of 200 messages over loopback,
// per message, with one connection and with four: to the embedded server
// as it is (memory only, so the sender's and server's CPU is all there is
// to it), and with each transaction held 2ms before the answer, as a
// server that writes the message to disk first holds it.
func BenchmarkDrain(b *testing.B) {
	srv, err := mailserver.Start(mailserver.Config{AutoCreateUsers: true, Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	slow, err := mailserver.Start(mailserver.Config{AutoCreateUsers: true, Logger: discard, Fault: func(mailserver.Delivery) mailserver.Fault {
		time.Sleep(2 * time.Millisecond)
		return mailserver.FaultNone
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer slow.Close()
	rcpt := func(i int) string { return fmt.Sprintf("p%d@example.org", i%10) }
	for _, conns := range []int{1, 4} {
		b.Run(fmt.Sprintf("embedded/conns=%d", conns), func(b *testing.B) {
			benchDrain(b, srv.SMTPAddr(), conns, rcpt)
		})
	}
	for _, conns := range []int{1, 4} {
		b.Run(fmt.Sprintf("embedded-2ms/conns=%d", conns), func(b *testing.B) {
			benchDrain(b, slow.SMTPAddr(), conns, rcpt)
		})
	}
}

// BenchmarkDrainPostfix is BenchmarkDrain through a real Postfix, which
// writes every message to its queue on disk before it answers.
func BenchmarkDrainPostfix(b *testing.B) {
	stack := mailstack.Start(b, mailstack.Config{})
	if err := stack.AddUser("p", "pw"); err != nil {
		b.Fatal(err)
	}
	for _, conns := range []int{1, 4} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			benchDrain(b, stack.SMTPAddr(), conns, func(i int) string { return stack.Address(fmt.Sprintf("p+%d", i%10)) })
		})
	}
}

func benchDrain(b *testing.B, addr string, conns int, rcpt func(int) string) {
	const batch = 200
	for range b.N {
		b.StopTimer()
		ob := &memOutbox{}
		for i := range batch {
			ob.add(outMsg(i, rcpt(i)))
		}
		s, err := sender.New(sender.Config{URL: "smtp://" + addr, Logger: discard, BatchSize: 50, Connections: conns}, ob, nil)
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		b.StartTimer()
		go func() { s.Run(ctx); close(stopped) }()
		for ob.count(store.OutSent) < batch {
			time.Sleep(100 * time.Microsecond)
		}
		b.StopTimer()
		cancel()
		<-stopped
		if st := s.Stats(); st.Retried != 0 || st.Failed != 0 {
			b.Fatalf("stats %+v: want every message sent at the first attempt", st)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*batch), "µs/msg")
}
