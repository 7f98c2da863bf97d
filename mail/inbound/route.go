package inbound

import (
	"net/mail"
	"regexp"
	"strings"

	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/engine"
)

// RouteKind says which of the host's addresses a message was sent to.
type RouteKind string

// The addresses of docs/design.md "Addresses".
const (
	RouteHost    RouteKind = "host"    // host@domain
	RouteSignup  RouteKind = "signup"  // host+GAME@domain
	RouteThread  RouteKind = "thread"  // host+GAME-t-TOKEN@domain
	RoutePrivate RouteKind = "private" // host+GAME-p-TOKEN@domain
	RouteMafia   RouteKind = "mafia"   // host+GAME-m-TOKEN@domain
	// RouteConfirm is the one-time address a reply to which confirms a
	// request held until its sender proved the address.
	RouteConfirm RouteKind = "confirm" // host+GAME-c-TOKEN@domain
	// RouteInvalid is a plus tag on the host's address that is no game
	// address at all.
	RouteInvalid RouteKind = "invalid"
	// RouteNone: no recipient header names the host.
	RouteNone RouteKind = "none"
)

// Participant reports whether the route is a participant's channel, which
// carries a token.
func (k RouteKind) Participant() bool {
	return k == RouteThread || k == RoutePrivate || k == RouteMafia
}

// Route is the address a message was sent to, as read from its header.
type Route struct {
	Kind  RouteKind `json:"kind"`
	Game  string    `json:"game,omitempty"`
	Token string    `json:"token,omitempty"`
	// Address is the recipient address the route was read from, and
	// Header the field that held it.
	Address string `json:"address,omitempty"`
	Header  string `json:"header,omitempty"`
}

// routeHeaders are searched in this order (docs/design.md "Addresses"): a reply
// normally names the host in To; Cc when replying to all; Delivered-To and
// X-Original-To, written by the receiving server, when it came by Bcc.
var routeHeaders = []string{"To", "Cc", "Delivered-To", "X-Original-To"}

var (
	// GAME is 2–20 lowercase letters and digits; TOKEN is lowercase
	// base32 (RFC 4648 alphabet), at least 50 bits, so 10 characters.
	signupTag  = regexp.MustCompile(`^` + engine.GameIDPattern + `$`)
	channelTag = regexp.MustCompile(`^(` + engine.GameIDPattern + `)-([tpmc])-([a-z2-7]{10,64})$`)
)

// FindRoute reads the route of a message: the first of To, Cc, Delivered-To
// and X-Original-To that carries a plus tag on host (the host's bare
// address, host@domain). Local parts and domains are compared without
// regard to case, and tags are read in lowercase.
func FindRoute(h gomail.Header, host string) Route {
	hostLocal, hostDomain, ok := splitAddress(host)
	if !ok {
		return Route{Kind: RouteNone}
	}
	var bare, invalid *Route
	for _, field := range routeHeaders {
		for _, v := range h.Values(field) {
			for _, addr := range addresses(v) {
				local, domain, ok := splitAddress(addr)
				if !ok || domain != hostDomain {
					continue
				}
				if local == hostLocal {
					if bare == nil {
						bare = &Route{Kind: RouteHost, Address: addr, Header: field}
					}
					continue
				}
				tag, found := strings.CutPrefix(local, hostLocal+"+")
				if !found {
					continue
				}
				r := Route{Address: addr, Header: field}
				if m := channelTag.FindStringSubmatch(tag); m != nil {
					r.Game, r.Token = m[1], m[3]
					r.Kind = map[string]RouteKind{"t": RouteThread, "p": RoutePrivate, "m": RouteMafia, "c": RouteConfirm}[m[2]]
					return r
				}
				if signupTag.MatchString(tag) {
					r.Kind, r.Game = RouteSignup, tag
					return r
				}
				if invalid == nil {
					r.Kind = RouteInvalid
					invalid = &r
				}
			}
		}
	}
	switch {
	case invalid != nil:
		return *invalid
	case bare != nil:
		return *bare
	}
	return Route{Kind: RouteNone}
}

// addresses reads the addresses of one header field. Delivered-To and
// X-Original-To hold a bare address that a strict parser may refuse (a
// trailing comment, no angle brackets), so a field the address parser
// cannot read is split by hand; routing only selects a token, it never
// authenticates anyone.
func addresses(v string) []string {
	if list, err := gomail.ParseAddressList(v); err == nil {
		out := make([]string, 0, len(list))
		for _, a := range list {
			out = append(out, a.Address)
		}
		return out
	}
	var out []string
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if i := strings.LastIndexByte(part, '<'); i >= 0 {
			part = part[i+1:]
			if j := strings.IndexByte(part, '>'); j >= 0 {
				part = part[:j]
			}
		}
		if a, err := mail.ParseAddress(strings.TrimSpace(part)); err == nil {
			out = append(out, a.Address)
		}
	}
	return out
}

// splitAddress splits an address into its lowercased local part and domain.
func splitAddress(addr string) (local, domain string, ok bool) {
	i := strings.LastIndexByte(addr, '@')
	if i <= 0 || i == len(addr)-1 {
		return "", "", false
	}
	return strings.ToLower(addr[:i]), strings.ToLower(addr[i+1:]), true
}

// sameAddress compares two addresses the way mail providers treat them in
// practice: without regard to case.
func sameAddress(a, b string) bool {
	la, da, ok1 := splitAddress(a)
	lb, db, ok2 := splitAddress(b)
	return ok1 && ok2 && la == lb && da == db
}
