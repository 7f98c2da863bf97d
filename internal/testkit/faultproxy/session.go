package faultproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// errInjectedClose ends a session on purpose, for Shutdown and the drops.
var errInjectedClose = errors.New("connection closed by an injected fault")

// Replies the proxy gives itself.
const (
	replyTempFail  = "451 4.3.0 Temporary failure, try again later\r\n"
	replyShutdown  = "421 4.3.2 Service shutting down, closing connection\r\n"
	replyStartData = "354 End data with <CR><LF>.<CR><LF>\r\n"
	replyTooLarge  = "552 5.3.4 Message too large for the proxy\r\n"
	replyLongLine  = "500 5.5.2 Line too long\r\n"
	replyNoTLS     = "502 5.5.1 STARTTLS not offered\r\n"
	replyNoBDAT    = "502 5.5.1 BDAT not offered, closing connection\r\n"
)

// session is one client connection and its upstream connection. It runs
// on one goroutine: lockstep proxying never needs two.
type session struct {
	p      *SMTP
	log    *slog.Logger
	cr, ur *bufio.Reader // client, upstream
	cw, uw io.Writer

	// The open transaction, as far as upstream accepted it.
	inTx        bool
	from        string
	fault       Fault
	rcpts       int  // recipients upstream accepted
	rcptFaulted bool // the TempFailRcpt of this transaction is spent
}

func (s *session) run() error {
	greeting, err := readReply(s.ur)
	if err != nil {
		return fmt.Errorf("upstream greeting: %w", err)
	}
	if err := s.relay(greeting); err != nil {
		return err
	}
	for {
		line, err := readLine(s.cr)
		if errors.Is(err, errLineTooLong) {
			_ = s.say(replyLongLine)
			return fmt.Errorf("client command: %w", err)
		}
		if err != nil {
			return fmt.Errorf("client command: %w", err)
		}
		// line lives in cr's buffer, which the body of DATA and AUTH's
		// responses reuse.
		line = append([]byte(nil), line...)
		switch commandVerb(line) {
		case "EHLO":
			err = s.ehlo(line)
		case "HELO", "RSET":
			s.endTx()
			err = s.pass(line)
		case "MAIL":
			err = s.mail(line)
		case "RCPT":
			err = s.rcpt(line)
		case "DATA":
			err = s.data(line)
		case "AUTH":
			err = s.auth(line)
		case "STARTTLS":
			// Not offered; upstream would switch to TLS, which the proxy
			// could not follow.
			err = s.say(replyNoTLS)
		case "BDAT":
			// Not offered either; the chunk that follows is binary and
			// cannot be read as commands, so the session cannot go on.
			_ = s.say(replyNoBDAT)
			return errors.New("client sent BDAT")
		case "QUIT":
			if err := s.pass(line); err != nil {
				return err
			}
			return nil
		default:
			err = s.pass(line)
		}
		if err != nil {
			return err
		}
	}
}

// say writes a reply of the proxy's own to the client.
func (s *session) say(text string) error {
	if _, err := io.WriteString(s.cw, text); err != nil {
		return fmt.Errorf("write to client: %w", err)
	}
	return nil
}

func (s *session) relay(rep reply) error {
	if _, err := s.cw.Write(rep.bytes()); err != nil {
		return fmt.Errorf("write to client: %w", err)
	}
	return nil
}

// forward sends a command line upstream and returns upstream's reply.
func (s *session) forward(line []byte) (reply, error) {
	if _, err := s.uw.Write(line); err != nil {
		return reply{}, fmt.Errorf("write upstream: %w", err)
	}
	rep, err := readReply(s.ur)
	if err != nil {
		return reply{}, fmt.Errorf("upstream: %w", err)
	}
	return rep, nil
}

// pass forwards a command and relays its reply.
func (s *session) pass(line []byte) error {
	rep, err := s.forward(line)
	if err != nil {
		return err
	}
	return s.relay(rep)
}

func (s *session) endTx() {
	s.inTx, s.from, s.fault, s.rcpts, s.rcptFaulted = false, "", None, 0, false
}

func (s *session) ehlo(line []byte) error {
	s.endTx()
	rep, err := s.forward(line)
	if err != nil {
		return err
	}
	return s.relay(hideExtensions(rep))
}

func (s *session) auth(line []byte) error {
	rep, err := s.forward(line)
	if err != nil {
		return err
	}
	if err := s.relay(rep); err != nil {
		return err
	}
	// 334 asks the client for the next SASL response, which is a line of
	// its own, not a command.
	for rep.code == 334 {
		resp, err := readLine(s.cr)
		if err != nil {
			return fmt.Errorf("client SASL response: %w", err)
		}
		if rep, err = s.forward(resp); err != nil {
			return err
		}
		if err := s.relay(rep); err != nil {
			return err
		}
	}
	return nil
}

func (s *session) mail(line []byte) error {
	from := envelopeSender(line)
	f := None
	if s.p.decide != nil {
		f = s.p.decide(from)
	}
	switch f {
	case TempFailMail:
		s.p.count(f, s.log, from)
		return s.say(replyTempFail)
	case Shutdown:
		s.p.count(f, s.log, from)
		_ = s.say(replyShutdown)
		return errInjectedClose
	}
	rep, err := s.forward(line)
	if err != nil {
		return err
	}
	if rep.code/100 == 2 {
		s.endTx()
		s.inTx, s.from, s.fault = true, from, f
	}
	return s.relay(rep)
}

func (s *session) rcpt(line []byte) error {
	if s.inTx && s.fault == TempFailRcpt && !s.rcptFaulted {
		s.rcptFaulted = true
		s.p.count(TempFailRcpt, s.log, s.from)
		return s.say(replyTempFail)
	}
	rep, err := s.forward(line)
	if err != nil {
		return err
	}
	if s.inTx && rep.code/100 == 2 {
		s.rcpts++
	}
	return s.relay(rep)
}

func (s *session) data(line []byte) error {
	if !s.inTx || s.rcpts == 0 {
		return s.dataUnexpected(line)
	}
	f, from := s.fault, s.from
	// Whatever happens now, the transaction is over, at least for the
	// client.
	s.endTx()
	if err := s.say(replyStartData); err != nil {
		return err
	}
	body, err := readBody(s.cr, s.p.limits.maxBody)
	if errors.Is(err, errBodyTooLarge) {
		if _, err := s.forward([]byte("RSET\r\n")); err != nil {
			return err
		}
		return s.say(replyTooLarge)
	}
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}

	switch f {
	case TempFailData:
		s.p.count(f, s.log, from)
		if _, err := s.forward([]byte("RSET\r\n")); err != nil {
			return err
		}
		return s.say(replyTempFail)
	case DropBeforeDelivery:
		s.p.count(f, s.log, from)
		return errInjectedClose
	}

	rep, err := s.forward(line)
	if err != nil {
		return err
	}
	if rep.code != 354 {
		return s.relay(rep)
	}
	if err := body.writeTo(s.uw); err != nil {
		return fmt.Errorf("write message upstream: %w", err)
	}
	final, err := readReply(s.ur)
	if err != nil {
		return fmt.Errorf("upstream, after the message: %w", err)
	}
	if f == DropAfterDelivery && final.code/100 == 2 {
		s.p.count(f, s.log, from)
		return errInjectedClose
	}
	return s.relay(final)
}

// dataUnexpected handles DATA outside a transaction upstream accepted a
// recipient for: upstream answers it, most likely with a refusal, as it
// would without the proxy. Should it say 354 all the same, the message is
// forwarded.
func (s *session) dataUnexpected(line []byte) error {
	s.endTx()
	rep, err := s.forward(line)
	if err != nil {
		return err
	}
	if err := s.relay(rep); err != nil || rep.code != 354 {
		return err
	}
	body, err := readBody(s.cr, s.p.limits.maxBody)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	if err := body.writeTo(s.uw); err != nil {
		return fmt.Errorf("write message upstream: %w", err)
	}
	final, err := readReply(s.ur)
	if err != nil {
		return fmt.Errorf("upstream, after the message: %w", err)
	}
	return s.relay(final)
}
