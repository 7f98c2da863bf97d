package mailserver

import (
	"bufio"
	"bytes"
	"net/mail"
	"strings"

	"github.com/emersion/go-message/textproto"
	"github.com/emersion/go-msgauth/authres"
)

// authResults is the Authentication-Results field the server writes on a
// message it delivers, with its Domain as authserv-id (RFC 8601): auth=pass
// with the From address as smtp.auth when the session logged in as that
// very mailbox, auth=pass with the login otherwise (which names no From),
// and auth=none when no one logged in. A reader that trusts the Domain
// learns from it whether the From address is the sender's own.
func (s *Server) authResults(login string, data []byte) string {
	if login == "" {
		return authres.Format(s.opts.Domain, []authres.Result{&authres.AuthResult{Value: authres.ResultNone}})
	}
	as := login + "@" + s.opts.Domain
	if from := headerFrom(data); from != "" {
		local, domain, ok := splitAddress(from)
		name, _, _ := strings.Cut(local, "+")
		if ok && name == login && s.domains[domain] {
			as = from
		}
	}
	return authres.Format(s.opts.Domain, []authres.Result{&authres.AuthResult{Value: authres.ResultPass, Auth: as}})
}

// headerFrom is the one address of the message's From field, lowercased,
// or "" when there is not exactly one.
func headerFrom(data []byte) string {
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(data)))
	if err != nil {
		return ""
	}
	list, err := mail.ParseAddressList(h.Get("From"))
	if err != nil || len(list) != 1 {
		return ""
	}
	return strings.ToLower(list[0].Address)
}

// withoutOwnAuthResults removes the Authentication-Results fields that
// claim the server's own authserv-id: only the server may write those, and
// one a sender wrote in advance would otherwise be read as the server's
// (RFC 8601 section 5). A message whose header cannot be read is left as
// it is; it carries no field a reader could take for the server's.
func (s *Server) withoutOwnAuthResults(data []byte) []byte {
	br := bufio.NewReader(bytes.NewReader(data))
	h, err := textproto.ReadHeader(br)
	if err != nil {
		return data
	}
	fields := h.FieldsByKey("Authentication-Results")
	removed := false
	for fields.Next() {
		id, _, _ := authres.Parse(fields.Value())
		if strings.EqualFold(strings.TrimSpace(id), s.opts.Domain) || id == "" {
			fields.Del()
			removed = true
		}
	}
	if !removed {
		return data
	}
	var b bytes.Buffer
	if err := textproto.WriteHeader(&b, h); err != nil {
		return data
	}
	_, _ = br.WriteTo(&b)
	return b.Bytes()
}
