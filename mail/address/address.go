// Package address reads mail addresses strictly: the host writes an address
// into an SMTP envelope (RCPT TO:<…>) only in the form this package accepts,
// so that no address can carry envelope syntax of its own.
package address

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of RFC 5321, 4.5.3.1.
const (
	maxLocal  = 64
	maxDomain = 253
	maxLabel  = 63
)

// ErrNotPlain is wrapped by every error of Parse.
var ErrNotPlain = errors.New("not a plain mail address")

// Parse accepts an address only if it is a dot-atom local part (RFC 5322
// atext, with single dots between atoms), "@", and a domain of DNS labels
// (letters, digits and inner hyphens) with at least one dot. Letters and
// digits outside ASCII are allowed in both, as internationalised mail
// (RFC 6531) has them; quoted local parts, comments, IP literals, spaces,
// angle brackets, controls and format characters are refused: each has its
// uses, but none is needed to play, and each is a way to smuggle syntax
// into an envelope. It returns the address with its domain in lower case.
func Parse(s string) (string, error) {
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return "", fmt.Errorf("%w: %q has no @", ErrNotPlain, s)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: %q is not UTF-8", ErrNotPlain, s)
	}
	local, domain := s[:at], strings.ToLower(s[at+1:])
	if err := checkLocal(local); err != nil {
		return "", fmt.Errorf("%w: %q: %s", ErrNotPlain, s, err)
	}
	if err := checkDomain(domain); err != nil {
		return "", fmt.Errorf("%w: %q: %s", ErrNotPlain, s, err)
	}
	return local + "@" + domain, nil
}

// Valid reports whether Parse accepts s.
func Valid(s string) bool {
	_, err := Parse(s)
	return err == nil
}

func checkLocal(local string) error {
	switch {
	case local == "":
		return errors.New("the part before @ is empty")
	case len(local) > maxLocal:
		return fmt.Errorf("the part before @ is longer than %d characters", maxLocal)
	}
	for _, atom := range strings.Split(local, ".") {
		if atom == "" {
			return errors.New("the part before @ has a dot at its start or end, or two in a row")
		}
		for _, r := range atom {
			if !isAtext(r) {
				return fmt.Errorf("the part before @ holds %q", r)
			}
		}
	}
	return nil
}

func checkDomain(domain string) error {
	if domain == "" {
		return errors.New("the domain is empty")
	}
	if len(domain) > maxDomain {
		return fmt.Errorf("the domain is longer than %d characters", maxDomain)
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return errors.New("the domain has no dot")
	}
	for _, l := range labels {
		if l == "" || len(l) > maxLabel {
			return errors.New("the domain has an empty or overlong part")
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return errors.New("a part of the domain starts or ends with a hyphen")
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || nonASCIIWord(r)) {
				return fmt.Errorf("the domain holds %q", r)
			}
		}
	}
	return nil
}

// isAtext is RFC 5322's atext (letters, digits and !#$%&'*+-/=?^_`{|}~),
// with letters and digits beyond ASCII.
func isAtext(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	case r >= utf8.RuneSelf:
		return nonASCIIWord(r)
	}
	return strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r)
}

// nonASCIIWord is a letter, digit or combining mark outside ASCII: never
// a space, control, format character or symbol.
func nonASCIIWord(r rune) bool {
	return r >= utf8.RuneSelf && r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
}
