package watcher

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"

	"github.com/mafiamail/mafiamail/mail/mailurl"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

// dial opens the connection as the URL policy says: TLS from the start,
// STARTTLS (which must succeed), or plain text on loopback.
func (w *Watcher) dial(ctx context.Context, opts *imapclient.Options) (*imapclient.Client, error) {
	nd := &net.Dialer{Timeout: w.cfg.CommandTimeout}
	switch w.ep.Security {
	case mailurl.TLS:
		td := &tls.Dialer{NetDialer: nd, Config: w.tls}
		conn, err := td.DialContext(ctx, "tcp", w.ep.Addr)
		if err != nil {
			return nil, fmt.Errorf("connect with TLS: %w", err)
		}
		return w.greet(ctx, conn, opts)
	case mailurl.StartTLS:
		conn, err := nd.DialContext(ctx, "tcp", w.ep.Addr)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		// NewStartTLS reads the greeting, sends STARTTLS and does the
		// handshake; it fails, before any credentials are sent, when the
		// server does not offer STARTTLS.
		var c *imapclient.Client
		err, timedOut := guard(ctx, w.cfg.CommandTimeout, func() { conn.Close() }, func() (err error) {
			c, err = imapclient.NewStartTLS(conn, opts)
			return err
		})
		if timedOut {
			err = fmt.Errorf("no answer within %v", w.cfg.CommandTimeout)
		}
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("STARTTLS (required for a server that is not on loopback): %w", err)
		}
		return c, nil
	default:
		conn, err := nd.DialContext(ctx, "tcp", w.ep.Addr)
		if err != nil {
			return nil, fmt.Errorf("connect: %w", err)
		}
		return w.greet(ctx, conn, opts)
	}
}

// greet wraps conn in a client and waits for the server's greeting.
func (w *Watcher) greet(ctx context.Context, conn net.Conn, opts *imapclient.Options) (*imapclient.Client, error) {
	c := imapclient.New(conn, opts)
	s := &session{w: w, c: c}
	if err := s.cmd(ctx, "greeting", c.WaitGreeting); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// login authenticates with AUTHENTICATE PLAIN or LOGIN.
func (s *session) login(ctx context.Context) error {
	cfg := &s.w.cfg
	var caps imap.CapSet
	if err := s.cmd(ctx, "CAPABILITY", func() error {
		if caps = s.c.Caps(); caps == nil {
			return errors.New("the server sent no capabilities")
		}
		return nil
	}); err != nil {
		return err
	}
	if cfg.OAuth2 != nil {
		return s.loginOAuth2(ctx, caps)
	}
	method := strings.ToLower(cfg.Auth)
	if method == "" {
		method = "login"
		if slices.ContainsFunc(caps.AuthMechanisms(), func(m string) bool { return strings.EqualFold(m, sasl.Plain) }) {
			method = "plain"
		}
	}
	if method == "login" && caps.Has(imap.CapLoginDisabled) {
		return errors.New("the server refuses LOGIN (LOGINDISABLED) and the watcher may not use AUTHENTICATE PLAIN")
	}
	var err error
	if method == "plain" {
		err = s.cmd(ctx, "AUTHENTICATE PLAIN", func() error {
			return s.c.Authenticate(sasl.NewPlainClient("", cfg.Username, cfg.Password))
		})
	} else {
		err = s.cmd(ctx, "LOGIN", func() error { return s.c.Login(cfg.Username, cfg.Password).Wait() })
	}
	if err != nil {
		return fmt.Errorf("log in as %q: %w", cfg.Username, err)
	}
	return nil
}

// loginOAuth2 authenticates with an access token.
func (s *session) loginOAuth2(ctx context.Context, caps imap.CapSet) error {
	cfg := &s.w.cfg
	mech, err := oauth.Mechanism(caps.AuthMechanisms())
	if err != nil {
		return fmt.Errorf("log in as %q with OAuth2: %w", cfg.Username, err)
	}
	// A token endpoint that hangs holds the login no longer than a
	// command would.
	tctx, cancel := context.WithTimeout(ctx, cfg.CommandTimeout)
	defer cancel()
	err = oauth.Authenticate(tctx, cfg.OAuth2, mech, cfg.Username, func(c sasl.Client) error {
		return s.cmd(ctx, "AUTHENTICATE "+mech, func() error { return s.c.Authenticate(c) })
	}, func(err error) bool {
		// NO to AUTHENTICATE: the server refused the token.
		var ie *imap.Error
		return errors.As(err, &ie) && ie.Type == imap.StatusResponseTypeNo
	})
	if err != nil {
		return fmt.Errorf("log in as %q with %s: %w", cfg.Username, mech, err)
	}
	return nil
}

// open selects the mailbox, makes sure MoveTo exists, and learns whether
// IDLE can be used. Capabilities are asked again: servers may announce
// more after login.
func (s *session) open(ctx context.Context) error {
	cfg := &s.w.cfg
	var sel *imap.SelectData
	if err := s.cmd(ctx, "SELECT "+cfg.Mailbox, func() (err error) {
		sel, err = s.c.Select(cfg.Mailbox, nil).Wait()
		return err
	}); err != nil {
		return err
	}
	s.w.setUIDValidity(sel.UIDValidity)

	if cfg.MoveTo != "" {
		var found []*imap.ListData
		if err := s.cmd(ctx, "LIST "+cfg.MoveTo, func() (err error) {
			found, err = s.c.List("", cfg.MoveTo, nil).Collect()
			return err
		}); err != nil {
			return err
		}
		if len(found) == 0 {
			if err := s.cmd(ctx, "CREATE "+cfg.MoveTo, func() error { return s.c.Create(cfg.MoveTo, nil).Wait() }); err != nil {
				return err
			}
			s.w.log.Info("created the folder for processed mail", "folder", cfg.MoveTo)
		}
	}

	var caps imap.CapSet
	if err := s.cmd(ctx, "CAPABILITY", func() error {
		caps = s.c.Caps()
		return nil
	}); err != nil {
		return err
	}
	s.canIdle = !cfg.DisableIdle && caps.Has(imap.CapIdle)
	return nil
}

// logout says goodbye politely, briefly.
func (s *session) logout() {
	ctx, cancel := context.WithTimeout(context.Background(), logoutTimeout)
	defer cancel()
	if err := s.cmd(ctx, "LOGOUT", func() error { return s.c.Logout().Wait() }); err != nil {
		s.w.log.Debug("LOGOUT failed", "err", err)
	}
}
