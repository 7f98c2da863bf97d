package mailserver

import (
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
)

// imapSession is one IMAP connection. Before LOGIN the embedded UserSession
// is nil; imapserver calls no mailbox method in that state.
type imapSession struct {
	*imapmemserver.UserSession

	srv  *Server
	conn *imapserver.Conn
	user *user
}

var _ imapserver.SessionIMAP4rev2 = (*imapSession)(nil)

// Login accepts "alice" and "alice@<local domain>" alike.
func (s *imapSession) Login(username, password string) error {
	u, ok := s.srv.authenticate(username, password)
	if !ok {
		return imapserver.ErrAuthFailed
	}
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
