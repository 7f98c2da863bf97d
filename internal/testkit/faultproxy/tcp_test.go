package faultproxy

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer sends back whatever it reads, and closes a connection once its
// client has finished sending and everything is echoed.
type echoServer struct {
	ln       *countingListener
	received atomic.Int64 // bytes read from all connections
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	e := &echoServer{ln: listen(t)}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := e.ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.conns = append(e.conns, c)
			e.mu.Unlock()
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, countingReader{c, &e.received})
			}()
		}
	}()
	t.Cleanup(func() {
		e.ln.Close()
		e.mu.Lock()
		for _, c := range e.conns {
			c.Close()
		}
		e.mu.Unlock()
		e.wg.Wait()
	})
	return e
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (r countingReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.n.Add(int64(n))
	return n, err
}

func startTCP(t *testing.T, upstream string) *TCP {
	t.Helper()
	p, err := NewTCP(upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func dialTCP(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// roundTrip writes msg and reads it back, within waitTimeout.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatalf("write %q: %v", msg, err)
	}
	expectEcho(t, c, msg)
}

func expectEcho(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(waitTimeout))
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("read the echo of %q: %v", msg, err)
	}
	if string(got) != msg {
		t.Fatalf("echo %q, want %q", got, msg)
	}
}

// expectSilence fails t if c gets any byte within quiet.
func expectSilence(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(quiet))
	var b [1]byte
	n, err := c.Read(b[:])
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read through a stalled proxy: %d bytes, %v; want nothing", n, err)
	}
}

// expectClosed fails t unless c's peer has closed the connection.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(waitTimeout))
	if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("connection still open")
	}
}

func TestTCPForwardsBothWays(t *testing.T) {
	e := startEcho(t)
	p := startTCP(t, e.ln.Addr().String())
	c := dialTCP(t, p.Addr())

	// More than the kernel buffers and the proxy's own hold at once, in
	// both directions at the same time.
	data := make([]byte, 8<<20)
	rand.Read(data)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(data)
		if err == nil {
			err = c.CloseWrite()
		}
		errc <- err
	}()
	c.SetReadDeadline(time.Now().Add(waitTimeout))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read the echo: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("echo of %d bytes came back as %d different bytes", len(data), len(got))
	}
	// The half-close went through and back, and both sides are closed.
	eventually(t, "the proxy's connections closed", func() bool { return p.Conns() == 0 && e.ln.open.Load() == 0 })
}

func TestTCPStallHoldsEveryByteUntilResume(t *testing.T) {
	e := startEcho(t)
	p := startTCP(t, e.ln.Addr().String())
	c1 := dialTCP(t, p.Addr())
	roundTrip(t, c1, "hello")

	p.Stall()
	if _, err := io.WriteString(c1, "ping"); err != nil {
		t.Fatal(err)
	}
	expectSilence(t, c1)
	// Nothing reached upstream either.
	if got := e.received.Load(); got != int64(len("hello")) {
		t.Errorf("upstream received %d bytes, want only the %d before the stall", got, len("hello"))
	}
	// A new connection is accepted but goes nowhere.
	c2 := dialTCP(t, p.Addr())
	if _, err := io.WriteString(c2, "pong"); err != nil {
		t.Fatal(err)
	}
	expectSilence(t, c2)
	if got := e.ln.accepted.Load(); got != 1 {
		t.Errorf("upstream accepted %d connections during the stall, want the one from before", got)
	}
	if got := p.Conns(); got != 2 {
		t.Errorf("Conns() = %d during the stall, want 2: nothing is closed", got)
	}

	p.Resume()
	expectEcho(t, c1, "ping")
	expectEcho(t, c2, "pong")
	roundTrip(t, c2, "and more")
	if got := e.ln.accepted.Load(); got != 2 {
		t.Errorf("upstream accepted %d connections, want 2", got)
	}

	p.Stall()
	p.Stall()
	p.Resume()
	roundTrip(t, c1, "again")
	if got := p.Stalls(); got != 3 {
		t.Errorf("Stalls() = %d, want 3", got)
	}
}

// A stalled proxy holds a bounded amount and then reads no more: the
// sender blocks, as on a hung network.
func TestTCPStallBuffersBoundedly(t *testing.T) {
	e := startEcho(t)
	p := startTCP(t, e.ln.Addr().String())
	c := dialTCP(t, p.Addr())
	roundTrip(t, c, "x")
	p.Stall()

	// Far more than loopback's socket buffers can take.
	data := make([]byte, 32<<20)
	var written atomic.Int64
	done := make(chan error, 1)
	go func() {
		for off := 0; off < len(data); off += 1 << 20 {
			n, err := c.Write(data[off : off+1<<20])
			written.Add(int64(n))
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	// Wait until the writer is stuck: no progress over a few quiet spells.
	last, still := int64(-1), 0
	for still < 3 {
		time.Sleep(quiet / 2)
		n := written.Load()
		if n == last {
			still++
		} else {
			last, still = n, 0
		}
		select {
		case err := <-done:
			t.Fatalf("the client wrote all %d bytes (%v) into a stalled proxy", len(data), err)
		default:
		}
	}
	if got := e.received.Load(); got != 1 {
		t.Errorf("upstream received %d bytes, want only the 1 before the stall", got)
	}
	t.Logf("the client got %d MiB into the kernel and the stalled proxy before it blocked", last>>20)

	// After Resume everything flows, in order.
	c.SetReadDeadline(time.Now().Add(waitTimeout))
	readErr := make(chan error, 1)
	go func() {
		got := make([]byte, len(data))
		_, err := io.ReadFull(c, got)
		if err == nil && !bytes.Equal(got, data) {
			err = errors.New("echo differs from what was sent")
		}
		readErr <- err
	}()
	p.Resume()
	if err := <-done; err != nil {
		t.Fatalf("write after Resume: %v", err)
	}
	if err := <-readErr; err != nil {
		t.Fatalf("read after Resume: %v", err)
	}
}

func TestTCPClientLeavingDuringStallClosesUpstream(t *testing.T) {
	e := startEcho(t)
	p := startTCP(t, e.ln.Addr().String())

	quietOne := dialTCP(t, p.Addr())
	roundTrip(t, quietOne, "a")
	talker := dialTCP(t, p.Addr())
	roundTrip(t, talker, "b")
	p.Stall()
	// One accepted during the stall, never dialed upstream.
	pending := dialTCP(t, p.Addr())
	eventually(t, "the proxy accepted the third connection", func() bool { return p.Conns() == 3 })

	// A client that sent a command the stall held, then gave up.
	if _, err := io.WriteString(talker, "unanswered"); err != nil {
		t.Fatal(err)
	}
	expectSilence(t, talker)
	talker.Close()
	eventually(t, "upstream of the talker closed", func() bool { return e.ln.open.Load() == 1 })
	quietOne.Close()
	pending.Close()
	eventually(t, "every connection closed, still stalled", func() bool { return e.ln.open.Load() == 0 && p.Conns() == 0 })
	if got := e.ln.accepted.Load(); got != 2 {
		t.Errorf("upstream accepted %d connections, want 2: the one accepted during the stall is never dialed", got)
	}
	if got := e.received.Load(); got != 2 {
		t.Errorf("upstream received %d bytes, want the 2 before the stall", got)
	}
	// Upstream closing during a stall closes the client side as promptly.
	p.Resume()
	c := dialTCP(t, p.Addr())
	roundTrip(t, c, "c")
	p.Stall()
	e.mu.Lock()
	for _, uc := range e.conns {
		uc.Close()
	}
	e.mu.Unlock()
	expectClosed(t, c)
	eventually(t, "no connection left", func() bool { return p.Conns() == 0 })
}

func TestTCPDropAll(t *testing.T) {
	e := startEcho(t)
	p := startTCP(t, e.ln.Addr().String())
	c1 := dialTCP(t, p.Addr())
	c2 := dialTCP(t, p.Addr())
	roundTrip(t, c1, "one")
	roundTrip(t, c2, "two")
	if got := p.Conns(); got != 2 {
		t.Fatalf("Conns() = %d, want 2", got)
	}

	p.DropAll()
	if got := p.Conns(); got != 0 {
		t.Errorf("Conns() = %d after DropAll, want 0", got)
	}
	expectClosed(t, c1)
	expectClosed(t, c2)
	eventually(t, "upstream sides closed", func() bool { return e.ln.open.Load() == 0 })

	// The proxy itself goes on.
	roundTrip(t, dialTCP(t, p.Addr()), "three")
}

func TestTCPCloseEndsEverything(t *testing.T) {
	e := startEcho(t)
	p, err := NewTCP(e.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	idle := dialTCP(t, p.Addr())
	roundTrip(t, idle, "x")
	holding := dialTCP(t, p.Addr())
	roundTrip(t, holding, "y")
	p.Stall()
	pending := dialTCP(t, p.Addr())
	if _, err := io.WriteString(holding, "held"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the proxy accepted the last connection", func() bool { return p.Conns() == 3 })

	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	checkNoProxyGoroutines(t)
	for _, c := range []net.Conn{idle, holding, pending} {
		expectClosed(t, c)
	}
	eventually(t, "upstream sides closed", func() bool { return e.ln.open.Load() == 0 })
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Error("the proxy still accepts connections after Close")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
