package oauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/emersion/go-sasl"
)

// XOAuth2 is the name of Google's and Microsoft's mechanism, which go-sasl
// no longer carries.
const XOAuth2 = "XOAUTH2"

// XOAuth2Error is the JSON challenge a server sends when it refuses the
// token.
type XOAuth2Error struct {
	Status  string `json:"status"`
	Schemes string `json:"schemes"`
	Scope   string `json:"scope"`
}

func (e *XOAuth2Error) Error() string {
	if e.Status == "" {
		return "XOAUTH2: the server refused the token"
	}
	return "XOAUTH2: the server refused the token (status " + e.Status + ")"
}

type xoauth2Client struct {
	user, token string
	refusal     *XOAuth2Error
}

// NewXOAuth2Client logs in as user with an access token. When the server
// refuses the token it sends a JSON challenge; the client answers it with
// an empty response, as the mechanism asks, and the server then ends the
// exchange with its failure reply.
func NewXOAuth2Client(user, token string) sasl.Client {
	return &xoauth2Client{user: user, token: token}
}

func (c *xoauth2Client) Start() (string, []byte, error) {
	return XOAuth2, []byte("user=" + c.user + "\x01auth=Bearer " + c.token + "\x01\x01"), nil
}

func (c *xoauth2Client) Next(challenge []byte) ([]byte, error) {
	if c.refusal != nil {
		return nil, c.refusal
	}
	c.refusal = &XOAuth2Error{}
	// A challenge that is not JSON still means refusal.
	_ = json.Unmarshal(challenge, c.refusal)
	return []byte{}, nil
}

type xoauth2Server struct {
	check  func(user, token string) error
	failed error
	done   bool
}

// NewXOAuth2Server checks an XOAUTH2 login with check. A refusal sends
// the JSON challenge and, after the client's empty answer, returns
// check's error.
func NewXOAuth2Server(check func(user, token string) error) sasl.Server {
	return &xoauth2Server{check: check}
}

func (s *xoauth2Server) Next(resp []byte) ([]byte, bool, error) {
	switch {
	case s.failed != nil:
		return nil, true, s.failed
	case s.done:
		return nil, true, sasl.ErrUnexpectedClientResponse
	case resp == nil:
		// No initial response: ask for it.
		return []byte{}, false, nil
	}
	s.done = true
	user, token, err := parseXOAuth2(resp)
	if err == nil {
		err = s.check(user, token)
	}
	if err == nil {
		return nil, true, nil
	}
	s.failed = err
	blob, _ := json.Marshal(XOAuth2Error{Status: "401", Schemes: "bearer"})
	return blob, false, nil
}

func parseXOAuth2(resp []byte) (user, token string, err error) {
	for _, f := range bytes.Split(resp, []byte{1}) {
		k, v, _ := strings.Cut(string(f), "=")
		switch k {
		case "user":
			user = v
		case "auth":
			scheme, t, ok := strings.Cut(v, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				return "", "", errors.New("XOAUTH2: not a bearer token")
			}
			token = t
		}
	}
	if user == "" || token == "" {
		return "", "", errors.New("XOAUTH2: malformed response")
	}
	return user, token, nil
}

type oauthBearerClient struct {
	sasl.Client
	refusal *sasl.OAuthBearerError
}

// NewOAuthBearerClient is go-sasl's OAUTHBEARER client (RFC 7628), but
// one that answers the server's error challenge with the dummy response
// %x01 the RFC asks for. go-sasl's client returns an error instead, which
// go-imap's client takes as the end of AUTHENTICATE while the server still
// waits for an answer.
func NewOAuthBearerClient(user, token string) sasl.Client {
	return &oauthBearerClient{Client: sasl.NewOAuthBearerClient(&sasl.OAuthBearerOptions{Username: user, Token: token})}
}

func (c *oauthBearerClient) Next(challenge []byte) ([]byte, error) {
	if c.refusal != nil {
		return nil, c.refusal
	}
	c.refusal = &sasl.OAuthBearerError{}
	_ = json.Unmarshal(challenge, c.refusal)
	return []byte{1}, nil
}
