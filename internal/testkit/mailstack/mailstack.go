//go:build linux

package mailstack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"
)

// Generous bounds for a loaded two-core machine: they only matter when
// something is broken, and a healthy start takes a fraction of a second.
const (
	readyTimeout   = 60 * time.Second
	stopTimeout    = 30 * time.Second
	deliverTimeout = 120 * time.Second
	startTries     = 5
)

// Stack is a running Postfix and Dovecot pair. Every method returns its
// error, whether the stack came from Launch (a program) or Start (a test).
type Stack struct {
	progs programs
	l     layout

	mu          sync.Mutex // guards everything below, and the users' files
	users       map[string]string
	passwdStamp time.Time // modification time of the latest passwd-file
	postfix     *daemon
	dovecot     *daemon
	stopped     bool
}

// Available tells whether a stack can start here: it returns why not,
// such as a missing package or a process that is not root.
func Available() error {
	_, err := programsFinder()
	return err
}

// Launch starts Postfix and Dovecot; the caller must Close the stack.
func Launch(opts Config) (*Stack, error) {
	progs, err := programsFinder()
	if err != nil {
		return nil, fmt.Errorf("mailstack: no real mail servers: %w", err)
	}
	s, err := launch(progs, opts)
	if err != nil {
		return nil, fmt.Errorf("mailstack: %w", err)
	}
	return s, nil
}

func launch(progs programs, opts Config) (_ *Stack, err error) {
	domain := strings.ToLower(opts.Domain)
	if domain == "" {
		domain = DefaultDomain
	}
	if !domainRE.MatchString(domain) {
		return nil, fmt.Errorf("domain %q is not a plain DNS name", opts.Domain)
	}
	id, err := newID()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mailstack-"+id+"-")
	if err != nil {
		return nil, fmt.Errorf("create stack folder: %w", err)
	}
	s := &Stack{
		progs: progs,
		l: layout{
			ID: id, Dir: dir, Domain: domain,
			MailUID: progs.mailUID, MailGID: progs.mailGID,
		},
		users: map[string]string{},
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.halt())
		}
	}()
	if err := s.prepare(); err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		err := s.startAll()
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortTaken) || try == startTries {
			return nil, err
		}
		if err := s.stopDaemons(); err != nil {
			return nil, err
		}
	}
}

var domainRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$`)

func newID() (string, error) {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("stack id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// prepare lays out the stack's folder. os.MkdirTemp makes it 0700, which
// would lock out Postfix's and Dovecot's unprivileged processes.
func (s *Stack) prepare() error {
	p, l := s.progs, s.l
	if err := os.Chmod(l.Dir, 0o755); err != nil {
		return fmt.Errorf("open stack folder: %w", err)
	}
	type dir struct {
		path     string
		uid, gid int
		mode     os.FileMode
	}
	// Postfix's queue as its post-install script lays it out, made here so
	// that starting a stack runs no script that also touches system files.
	q := l.postfixQueueDir()
	dirs := []dir{
		{filepath.Join(l.Dir, "postfix"), 0, 0, 0o755},
		{l.postfixConfDir(), 0, 0, 0o755},
		{q, 0, 0, 0o755},
		{filepath.Join(q, "pid"), 0, 0, 0o755},
		{filepath.Join(q, "maildrop"), p.postfixUID, p.postdropGID, 0o730},
		{filepath.Join(q, "public"), p.postfixUID, p.postdropGID, 0o710},
		{l.postfixDataDir(), p.postfixUID, p.postfixGID, 0o700},
		{l.dovecotDir(), 0, 0, 0o755},
		{l.usersDir(), 0, p.dovecotGID, 0o750},
		{l.mailDir(), p.mailUID, p.mailGID, 0o700},
	}
	for _, name := range []string{"active", "bounce", "corrupt", "defer", "deferred", "flush", "hold", "incoming", "private", "saved", "trace"} {
		dirs = append(dirs, dir{filepath.Join(q, name), p.postfixUID, 0, 0o700})
	}
	for _, d := range dirs {
		if err := os.Mkdir(d.path, d.mode); err != nil {
			return fmt.Errorf("lay out stack folder: %w", err)
		}
		// Mkdir's mode is cut by the umask; set it exactly.
		if err := os.Chmod(d.path, d.mode); err != nil {
			return fmt.Errorf("lay out stack folder: %w", err)
		}
		if err := os.Chown(d.path, d.uid, d.gid); err != nil {
			return fmt.Errorf("lay out stack folder: %w", err)
		}
	}
	return nil
}

// startAll picks free ports, writes the configuration for them and starts
// both daemons. It returns an error wrapping errPortTaken when a port was
// taken before a daemon could bind it.
func (s *Stack) startAll() error {
	ports, err := pickPorts(3)
	if err != nil {
		return err
	}
	s.l.SMTPPort, s.l.IMAPPort, s.l.LMTPPort = ports[0], ports[1], ports[2]
	files := []struct {
		path string
		tmpl *template.Template
	}{
		{filepath.Join(s.l.postfixConfDir(), "main.cf"), mainCF},
		{filepath.Join(s.l.postfixConfDir(), "master.cf"), masterCF},
		{s.l.dovecotConf(), dovecotConf},
	}
	for _, f := range files {
		b, err := render(f.tmpl, s.l)
		if err != nil {
			return err
		}
		if err := writeFile(f.path, b, 0o644, 0, 0); err != nil {
			return err
		}
		// Postfix's programs wait until their configuration is a second
		// old, lest they read a file being edited: back-date it.
		past := time.Now().Add(-time.Hour)
		if err := os.Chtimes(f.path, past, past); err != nil {
			return fmt.Errorf("back-date %s: %w", f.path, err)
		}
	}
	// After main.cf, which postmap reads.
	if err := s.writeMailboxes(); err != nil {
		return err
	}
	if err := s.startPostfix(); err != nil {
		return err
	}
	return s.startDovecot()
}

func (s *Stack) startPostfix() error {
	d, err := spawn("postfix", filepath.Join(s.l.Dir, "postfix", "master.out"), false,
		s.progs.master, "-c", s.l.postfixConfDir())
	if err != nil {
		return err
	}
	s.postfix = d
	if err := awaitGreeting(d, s.SMTPAddr(), "220 ", "mailstack-"+s.l.ID, "QUIT\r\n", readyTimeout); err != nil {
		return s.explain(err, d, s.l.postfixLog(), s.SMTPAddr())
	}
	return nil
}

func (s *Stack) startDovecot() error {
	d, err := spawn("dovecot", filepath.Join(s.l.dovecotDir(), "master.out"), true,
		s.progs.dovecot, "-F", "-c", s.l.dovecotConf())
	if err != nil {
		return err
	}
	s.dovecot = d
	if err := awaitGreeting(d, s.IMAPAddr(), "* OK ", "mailstack-"+s.l.ID, "a LOGOUT\r\n", readyTimeout); err != nil {
		return s.explain(err, d, s.l.dovecotLog(), s.IMAPAddr(), s.LMTPAddr())
	}
	// Dovecot binds every listener before it starts any login process, so
	// once IMAP greets, the LMTP port is Dovecot's too.
	if err := awaitGreeting(d, s.LMTPAddr(), "220 ", "", "QUIT\r\n", readyTimeout); err != nil {
		return s.explain(err, d, s.l.dovecotLog(), s.IMAPAddr(), s.LMTPAddr())
	}
	return nil
}

// explain adds the end of the daemon's logs to a start error, and marks it
// errPortTaken when one of the daemon's addresses cannot be bound now, so
// that the caller tries again, with other ports where it can. (Postfix's
// master reports a failed bind nowhere that can be read: its stderr is
// closed and its log service not yet running.)
func (s *Stack) explain(err error, d *daemon, logPath string, addrs ...string) error {
	if errors.Is(err, errExited) {
		// Let the master finish dying, so that its last words are on disk
		// and its ports free.
		<-d.done
		for _, addr := range addrs {
			l, lerr := net.Listen("tcp", addr)
			if lerr != nil {
				err = fmt.Errorf("%w: %w (%w)", err, lerr, errPortTaken)
				break
			}
			l.Close()
		}
	}
	logs := strings.TrimSpace(tail(d.out, 20) + "\n" + tail(logPath, 20))
	if logs != "" {
		err = fmt.Errorf("%w; log:\n%s", err, logs)
	}
	return err
}

// SMTPAddr is Postfix's SMTP listener, host:port on 127.0.0.1: plain text,
// no authentication, mail accepted for the stack's domain only.
func (s *Stack) SMTPAddr() string { return hostPort(s.l.SMTPPort) }

// IMAPAddr is Dovecot's IMAP listener, host:port on 127.0.0.1: plain text,
// LOGIN and AUTHENTICATE PLAIN with a user's local name or full address.
func (s *Stack) IMAPAddr() string { return hostPort(s.l.IMAPPort) }

// LMTPAddr is Dovecot's LMTP listener, through which Postfix delivers; tests
// may deliver there directly to bypass Postfix's queue.
func (s *Stack) LMTPAddr() string { return hostPort(s.l.LMTPPort) }

// Domain is the mail domain the stack receives mail for.
func (s *Stack) Domain() string { return s.l.Domain }

// Address returns the mail address of user name: name@Domain().
func (s *Stack) Address(name string) string { return name + "@" + s.l.Domain }

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

var userRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// AddUser creates a mailbox for name@Domain() whose IMAP password is
// password, or changes the password of an existing one. Mail for name,
// including name+anything, is accepted from then on; before, Postfix
// refuses it with 550. name is a lowercase local part without "+". When
// AddUser returns, both servers know the user, as far as they run.
func (s *Stack) AddUser(name, password string) error {
	if !userRE.MatchString(name) {
		return fmt.Errorf("add user %q: want a lowercase local part of letters, digits, '.', '_' or '-'", name)
	}
	if password == "" || strings.ContainsAny(password, ":\r\n") {
		return fmt.Errorf("add user %q: the password must be non-empty, without ':' or line breaks", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("add user %q: the stack is stopped", name)
	}
	_, known := s.users[name]
	s.users[name] = password
	if err := s.writePasswd(name); err != nil {
		return err
	}
	if !known {
		if err := s.writeMailboxes(); err != nil {
			return err
		}
	}
	if s.dovecot == nil {
		return nil // read afresh when it starts
	}
	return s.awaitLogin(name, password)
}

// writePasswd writes the passwd-file of one user. Dovecot tells a changed
// file by its size and its modification time in whole seconds, so a new
// password of the same length within the same second would go unnoticed:
// every version gets a later time than the one before.
func (s *Stack) writePasswd(name string) error {
	path := filepath.Join(s.l.usersDir(), name)
	line := fmt.Sprintf("%s:{PLAIN}%s::::::\n", name, s.users[name])
	if err := writeFile(path, []byte(line), 0o640, 0, s.progs.dovecotGID); err != nil {
		return err
	}
	stamp := time.Now().Truncate(time.Second)
	if !stamp.After(s.passwdStamp) {
		stamp = s.passwdStamp.Add(time.Second)
	}
	s.passwdStamp = stamp
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeMailboxes writes Postfix's map of the domain's mailboxes. postmap
// rebuilds the .db under a lock that Postfix's readers honour, and Postfix's
// SMTP server notices the change before it accepts its next client.
func (s *Stack) writeMailboxes() error {
	names := make([]string, 0, len(s.users))
	for name := range s.users {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "%s %s/\n", s.Address(name), name)
	}
	if err := writeFile(s.l.mailboxesMap(), []byte(b.String()), 0o644, 0, 0); err != nil {
		return err
	}
	cmd := exec.Command(s.progs.postmap, "-c", s.l.postfixConfDir(), "hash:"+s.l.mailboxesMap())
	cmd.Env = daemonEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("postmap: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// awaitLogin asks Dovecot's auth service until it accepts name and
// password: after a password change, it may answer from the old file for up
// to a second.
func (s *Stack) awaitLogin(name, password string) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		cmd := exec.Command(s.progs.doveadm, "-c", s.l.dovecotConf(), "auth", "test", "-x", "service=imap", "--", name, password)
		cmd.Env = daemonEnv
		out, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("add user %q: Dovecot does not accept the password after %v: %w: %s", name, readyTimeout, err, strings.TrimSpace(string(out)))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// writeFile replaces path atomically with data, owned by uid:gid.
func writeFile(path string, data []byte, mode os.FileMode, uid, gid int) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chown(tmp, uid, gid); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WaitDelivered waits until Postfix's queue is empty, for at most two
// minutes: every message it has accepted so far has been handed to Dovecot,
// which has confirmed it, or has been bounced. Dovecot stores a message
// before it confirms it, so a message can be in the INBOX while Postfix
// still waits for the confirmation; a restart of Dovecot then makes Postfix
// deliver it again, as a real restart would. Tests that need exactly one
// copy call WaitDelivered first.
func (s *Stack) WaitDelivered() error { return s.WaitDeliveredWithin(deliverTimeout) }

// WaitDeliveredWithin is WaitDelivered for at most timeout: a load of tens
// of thousands of messages takes minutes.
func (s *Stack) WaitDeliveredWithin(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, err := s.queued()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mailstack: %d messages still in Postfix's queue after %v", n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// queued counts the messages in Postfix's queue: the files in the queues a
// message passes through before it is delivered or bounced.
func (s *Stack) queued() (int, error) {
	n := 0
	for _, q := range []string{"maildrop", "incoming", "active", "deferred", "hold"} {
		err := filepath.WalkDir(filepath.Join(s.l.postfixQueueDir(), q), func(path string, d os.DirEntry, err error) error {
			if errors.Is(err, os.ErrNotExist) {
				return nil // delivered while we looked
			}
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				n++
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("count queued mail: %w", err)
		}
	}
	return n, nil
}

// RestartDovecot stops Dovecot, ending every IMAP session (clients see their
// connection drop, as in IDLE), and starts it again on the same ports with
// the same mailboxes; UIDVALIDITY and UIDs survive. Mail that Postfix could
// not deliver meanwhile is retried within about four seconds; see
// WaitDelivered for mail in transit at the moment of the restart.
func (s *Stack) RestartDovecot() error {
	if err := s.StopDovecot(); err != nil {
		return err
	}
	return s.StartDovecot()
}

// StopDovecot stops Dovecot and waits until all its processes are gone, so
// that tests can observe a client's behaviour while the server is down.
// Postfix keeps accepting mail and queues it. See WaitDelivered for mail in
// transit at that moment.
func (s *Stack) StopDovecot() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.dovecot == nil {
		return errors.New("mailstack: StopDovecot: Dovecot is not running")
	}
	err := s.dovecot.stop(stopTimeout)
	s.dovecot = nil
	if err != nil {
		return fmt.Errorf("mailstack: %w", err)
	}
	return nil
}

// StartDovecot starts Dovecot again after StopDovecot, on the same ports.
func (s *Stack) StartDovecot() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.dovecot != nil {
		return errors.New("mailstack: StartDovecot: Dovecot is running or the stack is stopped")
	}
	// The ports are fixed now, because clients know them. Should another
	// process have taken one meanwhile, wait a little for it to let go.
	var err error
	for try := 1; try <= startTries; try++ {
		if err = s.startDovecot(); !errors.Is(err, errPortTaken) {
			break
		}
		if s.dovecot != nil {
			if stopErr := s.dovecot.stop(stopTimeout); stopErr != nil {
				err = errors.Join(err, stopErr)
				break
			}
			s.dovecot = nil
		}
		time.Sleep(time.Duration(try) * 200 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("mailstack: restart Dovecot: %w", err)
	}
	return nil
}

// LogTails returns the last n lines of Postfix's and Dovecot's logs, for a
// failed test's report.
func (s *Stack) LogTails(n int) string {
	var b strings.Builder
	for _, f := range []string{s.l.postfixLog(), s.l.dovecotLog()} {
		if t := tail(f, n); t != "" {
			fmt.Fprintf(&b, "end of %s:\n%s\n", filepath.Base(f), t)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Close stops both servers, waits until none of their processes is left,
// and removes the stack's folder. Start calls it when the test ends;
// calling it earlier is allowed, and calling it again does nothing.
func (s *Stack) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	if err := s.halt(); err != nil {
		return fmt.Errorf("mailstack: %w", err)
	}
	return nil
}

// halt stops whatever daemon runs and removes the folder.
func (s *Stack) halt() error {
	err := s.stopDaemons()
	if rmErr := os.RemoveAll(s.l.Dir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("remove stack folder: %w", rmErr))
	}
	return err
}

func (s *Stack) stopDaemons() error {
	var errs []error
	for _, d := range []**daemon{&s.postfix, &s.dovecot} {
		if *d != nil {
			errs = append(errs, (*d).stop(stopTimeout))
			*d = nil
		}
	}
	return errors.Join(errs...)
}
