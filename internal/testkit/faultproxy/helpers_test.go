package faultproxy

import (
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// waitTimeout bounds every wait for something that should happen soon: it
// only matters when something is broken, so it is generous for a loaded
// two-core machine.
const waitTimeout = 30 * time.Second

// quiet is how long a test watches for something that must not happen,
// such as an answer through a stalled proxy. A correct proxy passes however
// short it is; a broken one is caught the more surely the longer it is.
const quiet = 400 * time.Millisecond

// eventually polls cond until it holds or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until %s", waitTimeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// proxyGoroutineMarks name the goroutines the proxies start: their stacks
// contain one of these.
var proxyGoroutineMarks = []string{
	"faultproxy.(*SMTP).",
	"faultproxy.(*session).",
	"faultproxy.(*TCP).",
}

// proxyGoroutines returns the stacks of the proxies' goroutines still
// alive.
func proxyGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var left []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, mark := range proxyGoroutineMarks {
			if strings.Contains(g, mark) {
				left = append(left, g)
				break
			}
		}
	}
	return left
}

// checkNoProxyGoroutines fails t if a goroutine of a proxy outlives its
// Close. A goroutine that has called wg.Done may still be on its way out,
// so the check polls.
func checkNoProxyGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		left := proxyGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d proxy goroutines left after Close:\n\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countingListener counts the connections it accepted and those of them
// still open, to tell whether a proxy closed its upstream side.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
	open     atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.accepted.Add(1)
	l.open.Add(1)
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

func listen(t testing.TB) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &countingListener{Listener: ln}
}
