package sender

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/mail/address"
	"github.com/mafiamail/mafiamail/mail/mailurl"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

// quitTimeout bounds the polite QUIT at the end of a drain.
const quitTimeout = 10 * time.Second

// conn is one SMTP connection, ready to send.
type conn struct {
	s   *Sender
	c   *smtp.Client
	raw net.Conn
	// stop undoes the closing of raw when the Run context ends.
	stop func() bool
	// dirty is set while a transaction may be open: the next message
	// starts with RSET.
	dirty bool
	// rcptMax is the server's limit of recipients per transaction
	// (LIMITS RCPTMAX), 0 for none known.
	rcptMax int
}

// connect dials the server as the URL policy says, says EHLO and
// authenticates.
func (s *Sender) connect(ctx context.Context) (*conn, error) {
	nd := &net.Dialer{Timeout: s.cfg.CommandTimeout}
	var raw net.Conn
	var err error
	if s.ep.Security == mailurl.TLS {
		raw, err = (&tls.Dialer{NetDialer: nd, Config: s.tls}).DialContext(ctx, "tcp", s.ep.Addr)
	} else {
		raw, err = nd.DialContext(ctx, "tcp", s.ep.Addr)
	}
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	cn := &conn{s: s, raw: raw, stop: context.AfterFunc(ctx, func() { raw.Close() })}
	if err := cn.setUp(ctx); err != nil {
		cn.close()
		return nil, err
	}
	return cn, nil
}

func (cn *conn) setUp(ctx context.Context) error {
	s := cn.s
	if s.ep.Security == mailurl.StartTLS {
		// NewClientStartTLS reads the greeting, says EHLO and upgrades;
		// it fails, before any credentials are sent, when the server does
		// not offer STARTTLS. Its own timeouts are go-smtp's defaults, so
		// a timer bounds it here.
		var timedOut atomic.Bool
		t := time.AfterFunc(s.cfg.CommandTimeout, func() {
			timedOut.Store(true)
			cn.raw.Close()
		})
		c, err := smtp.NewClientStartTLS(cn.raw, s.tls)
		t.Stop()
		if timedOut.Load() {
			err = fmt.Errorf("no answer within %v", s.cfg.CommandTimeout)
		}
		if err != nil {
			return fmt.Errorf("STARTTLS (required for a server that is not on loopback): %w", err)
		}
		cn.c = c
	} else {
		cn.c = smtp.NewClient(cn.raw)
	}
	cn.c.CommandTimeout = s.cfg.CommandTimeout
	cn.c.SubmissionTimeout = 5 * s.cfg.CommandTimeout
	if err := cn.c.Hello(s.cfg.Helo); err != nil {
		return fmt.Errorf("EHLO: %w", err)
	}
	if err := cn.auth(ctx); err != nil {
		return err
	}
	if ok, limits := cn.c.Extension("LIMITS"); ok {
		cn.rcptMax = rcptMax(limits)
	}
	return nil
}

// auth authenticates with PLAIN or LOGIN when a username is configured.
func (cn *conn) auth(ctx context.Context) error {
	cfg := &cn.s.cfg
	if cfg.Username == "" {
		return nil
	}
	ok, offered := cn.c.Extension("AUTH")
	if !ok {
		return errors.New("the server offers no AUTH, but a username is configured")
	}
	mechs := strings.Fields(strings.ToUpper(offered))
	if cfg.OAuth2 != nil {
		return cn.authOAuth2(ctx, mechs)
	}
	method := strings.ToUpper(cfg.Auth)
	if method == "" {
		switch {
		case slices.Contains(mechs, sasl.Plain):
			method = sasl.Plain
		case slices.Contains(mechs, sasl.Login):
			method = sasl.Login
		default:
			return fmt.Errorf("the server offers AUTH %s, and the sender speaks only PLAIN and LOGIN", offered)
		}
	}
	var client sasl.Client
	if method == sasl.Plain {
		client = sasl.NewPlainClient("", cfg.Username, cfg.Password)
	} else {
		client = sasl.NewLoginClient(cfg.Username, cfg.Password)
	}
	if err := cn.c.Auth(client); err != nil {
		return fmt.Errorf("AUTH %s as %q: %w", method, cfg.Username, err)
	}
	return nil
}

// authOAuth2 authenticates with an access token.
func (cn *conn) authOAuth2(ctx context.Context, offered []string) error {
	cfg := &cn.s.cfg
	mech, err := oauth.Mechanism(offered)
	if err != nil {
		return fmt.Errorf("AUTH as %q with OAuth2: %w", cfg.Username, err)
	}
	// A token endpoint that hangs holds the login no longer than a
	// command would.
	tctx, cancel := context.WithTimeout(ctx, cfg.CommandTimeout)
	defer cancel()
	err = oauth.Authenticate(tctx, cfg.OAuth2, mech, cfg.Username, cn.c.Auth, func(err error) bool {
		// 535: the server refused the token.
		var se *smtp.SMTPError
		return errors.As(err, &se) && se.Code == 535
	})
	if err != nil {
		return fmt.Errorf("AUTH %s as %q: %w", mech, cfg.Username, err)
	}
	return nil
}

// rcptMax reads RCPTMAX from the value of a LIMITS extension (RFC 9422).
func rcptMax(limits string) int {
	for _, f := range strings.Fields(limits) {
		if k, v, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "RCPTMAX") {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// close drops the connection without a word.
func (cn *conn) close() {
	cn.stop()
	if cn.c != nil {
		cn.c.Close()
	} else {
		cn.raw.Close()
	}
}

// quit ends the connection politely, briefly.
func (cn *conn) quit() {
	cn.raw.SetDeadline(time.Now().Add(quitTimeout))
	if err := cn.c.Quit(); err != nil {
		cn.s.log.Debug("QUIT failed", "err", err)
	}
	cn.close()
}

// result is what became of one attempt to send a message.
type result struct {
	// sent: the server accepted the message for at least one recipient;
	// refused lists those it refused for good.
	sent    bool
	refused []RecipientError
	// permanent: the message cannot be sent (5xx, or a limit of the
	// server that it cannot meet). Otherwise, unless sent, the failure is
	// temporary.
	permanent bool
	// limit: the provider refuses mail for its sending limit; the
	// message is held, as is every other, until it takes mail again.
	limit bool
	// broken: the connection cannot be used any more.
	broken bool
	err    error
}

// failure classifies an error of one command: 421 and network errors are
// temporary and end the connection; other 4xx are temporary; 5xx are
// permanent, except those that say the session is not authenticated,
// which are a configuration error rather than the message's fault.
func failure(what string, err error) result {
	err = fmt.Errorf("%s: %w", what, err)
	var se *smtp.SMTPError
	if !errors.As(err, &se) {
		return result{err: err, broken: true}
	}
	switch {
	case isLimitReply(se):
		return result{err: err, limit: true, broken: se.Code == 421}
	case se.Code == 421:
		return result{err: err, broken: true}
	case se.Code == 530 || se.Code == 535 || se.Code == 538:
		return result{err: fmt.Errorf("%w (the server wants authentication: check Username and Password)", err), broken: true}
	case se.Code >= 500:
		return result{err: err, permanent: true}
	}
	return result{err: err}
}

// send delivers one message, in as many transactions as the server's
// recipient limit needs.
func (cn *conn) send(ctx context.Context, m Message) result {
	if len(m.To) == 0 {
		return result{err: errors.New("the message has no recipients"), permanent: true}
	}
	if max, ok := cn.c.MaxMessageSize(); ok && max > 0 && len(m.Raw) > max {
		return result{permanent: true, err: &smtp.SMTPError{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 3, 4},
			Message: fmt.Sprintf("the message has %d bytes; the server takes at most %d", len(m.Raw), max)}}
	}
	utf8 := !isASCII(m.From) || slices.ContainsFunc(m.To, func(a string) bool { return !isASCII(a) })
	if ok, _ := cn.c.Extension("SMTPUTF8"); utf8 && !ok {
		return result{permanent: true, err: errors.New("an address is not ASCII and the server lacks SMTPUTF8")}
	}
	opts := &smtp.MailOptions{Size: int64(len(m.Raw)), UTF8: utf8}

	var refused []RecipientError
	delivered := 0
	rest := m.To
	for len(rest) > 0 {
		n, r := cn.transaction(m, opts, rest)
		refused = append(refused, r.refused...)
		switch {
		case r.sent:
			delivered++
		case r.err != nil && r.permanent && delivered > 0:
			// Some recipients have it already: the rest are refused.
			for _, rcpt := range rest[:n] {
				if !slices.ContainsFunc(r.refused, func(e RecipientError) bool { return e.Recipient == rcpt }) {
					refused = append(refused, RecipientError{Recipient: rcpt, Err: r.err})
				}
			}
		case r.err != nil:
			// Temporary, or nothing delivered yet: the whole message
			// waits for the next attempt.
			return r
		}
		rest = rest[n:]
	}
	if delivered == 0 {
		return result{permanent: true, refused: refused, err: &RecipientsError{Refused: refused}}
	}
	return result{sent: true, refused: refused}
}

// transaction sends one MAIL, RCPT for as many of rcpts as the server
// takes in one transaction, and DATA. It returns how many of rcpts it
// dealt with. A result with neither sent nor err set means every
// recipient it dealt with was refused for good (listed in refused).
func (cn *conn) transaction(m Message, opts *smtp.MailOptions, rcpts []string) (int, result) {
	if cn.dirty {
		if err := cn.c.Reset(); err != nil {
			return 0, failure("RSET", err)
		}
		cn.dirty = false
	}
	cn.dirty = true
	if err := cn.c.Mail(m.From, opts); err != nil {
		return len(rcpts), failure("MAIL FROM", err)
	}
	if cn.rcptMax > 0 && len(rcpts) > cn.rcptMax {
		rcpts = rcpts[:cn.rcptMax]
	}
	var refused []RecipientError
	accepted := 0
	n := 0
	for ; n < len(rcpts); n++ {
		if _, err := address.Parse(rcpts[n]); err != nil {
			// Only a plain address goes into the envelope: anything else
			// could carry envelope syntax of its own (sign-up and ADD
			// accept no other, so this is a recipient stored before).
			refused = append(refused, RecipientError{Recipient: rcpts[n], Err: err})
			continue
		}
		err := cn.c.Rcpt(rcpts[n], nil)
		if err == nil {
			accepted++
			continue
		}
		var se *smtp.SMTPError
		if errors.As(err, &se) && se.Code == 452 && accepted > 0 {
			// Too many recipients: these go now, the rest in the next
			// transaction (RFC 5321, 4.5.3.1.10).
			break
		}
		r := failure("RCPT TO:<"+rcpts[n]+">", err)
		if !r.permanent {
			return n, r
		}
		refused = append(refused, RecipientError{Recipient: rcpts[n], Err: err})
	}
	if accepted == 0 {
		return n, result{refused: refused}
	}
	w, err := cn.c.Data()
	if err != nil {
		r := failure("DATA", err)
		r.refused = refused
		return n, r
	}
	if _, err := w.Write(m.Raw); err != nil {
		return n, result{err: fmt.Errorf("DATA: %w", err), broken: true}
	}
	err = w.Close()
	cn.dirty = false
	if err != nil {
		// No answer after the data (broken) may still mean delivered:
		// the message is sent again, with the same Message-ID.
		r := failure("end of DATA", err)
		r.refused = refused
		return n, r
	}
	return n, result{sent: true, refused: refused}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// RecipientError is one recipient the server refused for good.
type RecipientError struct {
	Recipient string
	Err       error
}

// RecipientsError reports recipients refused for good (5xx to RCPT). It is
// what OnFailed gets for a message that went to some recipients only, and
// for one that every recipient refused.
type RecipientsError struct {
	Refused []RecipientError
}

func (e *RecipientsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d recipient(s) refused: ", len(e.Refused))
	for i, r := range e.Refused {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "<%s>: %s", r.Recipient, describe(r.Err))
	}
	return b.String()
}

func (e *RecipientsError) Unwrap() []error {
	errs := make([]error, len(e.Refused))
	for i, r := range e.Refused {
		errs[i] = r.Err
	}
	return errs
}

// describe shows an SMTP error as the server said it: "550 5.1.1 No such
// user here".
func describe(err error) string {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		if se.EnhancedCode != (smtp.EnhancedCode{}) && se.EnhancedCode != smtp.NoEnhancedCode {
			return fmt.Sprintf("%d %d.%d.%d %s", se.Code, se.EnhancedCode[0], se.EnhancedCode[1], se.EnhancedCode[2], se.Message)
		}
		return fmt.Sprintf("%d %s", se.Code, se.Message)
	}
	return err.Error()
}
