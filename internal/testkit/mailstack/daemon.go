//go:build linux

package mailstack

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// daemon is one master process, Postfix's or Dovecot's, started as a child of
// the test process and leader of its own process group: the group is how the
// daemon's workers are found and ended, since they are not our children.
type daemon struct {
	name string
	pid  int           // also the process group ID
	out  string        // file receiving the master's stdout and stderr
	done chan struct{} // closed once the master has exited and been reaped
	err  error         // from Wait; read only after done is closed

	watchdog *exec.Cmd
	leash    *os.File // write end of the watchdog's stdin
}

// daemonEnv is the whole environment of a daemon: nothing of the test
// process leaks in (a MAIL_CONFIG there would redirect Postfix).
var daemonEnv = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}

// watchdogScript guards a daemon's process group ($1) for the case that the
// test binary dies without stopping it: killed, or ended by go test's
// timeout. The script reads its stdin, a pipe whose only writer is the test
// process; the kernel closes that pipe whatever way the process ends, and
// read then returns without a line. A stop that went well writes "done"
// first. The kernel's parent-death signal would not do: Postfix's master
// switches its effective uid back and forth while it starts, which clears
// that signal (prctl(2)). The watchdog has a process group of its own and
// ignores the signals of a terminal's ^C, which go to the test's group.
const watchdogScript = `trap '' INT HUP QUIT TERM
read -r line
[ "$line" = done ] || kill -TERM "-$1" 2>/dev/null
`

// spawn starts path with args and a watchdog for it. ownGroup puts the child
// in a new process group; Postfix's master must not get one, because it
// makes itself a session leader with setsid(2), which a group leader may not.
func spawn(name, outPath string, ownGroup bool, path string, args ...string) (*daemon, error) {
	out, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(path, args...)
	cmd.Env = daemonEnv
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: ownGroup}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, pid: cmd.Process.Pid, out: outPath, done: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.done)
	}()
	if err := d.guard(); err != nil {
		_ = d.stop(stopTimeout)
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return d, nil
}

func (d *daemon) guard() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("watchdog: %w", err)
	}
	defer r.Close() // the watchdog has its own copy
	wd := exec.Command("/bin/sh", "-c", watchdogScript, "mailstack-watchdog", strconv.Itoa(d.pid))
	wd.Env = daemonEnv
	wd.Dir = "/"
	wd.Stdin = r
	wd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := wd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("watchdog: %w", err)
	}
	d.watchdog, d.leash = wd, w
	return nil
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// stop ends the daemon and returns once no process of its group is left,
// escalating to SIGKILL halfway through timeout. The masters do not wait for
// their workers to exit, so neither does the master's exit end the wait.
func (d *daemon) stop(timeout time.Duration) error {
	start := time.Now()
	if !d.exited() {
		// To the whole group: Dovecot's master would otherwise wait up to
		// ten seconds for its IMAP processes to end their sessions. A
		// Postfix master stopped right after its start may not lead its
		// group yet.
		if err := syscall.Kill(-d.pid, syscall.SIGTERM); err != nil {
			_ = syscall.Kill(d.pid, syscall.SIGTERM)
		}
		select {
		case <-d.done:
		case <-time.After(timeout / 2):
			_ = syscall.Kill(d.pid, syscall.SIGKILL)
			<-d.done
		}
	}
	killed := false
	for {
		left := groupMembers(d.pid)
		if len(left) == 0 {
			return d.unguard(true)
		}
		elapsed := time.Since(start)
		if elapsed > timeout {
			// Leave the rest to the watchdog, the last resort.
			return errors.Join(
				fmt.Errorf("stop %s: processes of group %d still running after %v: %s", d.name, d.pid, timeout, describe(left)),
				d.unguard(false))
		}
		if !killed && elapsed > timeout/2 {
			_ = syscall.Kill(-d.pid, syscall.SIGKILL)
			killed = true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// unguard ends the watchdog: quietly when the daemon is known to be gone,
// else by closing the pipe so that it signals the group once more.
func (d *daemon) unguard(stopped bool) error {
	if d.watchdog == nil {
		return nil
	}
	if stopped {
		_, _ = d.leash.WriteString("done\n")
	}
	d.leash.Close()
	err := d.watchdog.Wait()
	d.watchdog = nil
	if err != nil && stopped {
		return fmt.Errorf("%s watchdog: %w", d.name, err)
	}
	return nil
}

// groupMembers lists the live processes of process group pgid. Zombies do
// not count: they run nothing and hold no port, and reaping the orphaned
// ones is init's business.
func groupMembers(pgid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold spaces and
		// parentheses, so fields are counted from the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// describe names processes by their command lines, for error messages.
func describe(pids []int) string {
	var b strings.Builder
	for i, pid := range pids {
		if i > 0 {
			b.WriteString(", ")
		}
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		fmt.Fprintf(&b, "%d %q", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")))
	}
	return b.String()
}

// errExited means a daemon ended before it was ready; errPortTaken that a
// port of the stack was bound by someone else first, which is worth another
// try with other ports.
var (
	errExited    = errors.New("exited before it was ready")
	errPortTaken = errors.New("a port is in use")
)

// awaitGreeting dials addr until the server there greets with a line that
// starts with prefix and contains token, the stack's own ID. The token tells
// our daemon from a stranger that took the port; d's exit ends the wait.
func awaitGreeting(d *daemon, addr, prefix, token, quit string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if d.exited() {
			return fmt.Errorf("%s: %w", d.name, errExited)
		}
		line, err := greeting(addr, quit)
		if err == nil {
			if strings.HasPrefix(line, prefix) && strings.Contains(line, token) {
				return nil
			}
			return fmt.Errorf("%s: %s greets with %q, not as %s: %w", d.name, addr, line, token, errPortTaken)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: no greeting on %s after %v: %w", d.name, addr, timeout, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func greeting(addr, quit string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read greeting: %w", err)
	}
	// Say goodbye so the servers log a clean disconnect, not a lost client.
	_, _ = conn.Write([]byte(quit))
	return strings.TrimRight(line, "\r\n"), nil
}

// pickPorts is freePorts, replaceable by tests of what follows a conflict.
var pickPorts = freePorts

// freePorts returns n distinct ports that were free on 127.0.0.1 a moment
// ago. Another process may still take one before the daemon binds it; the
// caller then retries with new ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		// Held open until all are chosen, so that the n ports differ.
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// tail returns at most the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
