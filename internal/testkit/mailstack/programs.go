//go:build linux

package mailstack

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// programs is what a stack needs from the machine: the daemons' binaries and
// the system accounts the Debian packages create.
type programs struct {
	dovecot string // /usr/sbin/dovecot
	doveadm string
	master  string // Postfix's master daemon, run directly rather than through postfix(1)
	postmap string

	postfixUID, postfixGID int // owner of Postfix's queue and data directories
	postdropGID            int // group of the maildrop and public queue directories
	mailUID, mailGID       int // owner of the maildirs: Dovecot's own unprivileged user
	dovecotGID             int // may read the passwd-file
}

var (
	findOnce  sync.Once
	found     programs
	errFinder error
)

// programsFinder is findPrograms, replaceable by the test of what Start
// does on a machine without the servers.
var programsFinder = findPrograms

// findPrograms looks the binaries and accounts up once per test binary.
func findPrograms() (programs, error) {
	findOnce.Do(func() { found, errFinder = lookPrograms() })
	return found, errFinder
}

func lookPrograms() (programs, error) {
	var p programs
	if os.Geteuid() != 0 {
		return p, fmt.Errorf("running as uid %d: Postfix and Dovecot need root to start", os.Geteuid())
	}
	var err error
	if p.dovecot, err = lookSbin("dovecot"); err != nil {
		return p, err
	}
	if p.doveadm, err = lookSbin("doveadm"); err != nil {
		return p, err
	}
	out, err := exec.Command(p.dovecot, "--version").Output()
	if err != nil {
		return p, fmt.Errorf("dovecot --version: %w", err)
	}
	// The configuration written here uses Dovecot 2.3 syntax; 2.4 renamed and
	// restructured most settings and refuses 2.3 files.
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, "2.3.") {
		return p, fmt.Errorf("dovecot %s is installed; only 2.3 is supported", v)
	}

	postconf, err := lookSbin("postconf")
	if err != nil {
		return p, err
	}
	// -d reads built-in defaults only, so this works without /etc/postfix/main.cf
	// (the package's "No configuration" setup does not write one).
	out, err = exec.Command(postconf, "-dh", "daemon_directory", "command_directory").Output()
	if err != nil {
		return p, fmt.Errorf("postconf: %w", err)
	}
	dirs := strings.Fields(string(out))
	if len(dirs) != 2 {
		return p, fmt.Errorf("postconf printed %q, want two directories", out)
	}
	p.master = filepath.Join(dirs[0], "master")
	p.postmap = filepath.Join(dirs[1], "postmap")
	for _, f := range []string{p.master, p.postmap} {
		if _, err := os.Stat(f); err != nil {
			return p, fmt.Errorf("postfix is incomplete: %w", err)
		}
	}

	if p.postfixUID, p.postfixGID, err = lookUser("postfix"); err != nil {
		return p, err
	}
	if p.mailUID, p.mailGID, err = lookUser("dovecot"); err != nil {
		return p, err
	}
	p.dovecotGID = p.mailGID
	if p.postdropGID, err = lookGroup("postdrop"); err != nil {
		return p, err
	}
	return p, nil
}

// lookSbin finds a daemon's binary even when the sbin directories are not
// on PATH, as for a non-login root shell on some systems.
func lookSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not installed", name)
}

func lookUser(name string) (uid, gid int, err error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("system user: %w", err)
	}
	if uid, err = strconv.Atoi(u.Uid); err != nil {
		return 0, 0, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	if gid, err = strconv.Atoi(u.Gid); err != nil {
		return 0, 0, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	return uid, gid, nil
}

func lookGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		return 0, fmt.Errorf("system group: %w", err)
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return 0, fmt.Errorf("group %s: gid %q: %w", name, g.Gid, err)
	}
	return gid, nil
}
