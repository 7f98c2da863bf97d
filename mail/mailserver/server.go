// Package mailserver runs a small IMAP and SMTP server inside the process, for
// the demo, for local mail clients (serve --embedded) and for tests.
//
// SMTP accepts mail for the configured domains and delivers it into the INBOX
// of the addressed user, as a real mail system with plus-addressing would:
// "host+game-t-abc@example.org" lands in the INBOX of "host", with a
// Return-Path and a Delivered-To header naming the full original recipient.
// Nothing is stored on disk, and nothing is relayed elsewhere unless
// Config.Relay names a server to hand the mail on to: then the server is a
// provider's submission server in front of it (with a SendLimit, a limited
// account's provider in front of a real Postfix, for tests).
//
// Tests can watch every SMTP transaction (Messages, Options.OnMessage) and
// inject faults per transaction (Options.Fault, SetFault): temporary and
// permanent refusals, and connections dropped before or after delivery.
package mailserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-smtp"
)

// Config configures a Server. The zero value is usable: it serves the domain
// "example.org" with no users on random loopback ports.
type Config struct {
	// Domain is the primary mail domain, also used as the SMTP host name in
	// greetings. Default "example.org".
	Domain string
	// ExtraDomains are further domains whose mail is delivered locally. Users
	// are shared: "alice@example.org" and "alice@example.net" are one mailbox.
	ExtraDomains []string
	// Users maps a user name (the local part of the address, without any
	// +tag) to its password, for IMAP LOGIN and SMTP AUTH PLAIN.
	Users map[string]string
	// AutoCreateUsers creates a mailbox on demand for an unknown local part,
	// when mail arrives for it or when it logs in with AutoCreatePassword.
	// Without it, mail for unknown users is refused with 550 5.1.1.
	AutoCreateUsers bool
	// AutoCreatePassword is the password of users created on demand. Empty,
	// such users can receive mail but cannot log in until SetPassword.
	AutoCreatePassword string
	// RequireAuth refuses MAIL FROM before a successful AUTH. By default the
	// SMTP server also acts as the inbound MX: anyone may send to local users.
	RequireAuth bool
	// SaveSent, when set, keeps a copy of every message a logged-in user
	// sends, as delivered, in their folder of that name (created on
	// first use, the copy flagged \Seen), as Gmail and Outlook.com keep
	// SMTP-submitted mail in Sent.
	SaveSent string
	// AuthResults writes an Authentication-Results field with Domain as
	// authserv-id on every message delivered, saying whether the sender
	// logged in as the From address (see AuthServID), and removes any such
	// field the message already carried.
	AuthResults bool
	// OAuthTokens, when set, offers XOAUTH2 and OAUTHBEARER on IMAP and
	// SMTP besides PLAIN: it says whether token is a valid access token
	// for user (the name the client gave). The user must exist.
	OAuthTokens func(user, token string) bool
	// OAuthMechanisms are the OAuth2 mechanisms offered, XOAUTH2 and
	// OAUTHBEARER by default, as Gmail does; Outlook.com offers XOAUTH2
	// only.
	OAuthMechanisms []string

	// IMAPAddr and SMTPAddr are the listen addresses; default "127.0.0.1:0"
	// (a random loopback port).
	IMAPAddr string
	SMTPAddr string

	// MaxMessageBytes limits the size of one message; default 10 MiB.
	MaxMessageBytes int64
	// MaxRecipients limits RCPT TO per transaction; default 1000.
	MaxRecipients int
	// SMTPTimeout bounds each read and write on an SMTP connection; default
	// 2 minutes.
	SMTPTimeout time.Duration

	// Fault, when set, decides per SMTP transaction whether it succeeds. It
	// sees the envelope and the data, and may be replaced later by SetFault.
	Fault FaultFunc
	// SendLimit, when set, refuses authenticated users' mail past a
	// number of recipients in a rolling window, as providers do; see
	// SetSendLimit.
	SendLimit *SendLimit
	// Relay, when set (host:port), hands the mail the SMTP server accepts
	// on to the SMTP server there (in plain text, without logging in)
	// instead of delivering it to local mailboxes, within the
	// transaction: the client's 250 means Relay has taken the message, and
	// Relay's refusal is the client's answer. RCPT then takes any address,
	// for Relay to judge; a recipient Relay refuses refuses the whole
	// transaction. Mail relayed is kept for Messages and shown to
	// OnMessage as Delivered.
	Relay string
	// OnMessage, when set, is called after every SMTP DATA transaction with
	// what was received and how it ended. It runs on the connection's
	// goroutine before the client gets its reply; it must not block long.
	OnMessage func(Delivery)
	// Sinks are users whose mail is accepted and shown to OnMessage, but
	// neither put into their INBOX nor kept for Messages: a load tool's
	// recipients, whose mail would otherwise pile up in memory for the
	// server's lifetime. A transaction is still kept when any of its
	// recipients is not a sink.
	Sinks []string

	// Logger receives connection errors; default slog.Default().
	Logger *slog.Logger
}

// Delivery is one SMTP DATA transaction as the server saw it.
type Delivery struct {
	// Seq numbers the transactions from 1, in the order their data arrived.
	Seq int
	// At is when the data had been received.
	At time.Time
	// Auth is the user that authenticated the session, or "".
	Auth string
	// From is the reverse path of MAIL FROM ("" for the null sender).
	From string
	// To are the RCPT TO addresses, as given.
	To []string
	// Data is the message as received, before any header was added. It is
	// shared: do not modify it.
	Data []byte
	// Fault is what the fault function decided (FaultNone without one).
	Fault Fault
	// Delivered tells whether the message was put into the recipients'
	// mailboxes. It can be true while the client saw an error
	// (FaultDropAfterDelivery).
	Delivered bool
}

// Server is a running IMAP and SMTP server. Its methods are safe for
// concurrent use.
type Server struct {
	opts    Config
	domains map[string]bool
	log     *slog.Logger

	imapLn, smtpLn net.Listener
	imap           *imapserver.Server
	smtp           *smtp.Server
	wg             sync.WaitGroup

	mu    sync.Mutex
	users map[string]*user
	fault FaultFunc
	// sendLimit, when set, limits what authenticated users may send.
	sendLimit *SendLimit
	messages  []Delivery
	// seq numbers the transactions, kept or not.
	seq    int
	closed bool
	// wake is closed, and replaced, whenever mail is delivered, to wake
	// idling IMAP sessions.
	wake chan struct{}
	// uidBase is added to every UIDVALIDITY the server reports; see
	// nextUIDBase.
	uidBase uint32
}

// user is one mailbox owner.
type user struct {
	name string
	pass string
	mem  *imapmemserver.User
	// delivered keeps every message put into INBOX, so that ResetMailbox can
	// rebuild it the way a server that lost its UID state would.
	delivered [][]byte
	// conns are the IMAP connections logged in as this user.
	conns map[*imapserver.Conn]struct{}
	// sink: mail to this user is reported, not kept (Options.Sinks).
	sink bool
}

const inbox = "INBOX"

var (
	uidBaseMu   sync.Mutex
	lastUIDBase uint32
)

// nextUIDBase is where this server's UIDVALIDITY values start: the time
// in seconds, and later than any other server of this process. The mail
// lives in memory, so a restarted server numbers its messages from UID 1
// again; IMAP requires a new UIDVALIDITY then, or a client (the host's
// store among them) would take new mail for mail it has already seen.
func nextUIDBase() uint32 {
	uidBaseMu.Lock()
	defer uidBaseMu.Unlock()
	b := uint32(time.Now().Unix())
	if b <= lastUIDBase {
		b = lastUIDBase + 1<<16
	}
	lastUIDBase = b
	return b
}

// Start listens on both addresses and serves until Close.
func Start(opts Config) (*Server, error) {
	if opts.Domain == "" {
		opts.Domain = "example.org"
	}
	if opts.IMAPAddr == "" {
		opts.IMAPAddr = "127.0.0.1:0"
	}
	if opts.SMTPAddr == "" {
		opts.SMTPAddr = "127.0.0.1:0"
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 10 << 20
	}
	if opts.MaxRecipients <= 0 {
		opts.MaxRecipients = 1000
	}
	if opts.SMTPTimeout <= 0 {
		opts.SMTPTimeout = 2 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{
		opts:      opts,
		domains:   map[string]bool{strings.ToLower(opts.Domain): true},
		log:       opts.Logger.With("component", "mailserver"),
		users:     map[string]*user{},
		fault:     opts.Fault,
		sendLimit: opts.SendLimit,
		wake:      make(chan struct{}),
		uidBase:   nextUIDBase(),
	}
	for _, d := range opts.ExtraDomains {
		s.domains[strings.ToLower(d)] = true
	}
	for _, name := range opts.Sinks {
		known := false
		for u := range opts.Users {
			known = known || strings.EqualFold(u, name)
		}
		if !known && !opts.AutoCreateUsers {
			return nil, fmt.Errorf("mailserver: sink %q is not a user", name)
		}
	}
	for name, pass := range opts.Users {
		if err := s.AddUser(name, pass); err != nil {
			return nil, err
		}
	}

	var err error
	if s.imapLn, err = net.Listen("tcp", opts.IMAPAddr); err != nil {
		return nil, fmt.Errorf("mailserver: listen IMAP on %s: %w", opts.IMAPAddr, err)
	}
	if s.smtpLn, err = net.Listen("tcp", opts.SMTPAddr); err != nil {
		s.imapLn.Close()
		return nil, fmt.Errorf("mailserver: listen SMTP on %s: %w", opts.SMTPAddr, err)
	}

	s.imap = imapserver.New(&imapserver.Options{
		NewSession: func(c *imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return &imapSession{srv: s, conn: c}, nil, nil
		},
		// IMAP4rev2 brings MOVE, UIDPLUS, ESEARCH; IDLE is advertised with both.
		Caps: imap.CapSet{
			imap.CapIMAP4rev1: {},
			imap.CapIMAP4rev2: {},
		},
		// Loopback only: there is no TLS, so plain LOGIN must be allowed.
		InsecureAuth: true,
		Logger:       printfLogger{s.log.With("proto", "imap")},
	})

	s.smtp = smtp.NewServer(&backend{srv: s})
	s.smtp.Domain = opts.Domain
	s.smtp.MaxMessageBytes = opts.MaxMessageBytes
	s.smtp.MaxRecipients = opts.MaxRecipients
	s.smtp.ReadTimeout = opts.SMTPTimeout
	s.smtp.WriteTimeout = opts.SMTPTimeout
	s.smtp.AllowInsecureAuth = true
	s.smtp.ErrorLog = printfLogger{s.log.With("proto", "smtp")}

	// Both servers close only the listeners their Serve has registered, and
	// go-imap's Serve adds to a WaitGroup that Close waits on: a Close that
	// came before a Serve goroutine ran would hang or race. Start returns
	// once both are accepting.
	imapLn, smtpLn := newReadyListener(s.imapLn), newReadyListener(s.smtpLn)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		if err := s.imap.Serve(imapLn); err != nil && !s.isClosed() {
			s.log.Error("IMAP server stopped", "err", err)
		}
	}()
	go func() {
		defer s.wg.Done()
		if err := s.smtp.Serve(smtpLn); err != nil && !s.isClosed() {
			s.log.Error("SMTP server stopped", "err", err)
		}
	}()
	<-imapLn.ready
	<-smtpLn.ready
	return s, nil
}

// readyListener tells, by closing ready, that a server has called Accept:
// its Serve has registered the listener by then.
type readyListener struct {
	net.Listener
	once  sync.Once
	ready chan struct{}
}

func newReadyListener(l net.Listener) *readyListener {
	return &readyListener{Listener: l, ready: make(chan struct{})}
}

func (l *readyListener) Accept() (net.Conn, error) {
	l.once.Do(func() { close(l.ready) })
	return l.Listener.Accept()
}

// IMAPAddr is the address the IMAP server listens on ("127.0.0.1:port").
func (s *Server) IMAPAddr() string { return s.imapLn.Addr().String() }

// SMTPAddr is the address the SMTP server listens on ("127.0.0.1:port").
func (s *Server) SMTPAddr() string { return s.smtpLn.Addr().String() }

// Domain is the primary mail domain.
func (s *Server) Domain() string { return s.opts.Domain }

// AuthServID is the authserv-id of the Authentication-Results fields the
// server writes, "" when it writes none.
func (s *Server) AuthServID() string {
	if !s.opts.AuthResults {
		return ""
	}
	return s.opts.Domain
}

// Close stops both servers and closes every connection.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()

	errSMTP := s.smtp.Close()
	errIMAP := s.imap.Close()
	s.wg.Wait()
	if errSMTP != nil && !errors.Is(errSMTP, net.ErrClosed) {
		return fmt.Errorf("mailserver: close SMTP: %w", errSMTP)
	}
	if errIMAP != nil && !errors.Is(errIMAP, net.ErrClosed) {
		return fmt.Errorf("mailserver: close IMAP: %w", errIMAP)
	}
	return nil
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// AddUser creates a user with an empty INBOX. The name is the local part of
// its addresses, without a +tag; it is matched case-insensitively.
func (s *Server) AddUser(name, pass string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.addUserLocked(name, pass)
	return err
}

func (s *Server) addUserLocked(name, pass string) (*user, error) {
	name = strings.ToLower(name)
	if name == "" || strings.ContainsAny(name, "+@ \t\r\n") {
		return nil, fmt.Errorf("mailserver: invalid user name %q", name)
	}
	if _, ok := s.users[name]; ok {
		return nil, fmt.Errorf("mailserver: user %q already exists", name)
	}
	mem := imapmemserver.NewUser(name, pass)
	if err := mem.Create(inbox, nil); err != nil {
		return nil, fmt.Errorf("mailserver: create INBOX of %q: %w", name, err)
	}
	u := &user{name: name, pass: pass, mem: mem, conns: map[*imapserver.Conn]struct{}{},
		sink: slices.ContainsFunc(s.opts.Sinks, func(n string) bool { return strings.EqualFold(n, name) })}
	s.users[name] = u
	return u, nil
}

// SetPassword changes a user's password.
func (s *Server) SetPassword(name, pass string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[strings.ToLower(name)]
	if !ok {
		return fmt.Errorf("mailserver: no user %q", name)
	}
	u.pass = pass
	return nil
}

// HasUser reports whether a mailbox exists for the user.
func (s *Server) HasUser(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.users[strings.ToLower(name)]
	return ok
}

// Deliver puts a message into a user's INBOX as if it had arrived over SMTP
// for rcpt, with the same headers added, bypassing SMTP, its limits and the
// fault function. It is the way to inject mail no SMTP client would send.
//
// The in-memory IMAP store re-writes the header when it serves BODY[]: bare
// LF line ends come back as CRLF, and a message whose header it cannot parse
// at all comes back empty.
func (s *Server) Deliver(from, rcpt string, data []byte) error {
	return s.DeliverAt(from, rcpt, data, time.Time{})
}

// DeliverAt is Deliver with the arrival time the mailbox records for the
// message (its INTERNALDATE, in whole seconds); zero means now. It stands
// for mail that reached the mailbox while no one was reading it.
func (s *Server) DeliverAt(from, rcpt string, data []byte, at time.Time) error {
	u, err := s.localUser(rcpt, true)
	if err != nil {
		return err
	}
	return s.deliverAt(u, from, rcpt, "localhost", "", "", data, at)
}

// SetFault replaces the fault function; nil lets every transaction succeed.
func (s *Server) SetFault(f FaultFunc) {
	s.mu.Lock()
	s.fault = f
	s.mu.Unlock()
}

// Messages returns every SMTP DATA transaction so far, in order.
func (s *Server) Messages() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.messages...)
}

// DropConnections closes every IMAP connection logged in as the user, with
// a BYE, as a server restart would. It returns how many were closed.
func (s *Server) DropConnections(name string) int {
	s.mu.Lock()
	u, ok := s.users[strings.ToLower(name)]
	var conns []*imapserver.Conn
	if ok {
		for c := range u.conns {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		if err := c.Bye("Connection closed by the server"); err != nil {
			s.log.Debug("BYE failed", "user", name, "err", err)
		}
	}
	return len(conns)
}

// ResetMailbox rebuilds a user's INBOX the way a server that lost its UID
// state would: the mailbox gets a new UIDVALIDITY, every message ever
// delivered to it is there again, unflagged, with new UIDs, and the user's
// IMAP connections are dropped. Clients keyed on UIDs alone would see all
// of that mail as new.
func (s *Server) ResetMailbox(name string) (uidValidity uint32, err error) {
	s.mu.Lock()
	u, ok := s.users[strings.ToLower(name)]
	if !ok {
		s.mu.Unlock()
		return 0, fmt.Errorf("mailserver: no user %q", name)
	}
	delivered := append([][]byte(nil), u.delivered...)
	// Deleting and re-creating gives the mailbox a new UIDVALIDITY
	// (imapmemserver increments it per user on every Create).
	if err := u.mem.Delete(inbox); err != nil {
		s.mu.Unlock()
		return 0, fmt.Errorf("mailserver: delete INBOX of %q: %w", name, err)
	}
	if err := u.mem.Create(inbox, nil); err != nil {
		s.mu.Unlock()
		return 0, fmt.Errorf("mailserver: re-create INBOX of %q: %w", name, err)
	}
	for _, b := range delivered {
		if _, err := u.mem.Append(inbox, bytes.NewReader(b), &imap.AppendOptions{}); err != nil {
			s.mu.Unlock()
			return 0, fmt.Errorf("mailserver: refill INBOX of %q: %w", name, err)
		}
	}
	st, err := u.mem.Status(inbox, &imap.StatusOptions{UIDValidity: true})
	s.wakeLocked()
	s.mu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("mailserver: status of INBOX of %q: %w", name, err)
	}
	s.DropConnections(name)
	return st.UIDValidity + s.uidBase, nil
}

// localUser resolves an address of a local domain to its user, creating it
// when create is set and Options.AutoCreateUsers allows.
func (s *Server) localUser(addr string, create bool) (*user, error) {
	local, domain, ok := splitAddress(addr)
	if !ok {
		return nil, &smtp.SMTPError{Code: 501, EnhancedCode: smtp.EnhancedCode{5, 1, 3}, Message: "Bad recipient address syntax"}
	}
	if !s.domains[domain] {
		return nil, &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "Relaying denied: not a local domain"}
	}
	name, _, _ := strings.Cut(local, "+")
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[name]; ok {
		return u, nil
	}
	if !create || !s.opts.AutoCreateUsers {
		return nil, &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
	}
	u, err := s.addUserLocked(name, s.opts.AutoCreatePassword)
	if err != nil {
		return nil, &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user here"}
	}
	return u, nil
}

// loginName is the user a login names: "alice" as given, or the local
// part of "alice@<local domain>", either without its +tag; false for an
// address of another domain.
func (s *Server) loginName(username string) (string, bool) {
	name := strings.ToLower(username)
	if local, domain, ok := splitAddress(name); ok {
		if !s.domains[domain] {
			return "", false
		}
		name = local
	}
	// A +tag names the mailbox mail to it goes to, as delivery reads it:
	// "host+x" is the host's mailbox, with the host's password, never a
	// mailbox of its own made with the password of users made on demand.
	name, _, _ = strings.Cut(name, "+")
	return name, name != ""
}

// authenticate checks a user name ("alice" or "alice@<local domain>") and
// password, for IMAP and SMTP alike.
func (s *Server) authenticate(username, password string) (*user, bool) {
	name, ok := s.loginName(username)
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[name]
	if !ok && s.opts.AutoCreateUsers && s.opts.AutoCreatePassword != "" && password == s.opts.AutoCreatePassword {
		var err error
		if u, err = s.addUserLocked(name, s.opts.AutoCreatePassword); err != nil {
			return nil, false
		}
		ok = true
	}
	// An empty password never logs in: it marks a receive-only mailbox.
	if !ok || u.pass == "" || u.pass != password {
		return nil, false
	}
	return u, true
}

// deliverTo appends one copy of data to the user's INBOX, with the trace
// headers a delivering MTA adds. login is the user the SMTP session
// logged in as, "" for none.
func (s *Server) deliverTo(u *user, from, rcpt, helo, remote, login string, data []byte) error {
	return s.deliverAt(u, from, rcpt, helo, remote, login, data, time.Time{})
}

// deliverAt is deliverTo with the arrival time to record; zero means now.
func (s *Server) deliverAt(u *user, from, rcpt, helo, remote, login string, data []byte, at time.Time) error {
	received := at
	if received.IsZero() {
		received = time.Now()
	}
	if remote == "" {
		remote = "local injection"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Return-Path: <%s>\r\n", from)
	fmt.Fprintf(&b, "Delivered-To: %s\r\n", rcpt)
	fmt.Fprintf(&b, "Received: from %s (%s)\r\n\tby %s (mafiamail mailserver) with ESMTP\r\n\tfor <%s>; %s\r\n",
		helo, remote, s.opts.Domain, rcpt, received.Format(time.RFC1123Z))
	if s.opts.AuthResults {
		fmt.Fprintf(&b, "Authentication-Results: %s\r\n", s.authResults(login, data))
		data = s.withoutOwnAuthResults(data)
	}
	b.Write(data)
	msg := b.Bytes()

	s.mu.Lock()
	defer s.mu.Unlock()
	if u.sink {
		return nil
	}
	_, err := u.mem.Append(inbox, bytes.NewReader(msg), &imap.AppendOptions{Time: at})
	if err != nil {
		// A client may have deleted INBOX; a real server re-creates it.
		if cerr := u.mem.Create(inbox, nil); cerr != nil {
			return fmt.Errorf("mailserver: deliver to %s: %w", u.name, err)
		}
		if _, err = u.mem.Append(inbox, bytes.NewReader(msg), &imap.AppendOptions{Time: at}); err != nil {
			return fmt.Errorf("mailserver: deliver to %s: %w", u.name, err)
		}
	}
	u.delivered = append(u.delivered, msg)
	s.wakeLocked()
	return nil
}

// wakeChan returns the channel the next delivery closes.
func (s *Server) wakeChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wake
}

func (s *Server) wakeLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// record stores a finished transaction, unless it went to sinks alone,
// and hands it to OnMessage.
func (s *Server) record(m Delivery, sinksOnly bool) {
	s.mu.Lock()
	s.seq++
	m.Seq = s.seq
	if !sinksOnly {
		s.messages = append(s.messages, m)
	}
	s.mu.Unlock()
	if s.opts.OnMessage != nil {
		s.opts.OnMessage(m)
	}
}

func (s *Server) currentFault() FaultFunc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fault
}

// splitAddress splits "local@domain" and lowercases both halves: user names
// are case-insensitive here, as on nearly every real server.
func splitAddress(addr string) (local, domain string, ok bool) {
	addr = strings.Trim(strings.TrimSpace(addr), "<>")
	i := strings.LastIndexByte(addr, '@')
	if i <= 0 || i == len(addr)-1 {
		return "", "", false
	}
	return strings.ToLower(addr[:i]), strings.ToLower(addr[i+1:]), true
}

// printfLogger adapts slog to the Printf-style loggers of go-imap and go-smtp.
type printfLogger struct{ l *slog.Logger }

func (p printfLogger) Printf(format string, v ...any) {
	p.l.Log(context.Background(), slog.LevelDebug, strings.TrimSpace(fmt.Sprintf(format, v...)))
}

func (p printfLogger) Println(v ...any) {
	p.l.Log(context.Background(), slog.LevelDebug, strings.TrimSpace(fmt.Sprintln(v...)))
}
