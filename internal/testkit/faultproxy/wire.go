package faultproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

const (
	// lineBuffer is the size of the buffered readers on both sides, and so
	// the longest command or reply line the proxy takes. RFC 5321 allows
	// 512 octets for a command and SASL responses grow larger; nothing
	// legitimate comes near this.
	lineBuffer = 64 << 10
	// maxReplyLines bounds a multi-line reply, so that a broken upstream
	// cannot make the proxy gather lines for ever.
	maxReplyLines = 1000
	// maxBody bounds a buffered message, final dot included. Bodies of
	// 40 MiB are expected; twice Postfix's limit in mailstack is plenty.
	maxBody = 128 << 20
)

var (
	errLineTooLong  = errors.New("line too long")
	errBodyTooLarge = errors.New("message too large")
)

// timeoutConn sets a fresh deadline before every read and every write, so
// that a peer that stops talking in the middle of anything ends the session
// after timeout instead of holding it for ever.
type timeoutConn struct {
	net.Conn
	timeout time.Duration
}

func (c timeoutConn) Read(b []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c timeoutConn) Write(b []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// readLine returns the next line, its line ending included, as a slice of
// r's buffer: valid until the next read from r.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, errLineTooLong
	}
	return line, err
}

// reply is one SMTP reply as the server sent it.
type reply struct {
	code  int
	lines [][]byte // raw, line endings included
}

// readReply reads one reply, all of its lines: every line but the last
// has a "-" after the code.
func readReply(r *bufio.Reader) (reply, error) {
	var rep reply
	for {
		line, err := readLine(r)
		if err != nil {
			return reply{}, fmt.Errorf("read reply: %w", err)
		}
		if len(line) < 3 || !isDigit(line[0]) || !isDigit(line[1]) || !isDigit(line[2]) {
			return reply{}, fmt.Errorf("read reply: malformed line %q", line)
		}
		rep.lines = append(rep.lines, bytes.Clone(line))
		if len(line) > 3 && line[3] == '-' {
			if len(rep.lines) >= maxReplyLines {
				return reply{}, fmt.Errorf("read reply: more than %d lines", maxReplyLines)
			}
			continue
		}
		rep.code = int(line[0]-'0')*100 + int(line[1]-'0')*10 + int(line[2]-'0')
		return rep, nil
	}
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

func (rep reply) bytes() []byte {
	return bytes.Join(rep.lines, nil)
}

// hiddenExtensions are the EHLO keywords the proxy takes out of upstream's
// answer. Without PIPELINING the client waits for every reply, which is
// what lockstep proxying needs; without CHUNKING and BINARYMIME it sends
// DATA, never BDAT; without STARTTLS it stays in plain text the proxy can
// read.
var hiddenExtensions = map[string]bool{
	"PIPELINING": true,
	"CHUNKING":   true,
	"BINARYMIME": true,
	"STARTTLS":   true,
}

// hideExtensions returns a successful EHLO reply without the lines of
// hiddenExtensions, its continuation marks set again for the lines left.
// Other replies are returned as they are.
func hideExtensions(rep reply) reply {
	if rep.code != 250 || len(rep.lines) < 2 {
		return rep
	}
	texts := []string{lineText(rep.lines[0])}
	for _, l := range rep.lines[1:] {
		text := lineText(l)
		keyword, _, _ := strings.Cut(text, " ")
		if hiddenExtensions[strings.ToUpper(keyword)] {
			continue
		}
		texts = append(texts, text)
	}
	out := reply{code: rep.code, lines: make([][]byte, len(texts))}
	for i, text := range texts {
		sep := "-"
		if i == len(texts)-1 {
			sep = " "
		}
		out.lines[i] = fmt.Appendf(nil, "%d%s%s\r\n", rep.code, sep, text)
	}
	return out
}

// lineText is a reply line without its code, separator and line ending.
func lineText(line []byte) string {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) <= 4 {
		return ""
	}
	return string(line[4:])
}

// commandVerb is a command line's first word, in upper case.
func commandVerb(line []byte) string {
	line = bytes.TrimRight(line, "\r\n")
	verb, _, _ := bytes.Cut(line, []byte(" "))
	return strings.ToUpper(string(verb))
}

// envelopeSender is the address of a MAIL FROM command, without its angle
// brackets: "" for the null sender.
func envelopeSender(line []byte) string {
	s := strings.TrimRight(string(line), "\r\n")
	_, rest, ok := strings.Cut(s, ":")
	if !ok {
		return ""
	}
	rest = strings.TrimLeft(rest, " ")
	if addr, ok := strings.CutPrefix(rest, "<"); ok {
		addr, _, _ = strings.Cut(addr, ">")
		return addr
	}
	addr, _, _ := strings.Cut(rest, " ")
	return addr
}

// body is a message as the client sent it, in segments of up to
// segmentSize bytes: a 40 MiB message is copied once on its way in, not
// again each time a single buffer would grow.
type body struct {
	segs [][]byte
	size int
}

const segmentSize = 1 << 20

func (b *body) write(p []byte) {
	b.size += len(p)
	for len(p) > 0 {
		if n := len(b.segs); n == 0 || len(b.segs[n-1]) == cap(b.segs[n-1]) {
			b.segs = append(b.segs, make([]byte, 0, segmentSize))
		}
		last := &b.segs[len(b.segs)-1]
		k := min(len(p), cap(*last)-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
}

func (b *body) writeTo(w io.Writer) error {
	for _, seg := range b.segs {
		if _, err := w.Write(seg); err != nil {
			return err
		}
	}
	return nil
}

// readBody reads a message from DATA's 354 to its final dot line, which it
// includes. Dot-stuffed lines stay as they are: the bytes are forwarded,
// not interpreted. A bare LF ends a line as CRLF does, as it does for
// Postfix. When the message grows past limit, readBody still reads to the
// final dot, so that the session can go on, and returns errBodyTooLarge.
func readBody(r *bufio.Reader, limit int) (*body, error) {
	b := &body{}
	atLineStart := true
	tooLarge := false
	for {
		chunk, err := r.ReadSlice('\n')
		whole := err == nil
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("read message: %w", err)
		}
		if atLineStart && whole && (string(chunk) == ".\r\n" || string(chunk) == ".\n") {
			if tooLarge {
				return nil, errBodyTooLarge
			}
			b.write(chunk)
			return b, nil
		}
		if !tooLarge && b.size+len(chunk) > limit {
			tooLarge = true
			b = &body{}
		}
		if !tooLarge {
			b.write(chunk)
		}
		atLineStart = whole
	}
}
