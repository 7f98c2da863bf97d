//go:build !linux

package mailstack

import (
	"errors"
	"fmt"
	"time"
)

// Stack exists on Linux only, where the stack's process handling (process
// groups, parent-death signal, /proc) works; elsewhere no stack starts.
type Stack struct{}

// Available says why no stack can start on this system.
func Available() error { return errors.New("real Postfix and Dovecot stacks run on Linux only") }

// Launch never starts a stack on this system.
func Launch(opts Options) (*Stack, error) {
	return nil, fmt.Errorf("mailstack: no real mail servers: %w", Available())
}

// The methods exist so that code using a Stack compiles on every system;
// since no Stack is ever started here, none of them is ever called.

func (s *Stack) SMTPAddr() string                        { return "" }
func (s *Stack) IMAPAddr() string                        { return "" }
func (s *Stack) LMTPAddr() string                        { return "" }
func (s *Stack) Domain() string                          { return "" }
func (s *Stack) Address(name string) string              { return "" }
func (s *Stack) AddUser(name, password string) error     { return Available() }
func (s *Stack) WaitDelivered() error                    { return Available() }
func (s *Stack) WaitDeliveredWithin(time.Duration) error { return Available() }
func (s *Stack) RestartDovecot() error                   { return Available() }
func (s *Stack) StopDovecot() error                      { return Available() }
func (s *Stack) StartDovecot() error                     { return Available() }
func (s *Stack) LogTails(n int) string                   { return "" }
func (s *Stack) Close() error                            { return nil }
