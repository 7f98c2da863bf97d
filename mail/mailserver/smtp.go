package mailserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// backend creates one session per SMTP connection.
type backend struct{ srv *Server }

func (b *backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &smtpSession{srv: b.srv, conn: c}, nil
}

// smtpSession is one SMTP connection. go-smtp calls its methods from the
// connection's goroutine only.
type smtpSession struct {
	srv  *Server
	conn *smtp.Conn

	auth  string // authenticated user, "" if none
	from  string
	rcpts []rcpt
	// limit is the sending limit this transaction's recipients are
	// counted against as open, nil for none.
	limit *SendLimit
	// reserved is 1 from MAIL until the first RCPT, which takes it over.
	reserved int
	// closeAfterReply asks Reset, which go-smtp calls once the reply to
	// DATA is written, to close the connection (421 means "closing").
	closeAfterReply bool
}

type rcpt struct {
	addr string
	user *user
}

var (
	errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	errTempFail     = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Temporary failure, try again later"}
	errShutdown     = &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2}, Message: "Service shutting down, closing connection"}
	errReject       = &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "Message refused"}
	errDropped      = errors.New("mailserver: connection dropped on purpose")
	// errRelayUnavailable answers mail that Config.Relay could not take
	// for a reason other than its own refusal.
	errRelayUnavailable = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 4, 1}, Message: "Relay unavailable, try again later"}
)

func (s *smtpSession) AuthMechanisms() []string { return s.srv.mechanisms() }

func (s *smtpSession) Auth(mech string) (sasl.Server, error) {
	srv, ok := s.srv.saslServer(mech, func(u *user) error {
		s.auth = u.name
		return nil
	}, smtp.ErrAuthFailed)
	if !ok {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return srv, nil
}

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.srv.opts.RequireAuth && s.auth == "" {
		return errAuthRequired
	}
	s.releaseLimit()
	limit := s.srv.currentSendLimit()
	if limit != nil && s.auth != "" {
		s.limit = limit
		if limit.Stage == LimitAtMail {
			// The first recipient is counted as open from MAIL on.
			if err := limit.admit(s.auth, LimitAtMail, 1); err != nil {
				s.limit = nil
				return err
			}
			s.reserved = 1
		}
	}
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	// Mail relayed goes to no local user: Relay judges its recipients.
	var u *user
	if s.srv.opts.Relay == "" {
		var err error
		if u, err = s.srv.localUser(to, true); err != nil {
			return err
		}
	}
	switch {
	case s.reserved > 0:
		// Counted as open at MAIL already.
		s.reserved--
	case s.limit != nil:
		if err := s.limit.admit(s.auth, LimitAtRcpt, 1); err != nil {
			return err
		}
	}
	s.rcpts = append(s.rcpts, rcpt{addr: to, user: u})
	return nil
}

func (s *smtpSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		// Too large, or the connection broke: go-smtp answers accordingly.
		return err
	}
	m := Delivery{
		At:   time.Now(),
		Auth: s.auth,
		From: s.from,
		Data: data,
	}
	for _, rc := range s.rcpts {
		m.To = append(m.To, rc.addr)
	}
	limit := s.limit
	if err := limit.takeAtData(s.auth, len(s.rcpts)); err != nil {
		s.record(m)
		return err
	}
	if limit != nil && limit.Stage == LimitAtData {
		s.limit = nil // counted as sent: nothing of it is open any more
	}
	if f := s.srv.currentFault(); f != nil {
		m.Fault = f(m)
	}

	switch m.Fault {
	case FaultTempFail:
		s.record(m)
		return errTempFail
	case FaultShutdown:
		s.record(m)
		s.closeAfterReply = true
		return errShutdown
	case FaultReject:
		s.record(m)
		return errReject
	case FaultDropBeforeDelivery:
		s.record(m)
		s.conn.Conn().Close()
		return errDropped
	}

	if s.srv.opts.Relay != "" {
		if err := s.relay(data); err != nil {
			s.record(m)
			return err
		}
	} else if err := s.deliver(data); err != nil {
		s.srv.log.Error("delivery failed", "err", err)
		s.record(m)
		return errTempFail
	}
	m.Delivered = true
	if err := s.saveSent(data); err != nil {
		s.srv.log.Error("cannot keep a copy of sent mail", "err", err)
	}
	if limit != nil && limit.Stage != LimitAtData {
		limit.count(s.auth, len(s.rcpts))
		s.limit = nil // counted as sent: nothing of it is open any more
	}
	s.record(m)
	if m.Fault == FaultDropAfterDelivery {
		s.conn.Conn().Close()
		return errDropped
	}
	return nil
}

// record hands the finished transaction to the server, which keeps it
// unless every recipient is a sink.
func (s *smtpSession) record(m Delivery) {
	sinksOnly := len(s.rcpts) > 0
	for _, rc := range s.rcpts {
		sinksOnly = sinksOnly && rc.user != nil && rc.user.sink
	}
	s.srv.record(m, sinksOnly)
}

// deliver puts one copy into the INBOX of each recipient's user.
func (s *smtpSession) deliver(data []byte) error {
	remote := ""
	if a := s.conn.Conn().RemoteAddr(); a != nil {
		remote = a.String()
	}
	for _, rc := range s.rcpts {
		if err := s.srv.deliverTo(rc.user, s.from, rc.addr, s.conn.Hostname(), remote, s.auth, data); err != nil {
			return err
		}
	}
	return nil
}

// saveSent keeps a copy of mail a logged-in user sent in their
// Config.SaveSent folder.
func (s *smtpSession) saveSent(data []byte) error {
	folder := s.srv.opts.SaveSent
	if folder == "" || s.auth == "" {
		return nil
	}
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	u := s.srv.users[s.auth]
	if u == nil {
		return nil
	}
	opts := &imap.AppendOptions{Flags: []imap.Flag{imap.FlagSeen}, Time: time.Now()}
	if _, err := u.mem.Append(folder, bytes.NewReader(data), opts); err != nil {
		if cerr := u.mem.Create(folder, nil); cerr != nil {
			return fmt.Errorf("save sent mail of %s: %w", s.auth, err)
		}
		if _, err := u.mem.Append(folder, bytes.NewReader(data), opts); err != nil {
			return fmt.Errorf("save sent mail of %s: %w", s.auth, err)
		}
	}
	return nil
}

// relay hands the transaction on to the server at Config.Relay, in a
// session of its own, and returns its refusal as the client's answer; a
// Relay that cannot be reached, or that fails without an SMTP reply, is a
// temporary failure.
func (s *smtpSession) relay(data []byte) error {
	opts := &s.srv.opts
	c, err := smtp.Dial(opts.Relay)
	if err != nil {
		s.srv.log.Warn("relay unreachable", "relay", opts.Relay, "err", err)
		return errRelayUnavailable
	}
	defer c.Close()
	c.CommandTimeout, c.SubmissionTimeout = opts.SMTPTimeout, opts.SMTPTimeout
	to := make([]string, len(s.rcpts))
	for i, rc := range s.rcpts {
		to[i] = rc.addr
	}
	err = c.Hello(opts.Domain)
	if err == nil {
		err = c.SendMail(s.from, to, bytes.NewReader(data))
	}
	if err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			return se
		}
		s.srv.log.Warn("relay failed", "relay", opts.Relay, "err", err)
		return errRelayUnavailable
	}
	if err := c.Quit(); err != nil {
		s.srv.log.Debug("relay QUIT", "err", err)
	}
	return nil
}

func (s *smtpSession) Reset() {
	s.releaseLimit()
	s.from = ""
	s.rcpts = nil
	if s.closeAfterReply {
		s.conn.Conn().Close()
	}
}

func (s *smtpSession) Logout() error {
	s.releaseLimit()
	return nil
}

// releaseLimit gives up the transaction's open recipients: delivered,
// they are counted as sent; refused or abandoned, they never counted.
func (s *smtpSession) releaseLimit() {
	if s.limit != nil {
		s.limit.release(s.auth, len(s.rcpts)+s.reserved)
		s.limit, s.reserved = nil, 0
	}
}
