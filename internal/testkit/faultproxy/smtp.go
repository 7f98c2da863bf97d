package faultproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// idleTimeout ends a session whose client or upstream has said nothing
	// for this long, in the middle of anything: RFC 5321's shortest server
	// timeout, generous for tests, and still an end.
	idleTimeout = 5 * time.Minute
	dialTimeout = 30 * time.Second
)

// SMTP is an SMTP proxy on 127.0.0.1 that injects faults into chosen mail
// transactions. It forwards a session in lockstep, one command and its
// reply at a time, and takes PIPELINING, CHUNKING, BINARYMIME and STARTTLS
// out of upstream's EHLO reply so that every client talks in a way it can
// follow. Each client connection gets its own upstream connection, dialed
// when the client connects.
//
// Once upstream has accepted a recipient, the proxy answers DATA with 354
// itself and holds the message in memory up to its final dot; only then
// does it decide, by the transaction's fault, whether upstream gets the
// message at all. Without a recipient, upstream answers DATA itself.
type SMTP struct {
	upstream string
	decide   func(from string) Fault
	log      *slog.Logger
	limits   limits

	ln     net.Listener
	ctx    context.Context // ends pending dials on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{} // both sides of every session

	injected [numFaults]atomic.Int64
}

// NewSMTP listens on 127.0.0.1:0 and forwards every connection to
// upstream, host:port. decide is called for each MAIL FROM command with the
// envelope sender ("" for the null sender) and chooses the transaction's
// fault; nil means no faults. decide may be called from several
// connections at once. log may be nil.
func NewSMTP(upstream string, decide func(from string) Fault, log *slog.Logger) (*SMTP, error) {
	return newSMTP(upstream, decide, log, limits{timeout: idleTimeout, maxBody: maxBody})
}

// limits are the bounds of every session; tests lower them.
type limits struct {
	timeout time.Duration // of every read and write
	maxBody int           // bytes of a message, final dot included
}

func newSMTP(upstream string, decide func(from string) Fault, log *slog.Logger, lim limits) (*SMTP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("smtp fault proxy: listen: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &SMTP{
		upstream: upstream,
		decide:   decide,
		log:      log.With("proxy", "smtp", "addr", ln.Addr().String()),
		limits:   lim,
		ln:       ln,
		ctx:      ctx,
		cancel:   cancel,
		conns:    make(map[net.Conn]struct{}),
	}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the address the proxy listens on, host:port.
func (p *SMTP) Addr() string { return p.ln.Addr().String() }

// Injected counts the faults actually injected, by kind; kinds never
// injected are left out. A fault that was chosen but could not happen (a
// TempFailRcpt in a transaction without RCPT, a DropAfterDelivery whose
// message upstream refused) is not counted.
func (p *SMTP) Injected() map[Fault]int64 {
	m := make(map[Fault]int64)
	for f := range p.injected {
		if n := p.injected[f].Load(); n > 0 {
			m[Fault(f)] = n
		}
	}
	return m
}

// Close stops listening, closes every connection of every session and
// returns once all of the proxy's goroutines have ended.
func (p *SMTP) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	if err != nil {
		return fmt.Errorf("smtp fault proxy: close: %w", err)
	}
	return nil
}

func (p *SMTP) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if p.isClosed() {
				return
			}
			// Out of file descriptors and the like: wait a little, as
			// net/http does, rather than spin.
			p.log.Warn("accept", "err", err)
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if !p.track(c) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go p.handle(c)
	}
}

func (p *SMTP) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// track registers c for Close; false means the proxy is closed and c must
// not be used.
func (p *SMTP) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *SMTP) release(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// handle runs one client's session; when it returns, both connections
// are closed.
func (p *SMTP) handle(client net.Conn) {
	defer p.wg.Done()
	defer p.release(client)
	log := p.log.With("client", client.RemoteAddr().String())

	d := net.Dialer{Timeout: dialTimeout}
	up, err := d.DialContext(p.ctx, "tcp", p.upstream)
	if err != nil {
		log.Warn("dial upstream", "upstream", p.upstream, "err", err)
		// What a server that cannot serve now says; the client will
		// try again later.
		tc := timeoutConn{client, p.limits.timeout}
		_, _ = tc.Write([]byte("421 4.4.1 Upstream server unavailable, try again later\r\n"))
		return
	}
	if !p.track(up) {
		up.Close()
		return
	}
	defer p.release(up)

	s := &session{
		p:   p,
		log: log,
		cr:  bufio.NewReaderSize(timeoutConn{client, p.limits.timeout}, lineBuffer),
		cw:  timeoutConn{client, p.limits.timeout},
		ur:  bufio.NewReaderSize(timeoutConn{up, p.limits.timeout}, lineBuffer),
		uw:  timeoutConn{up, p.limits.timeout},
	}
	err = s.run()
	switch {
	case err == nil:
		log.Debug("session ended")
	case errors.Is(err, errInjectedClose):
		log.Debug("session ended by an injected fault")
	default:
		log.Debug("session ended", "err", err)
	}
}

func (p *SMTP) count(f Fault, log *slog.Logger, from string) {
	p.injected[f].Add(1)
	log.Info("fault injected", "fault", f.String(), "from", from)
}
