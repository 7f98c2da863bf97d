package store

import "testing"

// headerField reads one field of a message's header as net/mail would:
// any case, folded over lines, CRLF or LF, the header alone.
func TestHeaderField(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		bad       bool
	}{
		{"From: a@x\r\nMessage-ID: <m1@x>\r\n\r\nbody", "<m1@x>", false},
		{"message-id:\r\n <m2@x>\r\nSubject: s\r\n\r\n", "<m2@x>", false},
		{"Subject: s\nMESSAGE-ID : <m3@x>\n\nMessage-ID: <not@x>\n", "<m3@x>", false},
		{"Subject: s\r\n\r\nMessage-ID: <body@x>\r\n", "", false},
		{"Subject: s\r\nnot a field\r\nMessage-ID: <m4@x>\r\n\r\n", "", true},
	} {
		got, err := headerField([]byte(c.raw), "Message-Id")
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("%q: %q, %v; want %q (error %v)", c.raw, got, err, c.want, c.bad)
		}
	}
}
