package faultproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

const (
	// readChunk is how much one read takes from a socket.
	readChunk = 32 << 10
	// maxHeld bounds what the proxy holds per direction of a connection
	// while it is stalled. Beyond it, it stops reading, and the sender's
	// kernel buffers fill up as they would on a hung network.
	maxHeld = 64 << 10
)

// TCP is a byte proxy on 127.0.0.1 whose network can be made to hang:
// Stall stops every byte in both directions, without closing anything,
// until Resume.
//
// While stalled, the proxy goes on reading what each side sends, up to
// maxHeld bytes per direction, so that it notices a side that closes its
// connection: then it closes the other side at once, as the peer of a
// hung network would learn no sooner anyway, and the bytes held for it are
// dropped. A side that sent more than maxHeld during the stall before it
// closed is noticed only on Resume: the proxy no longer reads it.
type TCP struct {
	upstream string
	ln       net.Listener
	ctx      context.Context // ends pending dials on Close
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond // on mu: the stall, any queue or any connection changed
	stalled bool
	stalls  int
	closed  bool
	conns   map[*tcpConn]struct{}
}

// tcpConn is one client connection and, once dialed, its upstream
// connection. Its fields, but for client, are guarded by the proxy's mu.
type tcpConn struct {
	client   net.Conn
	upstream net.Conn // nil until dialed
	closed   bool
	toUp     queue // client to upstream
	toClient queue // upstream to client
	done     int   // directions finished cleanly (EOF passed on)
}

// queue holds the bytes read from one side and not yet written to the
// other.
type queue struct {
	buf []byte
	eof bool // the source side has no more to send
}

// NewTCP listens on 127.0.0.1:0 and forwards every connection to
// upstream, host:port.
func NewTCP(upstream string) (*TCP, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tcp fault proxy: listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &TCP{
		upstream: upstream,
		ln:       ln,
		ctx:      ctx,
		cancel:   cancel,
		conns:    make(map[*tcpConn]struct{}),
	}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is the address the proxy listens on, host:port.
func (p *TCP) Addr() string { return p.ln.Addr().String() }

// Stall stops every byte in both directions on every connection, open and
// new: new connections are accepted, but upstream is not dialed until
// Resume. Nothing is closed: to both sides the network just hangs.
func (p *TCP) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = true
	p.stalls++
	p.cond.Broadcast()
}

// Resume lets the bytes flow again, those held first.
func (p *TCP) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
	p.cond.Broadcast()
}

// Stalls is how many times Stall was called.
func (p *TCP) Stalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stalls
}

// Conns is the number of connections open now, counting those accepted
// whose upstream is not dialed yet.
func (p *TCP) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// DropAll closes every open connection, both sides, as a network that
// resets them does.
func (p *TCP) DropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		p.closeLocked(c)
	}
}

// Close stops listening, closes every connection and returns once all of
// the proxy's goroutines have ended.
func (p *TCP) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	for c := range p.conns {
		p.closeLocked(c)
	}
	p.mu.Unlock()
	p.cancel()
	p.wg.Wait()
	if err != nil {
		return fmt.Errorf("tcp fault proxy: close: %w", err)
	}
	return nil
}

// closeLocked closes both sides of c and wakes every goroutine of c.
func (p *TCP) closeLocked(c *tcpConn) {
	if c.closed {
		return
	}
	c.closed = true
	c.client.Close()
	if c.upstream != nil {
		c.upstream.Close()
	}
	c.toUp.buf, c.toClient.buf = nil, nil
	delete(p.conns, c)
	p.cond.Broadcast()
}

func (p *TCP) serve() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return
			}
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		c := &tcpConn{client: client}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			client.Close()
			return
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		// The client's bytes are read at once, stall or not, so that a
		// client that gives up during a stall is noticed.
		p.wg.Add(2)
		go p.read(c, client, &c.toUp)
		go p.connect(c)
	}
}

// connect dials upstream for c once the proxy is not stalled, then starts
// the rest of c's pumps.
func (p *TCP) connect(c *tcpConn) {
	defer p.wg.Done()
	p.mu.Lock()
	for p.stalled && !c.closed {
		p.cond.Wait()
	}
	closed := c.closed
	p.mu.Unlock()
	if closed {
		return
	}
	d := net.Dialer{Timeout: dialTimeout}
	up, err := d.DialContext(p.ctx, "tcp", p.upstream)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.closeLocked(c)
		return
	}
	if c.closed {
		up.Close()
		return
	}
	c.upstream = up
	p.wg.Add(3)
	go p.read(c, up, &c.toClient)
	go p.write(c, up, &c.toUp)
	go p.write(c, c.client, &c.toClient)
}

// read moves bytes from src into q, holding at most maxHeld of them.
func (p *TCP) read(c *tcpConn, src net.Conn, q *queue) {
	defer p.wg.Done()
	buf := make([]byte, readChunk)
	for {
		p.mu.Lock()
		for len(q.buf) >= maxHeld && !c.closed {
			p.cond.Wait()
		}
		if c.closed {
			p.mu.Unlock()
			return
		}
		room := min(len(buf), maxHeld-len(q.buf))
		p.mu.Unlock()

		n, err := src.Read(buf[:room])

		p.mu.Lock()
		if c.closed {
			p.mu.Unlock()
			return
		}
		q.buf = append(q.buf, buf[:n]...)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF) && !p.stalled:
			// An orderly end: passed on once the queue is written.
			q.eof = true
		default:
			// A reset, or any end during a stall: the other side is
			// closed now, and what was held for it is dropped.
			p.closeLocked(c)
		}
		p.cond.Broadcast()
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// write moves bytes from q to dst while the proxy is not stalled. At the
// end of q, it half-closes dst; once both directions ended so, c is
// closed.
func (p *TCP) write(c *tcpConn, dst net.Conn, q *queue) {
	defer p.wg.Done()
	var spare []byte
	for {
		p.mu.Lock()
		for !c.closed && (p.stalled || (len(q.buf) == 0 && !q.eof)) {
			p.cond.Wait()
		}
		if c.closed {
			p.mu.Unlock()
			return
		}
		if len(q.buf) == 0 {
			// q.eof: the source is done and everything is written.
			c.done++
			if c.done == 2 {
				p.closeLocked(c)
			}
			p.mu.Unlock()
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			return
		}
		chunk := q.buf
		q.buf = spare[:0]
		p.cond.Broadcast() // room for the reader
		p.mu.Unlock()

		_, err := dst.Write(chunk)
		spare = chunk
		if err != nil {
			p.mu.Lock()
			p.closeLocked(c)
			p.mu.Unlock()
			return
		}
	}
}
