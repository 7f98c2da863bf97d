//go:build !linux

package mailstack

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Stack exists on Linux only, where the stack's process handling (process
// groups, parent-death signal, /proc) works; elsewhere Start never returns
// one.
type Stack struct{}

// Start skips the test on this system, or fails it in CI, which runs Linux.
func Start(tb testing.TB, opts Options) *Stack {
	tb.Helper()
	const msg = "mailstack: real Postfix and Dovecot stacks run on Linux only"
	if v := strings.TrimSpace(os.Getenv("CI")); v != "" && v != "0" && !strings.EqualFold(v, "false") {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return nil
}

// Require skips tb on this system, or fails it in CI, as Start does.
func Require(tb testing.TB) { Start(tb, Options{}) }

// Available says why no stack can start on this system.
func Available() error { return errors.New("real Postfix and Dovecot stacks run on Linux only") }

// Launch never starts a stack on this system.
func Launch(opts Options) (*Stack, error) {
	return nil, fmt.Errorf("mailstack: no real mail servers: %w", Available())
}

// The methods exist so that tests using a Stack compile on every system;
// since Start never returns a Stack here, none of them is ever called.

func (s *Stack) SMTPAddr() string                         { return "" }
func (s *Stack) IMAPAddr() string                         { return "" }
func (s *Stack) LMTPAddr() string                         { return "" }
func (s *Stack) Domain() string                           { return "" }
func (s *Stack) Address(name string) string               { return "" }
func (s *Stack) AddUser(name, password string)            {}
func (s *Stack) WaitDelivered()                           {}
func (s *Stack) RestartDovecot()                          {}
func (s *Stack) StopDovecot()                             {}
func (s *Stack) StartDovecot()                            {}
func (s *Stack) Stop()                                    {}
func (s *Stack) SetUser(name, password string) error      { return nil }
func (s *Stack) AwaitDelivered() error                    { return nil }
func (s *Stack) AwaitDeliveredWithin(time.Duration) error { return nil }
func (s *Stack) Close() error                             { return nil }
