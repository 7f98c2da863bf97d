package message

import (
	"errors"
	"strings"
	"testing"
)

func TestHTMLToText(t *testing.T) {
	tests := []struct{ name, html, want string }{
		{
			name: "gmail reply",
			html: `<div dir="ltr">VOTE Bob<div><br></div><div>He&#39;s been &quot;quiet&quot; &amp; evasive.</div></div><br>` +
				`<div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">On Mon, Mar 3, 2025 at 10:15 AM Mafia Host &lt;<a href="mailto:host@example.org">host@example.org</a>&gt; wrote:<br></div>` +
				`<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex">Day 1.<br>VOTE Carol<br></blockquote></div>`,
			want: "VOTE Bob\n\nHe's been \"quiet\" & evasive.\n\n> On Mon, Mar 3, 2025 at 10:15 AM Mafia Host <host@example.org> wrote:\n>> Day 1.\n>> VOTE Carol",
		},
		{
			name: "outlook web reply: the original is not nested",
			html: `<html><head><style>p{margin:0}</style></head><body><div style="font-family:Aptos">VOTE Carol</div>` +
				`<div id="appendonsend"></div><hr style="display:inline-block;width:98%"><div id="divRplyFwdMsg" dir="ltr">` +
				`<font face="Calibri"><b>From:</b> Mafia Host<br><b>Sent:</b> Monday<br></font><div>&nbsp;</div></div>` +
				`<div>VOTE Bob</div></body></html>`,
			want: "VOTE Carol\n> From: Mafia Host\n> Sent: Monday\n>\n> VOTE Bob",
		},
		{
			name: "outlook desktop paragraphs are single lines",
			html: `<p class=MsoNormal>Line one<o:p></o:p></p><p class=MsoNormal><o:p>&nbsp;</o:p></p><p class=MsoNormal>Line   two</p>`,
			want: "Line one\n\nLine two",
		},
		{
			name: "paragraphs, lists, pre, entities",
			html: "<p>First</p><p>Second</p><ul><li>a</li><li>b</li></ul><pre>  keep\n  this</pre><p>caf&eacute; &lt;3</p>",
			want: "First\n\nSecond\n\n- a\n- b\n  keep\n  this\n\ncafé <3",
		},
		{
			name: "thunderbird signature and cite prefix",
			html: `<p>VOTE Bob</p><div class="moz-signature">-- <br>Bernd</div><div class="moz-cite-prefix">Am 03.03.25 um 10:15 schrieb Host:<br></div><blockquote type="cite">VOTE Carol</blockquote>`,
			want: "VOTE Bob\n\n--\n--\nBernd\nAm 03.03.25 um 10:15 schrieb Host:\n> VOTE Carol",
		},
		{
			name: "an unclosed head does not hide the body",
			html: `<html><head><title>x</title><body>VOTE Bob</body>`,
			want: "VOTE Bob",
		},
		{
			name: "script and style are not text",
			html: `<style>.a{}</style><script>alert("VOTE Carol")</script>VOTE Bob`,
			want: "VOTE Bob",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HTMLToText(tt.html); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestHTMLToTextBoundsDeepNesting(t *testing.T) {
	in := strings.Repeat("<blockquote>", 5000) + strings.Repeat("x<br>", 100)
	out := HTMLToText(in)
	for _, l := range strings.Split(out, "\n") {
		if len(l) > maxQuotePrint+3 {
			t.Fatalf("line %q is longer than the quote cap allows", l)
		}
	}
}

func TestUnflow(t *testing.T) {
	in := "VOTE Bob \nbecause he is \nquiet.\n-- \nAnn\n> quoted \n> on\n>  stuffed\n"
	want := "VOTE Bob because he is quiet.\n-- \nAnn\n> quoted on\n>  stuffed\n"
	if got := unflow(in, false); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := unflow("ab \ncd", true); got != "abcd" {
		t.Errorf("delsp: got %q", got)
	}
}

func TestParseMalformed(t *testing.T) {
	tests := []struct{ name, raw, want string }{
		{"bare CR in a header", "From: a@example.org\r\nSubject: x\ry\r\n\r\nhi\r\n", "bare CR"},
		{"bare CR in the body", "From: a@example.org\r\n\r\nVOTE\rBob\r\n", "bare CR"},
		{"header line without colon", "From: a@example.org\r\nThis is not a header\r\n\r\nhi\r\n", "malformed MIME header line"},
		{"no From", "Subject: hi\r\n\r\nhi\r\n", "no From header"},
		{"two From fields", "From: a@example.org\r\nFrom: b@example.org\r\n\r\nhi\r\n", "more than one From"},
		{"unreadable From", "From: Alice <alice@example.org\r\n\r\nhi\r\n", "From header cannot be read"},
	}
	for _, tt := range tests {
		m, err := Parse([]byte(tt.raw))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want ErrMalformed mentioning %q", tt.name, err, tt.want)
		}
		if m != nil {
			t.Errorf("%s: got a message from an unreadable header", tt.name)
		}
	}

	body := []struct{ name, raw, want string }{
		{"boundary never appears", "From: a@example.org\r\nContent-Type: multipart/mixed; boundary=\"XX\"\r\n\r\n--YY\r\n\r\nhi\r\n--YY--\r\n", "starts with its boundary"},
		{"no boundary parameter", "From: a@example.org\r\nContent-Type: multipart/mixed\r\n\r\n--YY\r\n\r\nhi\r\n", "no boundary"},
		{"bad base64", "From: a@example.org\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!!\r\n", "base64"},
		{"unknown transfer encoding", "From: a@example.org\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nbegin\r\n", "x-uuencode"},
	}
	for _, tt := range body {
		m, err := Parse([]byte(tt.raw))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want ErrMalformed mentioning %q", tt.name, err, tt.want)
		}
		if m == nil || len(m.From) != 1 {
			t.Errorf("%s: a broken body must still give the header", tt.name)
		}
	}
}

func TestParseLenient(t *testing.T) {
	// What real clients display, the host reads too.
	m, err := Parse([]byte("From alice@example.org Mon Mar  3 10:15:00 2025\n" +
		"From: alice@example.org\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nVOTE Bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "VOTE Bob" || len(m.Warnings) == 0 {
		t.Errorf("text %q warnings %q", m.Text, m.Warnings)
	}

	// No charset declared, 8-bit body: windows-1252 is the likely one.
	m, err = Parse([]byte("From: a@example.org\r\n\r\nVOTE Andr\xe9 \x93now\x94\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "VOTE André “now”" {
		t.Errorf("text %q", m.Text)
	}

	// Declared UTF-8 with one bad byte: the rest is kept as written.
	m, err = Parse([]byte("From: a@example.org\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nVOTE Zoë \xff\r\n"))
	if err != nil || m.Text != "VOTE Zoë \uFFFD" {
		t.Errorf("bad byte in UTF-8: %v %q", err, m.Text)
	}

	// An unknown charset is a warning, not a refusal.
	m, err = Parse([]byte("From: a@example.org\r\nContent-Type: text/plain; charset=x-unknown\r\n\r\nVOTE Bob\r\n"))
	if err != nil || m.Text != "VOTE Bob" || len(m.Warnings) != 1 {
		t.Errorf("unknown charset: %v %q %q", err, m.Text, m.Warnings)
	}
}

func TestParseHeaderOnly(t *testing.T) {
	raw := "From: Alice <alice@example.org>\r\nSubject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\n\r\n" + strings.Repeat("x", 1000)
	m, err := ParseHeader([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.From[0].Address != "alice@example.org" || m.Subject != "Grüße" || m.Size != len(raw) || m.Text != "" {
		t.Errorf("%+v", m)
	}
}

func TestDeliveryStatus(t *testing.T) {
	body := "Reporting-MTA: dns; mx.example.org\n\n" +
		"Final-Recipient: rfc822; other@example.net\nAction: delayed\nStatus: 4.4.1\n\n" +
		"Original-Recipient: rfc822;Bob@Example.net\nFinal-Recipient: rfc822; bob@mail.example.net\nAction: failed\nStatus: 5.1.1\n" +
		"Diagnostic-Code: smtp; 550 5.1.1 <bob@mail.example.net>:\n Recipient address rejected\n"
	r := parseDeliveryStatus(body)
	if r == nil || r.Recipient != "bob@example.net" || !r.Failed() || r.Status != "5.1.1" ||
		!strings.Contains(r.Diagnostic, "Recipient address rejected") {
		t.Errorf("%+v", r)
	}
	if r := parseDeliveryStatus("Reporting-MTA: dns; x\n\nAction: failed\n"); r != nil {
		t.Errorf("a status without a recipient gave %+v", r)
	}
}
