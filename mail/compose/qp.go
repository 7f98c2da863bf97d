package compose

import "bytes"

// qpLine is how many characters a quoted-printable line holds before a
// soft break, whose "=" makes the 76 RFC 2045 allows.
const qpLine = 75

// writeQuotedPrintable writes s quoted-printable, exactly as
// mime/quotedprintable's Writer (text mode) writes s and closes, but a run
// of plain characters at a time where that Writer copies each byte on its
// own: the text and HTML of every copy of every message pass through here.
// Line breaks of any kind become CRLF; the last space or tab before a
// line break, or at the end, is encoded; so is every byte that is not
// printable ASCII, and "=".
//
// One quirk is kept for the bytes' sake: after a CR, an LF is dropped as
// the CR's own even when an encoded byte came between them.
func writeQuotedPrintable(b *bytes.Buffer, s string) {
	col, cr := 0, false
	for k := 0; k < len(s); {
		c := s[k]
		switch {
		case c == '\r' || c == '\n':
			k++
			if c == '\n' && cr {
				cr = false
				continue
			}
			cr = c == '\r'
			b.WriteString("\r\n")
			col = 0
		case qpPlain(s, k):
			j := k + 1
			for j < len(s) && qpPlain(s, j) {
				j++
			}
			for run := s[k:j]; len(run) > 0; {
				if col == qpLine {
					b.WriteString("=\r\n")
					col = 0
				}
				n := min(qpLine-col, len(run))
				b.WriteString(run[:n])
				run, col = run[n:], col+n
			}
			k, cr = j, false
		default:
			if c == ' ' || c == '\t' {
				// A trailing space is written and then encoded: written,
				// it ends a CR's claim on the next LF.
				cr = false
			}
			if qpLine-col < 3 {
				b.WriteString("=\r\n")
				col = 0
			}
			const hex = "0123456789ABCDEF"
			b.Write([]byte{'=', hex[c>>4], hex[c&0x0f]})
			col += 3
			k++
		}
	}
}

// qpPlain reports whether s[k] goes out as it is: printable ASCII but "=",
// or a space or tab not last before a line break or the end.
func qpPlain(s string, k int) bool {
	c := s[k]
	if c >= '!' && c <= '~' && c != '=' {
		return true
	}
	if c != ' ' && c != '\t' {
		return false
	}
	return k+1 < len(s) && s[k+1] != '\r' && s[k+1] != '\n'
}
