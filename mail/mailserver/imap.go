package mailserver

import (
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
)

// imapSession is one IMAP connection. Before LOGIN the embedded UserSession
// is nil; imapserver calls no mailbox method in that state.
type imapSession struct {
	*imapmemserver.UserSession

	srv  *Server
	conn *imapserver.Conn
	user *user
}

var (
	_ imapserver.SessionIMAP4rev2 = (*imapSession)(nil)
	_ imapserver.SessionSASL      = (*imapSession)(nil)
)

// Login accepts "alice" and "alice@<local domain>" alike.
func (s *imapSession) Login(username, password string) error {
	u, ok := s.srv.authenticate(username, password)
	if !ok {
		return imapserver.ErrAuthFailed
	}
	return s.loggedIn(u)
}

// AuthenticateMechanisms offers PLAIN, and the OAuth2 mechanisms when the
// server checks tokens.
func (s *imapSession) AuthenticateMechanisms() []string { return s.srv.mechanisms() }

// Authenticate serves AUTHENTICATE; imapserver then no longer provides
// PLAIN itself, so saslServer does.
func (s *imapSession) Authenticate(mech string) (sasl.Server, error) {
	srv, ok := s.srv.saslServer(mech, s.loggedIn, imapserver.ErrAuthFailed)
	if !ok {
		return nil, &imap.Error{Type: imap.StatusResponseTypeNo, Text: "SASL mechanism not supported"}
	}
	return srv, nil
}

func (s *imapSession) loggedIn(u *user) error {
	s.srv.mu.Lock()
	u.conns[s.conn] = struct{}{}
	s.srv.mu.Unlock()
	s.user = u
	s.UserSession = imapmemserver.NewUserSession(u.mem)
	return nil
}

func (s *imapSession) Close() error {
	if s.user != nil {
		s.srv.mu.Lock()
		delete(s.user.conns, s.conn)
		s.srv.mu.Unlock()
	}
	return s.UserSession.Close()
}

// idleRecheck bounds how long a change made by another IMAP session (flags,
// expunges) may wait before an idling client hears of it; new mail is
// announced at once.
const idleRecheck = 250 * time.Millisecond

// Idle replaces imapmemserver's IDLE, which can miss mail that arrives
// between the "+ idling" reply and the moment it starts listening: the
// update waits in the queue until the next one. Here every delivery wakes
// idling sessions, and the queue is flushed before each wait.
func (s *imapSession) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	ticker := time.NewTicker(idleRecheck)
	defer ticker.Stop()
	for {
		// Take the wake-up channel before flushing, so that a delivery
		// after the flush is never missed.
		wake := s.srv.wakeChan()
		if err := s.UserSession.Poll(w, true); err != nil {
			return err
		}
		select {
		case <-stop:
			return nil
		case <-wake:
		case <-ticker.C:
		}
	}
}

// Select and Status report the mailbox's UIDVALIDITY offset by the
// server's base, so that it changes when the server restarts.
func (s *imapSession) Select(name string, options *imap.SelectOptions) (*imap.SelectData, error) {
	data, err := s.UserSession.Select(name, options)
	if data != nil {
		data.UIDValidity += s.srv.uidBase
	}
	return data, err
}

func (s *imapSession) Status(name string, options *imap.StatusOptions) (*imap.StatusData, error) {
	data, err := s.UserSession.Status(name, options)
	if data != nil && data.UIDValidity != 0 {
		data.UIDValidity += s.srv.uidBase
	}
	return data, err
}

func (s *imapSession) Append(mailbox string, r imap.LiteralReader, options *imap.AppendOptions) (*imap.AppendData, error) {
	data, err := s.UserSession.Append(mailbox, r, options)
	if data != nil && data.UIDValidity != 0 {
		data.UIDValidity += s.srv.uidBase
	}
	return data, err
}

func (s *imapSession) Copy(numSet imap.NumSet, dest string) (*imap.CopyData, error) {
	data, err := s.UserSession.Copy(numSet, dest)
	if data != nil && data.UIDValidity != 0 {
		data.UIDValidity += s.srv.uidBase
	}
	return data, err
}
