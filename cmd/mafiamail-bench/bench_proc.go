package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// benchChild is the host or the relay running as a child process of the
// bench (mafiamail-bench child), whose memory and CPU are its own.
type benchChild struct {
	name  string
	cmd   *exec.Cmd
	stats string // the child's heap figures, written on SIGUSR1
	log   string // the child's stderr
	seq   int64
	done  chan struct{}
	err   error // from Wait; read after done is closed
}

// startChild runs `exe child --stats FILE (serve|relay) --config cfg`
// (with --cpuprofile where one is asked for, started at once with
// profileNow),
// logging to a file in dir (and to logTo as well, when it is not
// io.Discard).
func startChild(exe, dir, name, sub, cfg, cpuProfile string, profileNow bool, logTo io.Writer) (*benchChild, error) {
	c := &benchChild{name: name, stats: filepath.Join(dir, name+".stats.json"),
		log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	logf, err := os.OpenFile(c.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	args := []string{"child", "--stats", c.stats}
	if cpuProfile != "" {
		args = append(args, "--cpuprofile", cpuProfile)
		if profileNow {
			args = append(args, "--profile-now")
		}
	}
	c.cmd = exec.Command(exe, append(args, sub, "--config", cfg)...)
	c.cmd.Stdout = io.Discard
	dieWithParent(c.cmd)
	c.cmd.Stderr = logf
	if logTo != io.Discard {
		// The child then writes to a pipe that this process copies to
		// both: the log stays open until the child has exited, or the
		// copy would stop at its first line and the child die of the
		// broken pipe.
		c.cmd.Stderr = io.MultiWriter(logf, logTo)
	}
	if err := c.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		logf.Close()
		close(c.done)
	}()
	return c, nil
}

// exited returns why the child has ended, or nil while it runs.
func (c *benchChild) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("%s exited early (%v); its log ends:\n%s", c.name, c.err, c.logTail(20))
	default:
		return nil
	}
}

func (c *benchChild) logTail(n int) string {
	b, err := os.ReadFile(c.log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// heap asks the child for its heap figures and waits for the fresh ones.
func (c *benchChild) heap(ctx context.Context) (childStats, error) {
	if err := c.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return childStats{}, fmt.Errorf("ask %s for its heap: %w", c.name, err)
	}
	var s childStats
	err := poll(ctx, func() bool {
		if c.exited() != nil {
			return true
		}
		b, err := os.ReadFile(c.stats)
		if err != nil {
			return false
		}
		s = childStats{}
		return json.Unmarshal(b, &s) == nil && s.Seq > c.seq
	})
	if err == nil {
		err = c.exited()
	}
	if err != nil {
		return childStats{}, fmt.Errorf("heap of %s: %w", c.name, err)
	}
	c.seq = s.Seq
	return s, nil
}

// toggleProfile starts or stops the child's CPU profile.
func (c *benchChild) toggleProfile() error {
	if err := c.cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		return fmt.Errorf("CPU profile of %s: %w", c.name, err)
	}
	return nil
}

// peakRSS is the child's VmHWM, in bytes (0 where unknown).
func (c *benchChild) peakRSS() uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux that Go runs on.
const clockTicks = 100

// cpu is the user and system CPU time the child has used so far, all its
// threads, in steps of 10 ms.
func (c *benchChild) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// "pid (comm) state ...": fields counted after the last ')'; utime and
	// stime are fields 14 and 15 of the whole line.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(ut+st) * time.Second / clockTicks
}

// stop ends the child as a signal would end serve: SIGTERM, then SIGKILL
// after a minute.
func (c *benchChild) stop() error {
	if c.exited() == nil {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(time.Minute):
			_ = c.cmd.Process.Kill()
			<-c.done
			return fmt.Errorf("%s did not stop within a minute of SIGTERM", c.name)
		}
	}
	var ee *exec.ExitError
	if errors.As(c.err, &ee) {
		return fmt.Errorf("%s: %w; its log ends:\n%s", c.name, c.err, c.logTail(20))
	}
	return c.err
}
