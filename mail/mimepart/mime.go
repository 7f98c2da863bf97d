// Package mimepart writes MIME messages (RFC 2045, RFC 2046) byte for byte
// as go-message writes them, without its allocations: header fields folded,
// multipart parts with boundaries derived from a message's ID, text parts
// quoted-printable by mime/quotedprintable, format=flowed plain text
// (RFC 3676), base64 pictures and iCalendar parts (RFC 5545). It knows
// nothing of games: what a message says and which header fields it
// carries is its caller's.
package mimepart

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"slices"
	"strings"
)

// CalendarPart adds an iCalendar object (see CalendarEvent) as a part of its own of
// the multipart with the boundary, an attachment named filename: Gmail,
// Outlook and Apple Mail offer to add it to the calendar, or update the
// event they have, and every other client shows it as a file.
func (w *Writer) CalendarPart(boundary, filename string, cal []byte) {
	w.Part(boundary)
	w.Field("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	w.Field("Content-Transfer-Encoding", "base64")
	w.Field("Content-Type", mime.FormatMediaType("text/calendar",
		map[string]string{"charset": "utf-8", "method": "PUBLISH"}))
	w.EndHeader()
	w.Base64(cal)
}

// Image is a PNG picture the HTML part shows by its Content-ID.
type Image struct {
	CID  string
	PNG  []byte
	Name string
}

// Related writes, as a part of the multipart with the boundary outer, the
// HTML part with the pictures it shows as one multipart/related (RFC 2387),
// the HTML first, each picture inline with its Content-ID, so that Gmail,
// Outlook and Apple Mail show them in place and list no attachment. Its
// boundary derives from the message's ID too.
func (w *Writer) Related(outer, id, html string, htmlParams map[string]string, images []Image) {
	boundary := Boundary(id+"/related", html)
	w.Part(outer)
	w.Field("Content-Type", mime.FormatMediaType("multipart/related",
		map[string]string{"boundary": boundary, "type": "text/html"}))
	w.EndHeader()
	w.Part(boundary)
	w.TextPart("text/html", html, htmlParams)
	for _, img := range images {
		w.Part(boundary)
		w.Field("Content-Id", "<"+img.CID+">")
		w.Field("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": img.Name}))
		w.Field("Content-Transfer-Encoding", "base64")
		w.Field("Content-Type", "image/png")
		w.EndHeader()
		w.Base64(img.PNG)
	}
	w.Close(boundary)
}

// Writer writes a MIME message into one buffer, byte for byte as
// go-message's Writer writes it: header fields folded as its textproto
// folds them, each part opened by its boundary line (a CRLF before every
// boundary but the first of the message), quoted-printable by
// mime/quotedprintable, and base64 in lines of 76 characters. The zero
// Writer is ready to write a message.
type Writer struct {
	b bytes.Buffer
	// opened are the boundaries with a part begun: their next boundary
	// line starts on a line of its own. The first part of a multipart
	// starts right under the header that names its boundary.
	opened []string
	// err is the first field that cannot be written.
	err error
}

// Field writes one header field, folded (RFC 5322 2.2.3). The name must be
// in canonical form (textproto.CanonicalMIMEHeaderKey), as go-message
// writes it.
func (w *Writer) Field(k, v string) {
	if i := strings.IndexAny(v, "\r\n"); i >= 0 && w.err == nil {
		w.err = fmt.Errorf("header field %s: value contains \\r\\n (at %d)", k, i)
	}
	w.b.WriteString(k)
	w.b.WriteString(": ")
	if v == "" {
		w.b.WriteString("\r\n")
		return
	}
	first := true
	for len(v) > 0 {
		keylen := 0
		if first {
			keylen = len(k) + 2
		}
		// First try with a soft limit; a fold that would change the value
		// tries the hard limit.
		l, fold, next, ok := foldLine(v, preferredHeaderLen-keylen)
		if !ok {
			l, fold, next, _ = foldLine(v, maxHeaderLen-keylen)
		}
		w.b.WriteString(l)
		w.b.WriteString(fold)
		v = next
		first = false
	}
}

// The lengths of a header line: folded at the preferred one where there is
// whitespace to fold at, at the most at the hard one.
const (
	preferredHeaderLen = 76
	maxHeaderLen       = 998
)

// foldLine cuts the first line of a header field value, at the last
// whitespace within maxlen, as go-message's textproto does: it returns the
// line, what ends it ("\r\n", or "\r\n " where it had to cut a word,
// which ok then reports), and the rest.
func foldLine(v string, maxlen int) (line, fold, next string, ok bool) {
	ok = true
	foldBefore := maxlen + 1
	foldAt := len(v)
	if foldBefore > len(v) {
		if v[len(v)-1] != '\n' {
			fold = "\r\n"
		}
	} else {
		foldAt = strings.LastIndexAny(v[:foldBefore], " \t\n")
		if foldAt == 0 {
			// The whitespace found is the previous fold's.
			foldAt = foldBefore - 1
		} else if foldAt < 0 {
			foldAt = foldBefore - 2
		}
		switch v[foldAt] {
		case ' ', '\t':
			if v[foldAt-1] != '\n' {
				fold = "\r\n"
			}
		case '\n':
		default:
			fold = "\r\n "
			ok = false
		}
	}
	return v[:foldAt], fold, v[foldAt:], ok
}

// EndHeader ends a header: the body follows.
func (w *Writer) EndHeader() { w.b.WriteString("\r\n") }

// Part opens a part of the multipart with the boundary: its header
// follows.
func (w *Writer) Part(boundary string) {
	if slices.Contains(w.opened, boundary) {
		w.b.WriteString("\r\n")
	} else {
		w.opened = append(w.opened, boundary)
	}
	w.b.WriteString("--")
	w.b.WriteString(boundary)
	w.b.WriteString("\r\n")
}

// Close ends the multipart with the boundary.
func (w *Writer) Close(boundary string) {
	w.b.WriteString("\r\n--")
	w.b.WriteString(boundary)
	w.b.WriteString("--\r\n")
}

// TextPart writes the header and the quoted-printable body of a text
// part, whose boundary line is written.
func (w *Writer) TextPart(typ, body string, params map[string]string) {
	w.Field("Content-Type", mime.FormatMediaType(typ, params))
	w.Field("Content-Disposition", "inline")
	w.Field("Content-Transfer-Encoding", "quoted-printable")
	w.EndHeader()
	// Text mode (the Writer's default): every line break of the body,
	// LF or CRLF, goes out as CRLF, and trailing white space is encoded.
	qw := quotedprintable.NewWriter(&w.b)
	if _, err := qw.Write([]byte(body)); err != nil && w.err == nil {
		w.err = fmt.Errorf("%s part: %w", typ, err)
	}
	if err := qw.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("%s part: %w", typ, err)
	}
}

// Base64 writes data in base64, in lines of 76 characters with no line
// break after the last.
func (w *Writer) Base64(data []byte) {
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		w.b.WriteString(enc[:76])
		w.b.WriteString("\r\n")
		enc = enc[76:]
	}
	w.b.WriteString(enc)
}

// Boundary derives a multipart boundary from a message's ID (its
// Message-ID, with a suffix for each multipart in it), so that writing the
// same message twice gives the same bytes. A body
// that happens to hold it (a post can be written by anyone who can guess a
// Message-ID) gets the next candidate.
func Boundary(id string, bodies ...string) string {
	for n := 0; ; n++ {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", id, n)))
		b := "mafiamail-" + hex.EncodeToString(sum[:12])
		clash := false
		for _, body := range bodies {
			if strings.Contains(body, b) {
				clash = true
			}
		}
		if !clash {
			return b
		}
	}
}

// Grow makes room for n more bytes.
func (w *Writer) Grow(n int) { w.b.Grow(n) }

// Bytes returns the message written, or the first error met writing it.
func (w *Writer) Bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.b.Bytes(), nil
}
