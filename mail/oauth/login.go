package oauth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-sasl"
)

// Bearer gives access tokens; *Source is the one the host uses.
type Bearer interface {
	// Token returns an access token that is valid now.
	Token(ctx context.Context) (string, error)
	// Invalidate says the server refused token.
	Invalidate(token string)
}

// Mechanism picks the SASL mechanism among those a server offers:
// OAUTHBEARER, the standard one (RFC 7628), else XOAUTH2.
func Mechanism(offered []string) (string, error) {
	has := func(m string) bool {
		return slices.ContainsFunc(offered, func(o string) bool { return strings.EqualFold(o, m) })
	}
	switch {
	case has(sasl.OAuthBearer):
		return sasl.OAuthBearer, nil
	case has(XOAuth2):
		return XOAuth2, nil
	}
	return "", fmt.Errorf("the server offers neither OAUTHBEARER nor XOAUTH2 (it offers %s)", strings.Join(offered, " "))
}

// Client returns the SASL client of mech for user and token.
func Client(mech, user, token string) sasl.Client {
	if mech == sasl.OAuthBearer {
		return NewOAuthBearerClient(user, token)
	}
	return NewXOAuth2Client(user, token)
}

// Authenticate logs in as user with mech through auth; ctx bounds the
// token requests. When the server refuses the token (refused says which
// errors mean that), the token is refreshed and the login tried once
// more: the provider may have revoked an access token before its expiry.
func Authenticate(ctx context.Context, b Bearer, mech, user string, auth func(sasl.Client) error, refused func(error) bool) error {
	for try := 0; ; try++ {
		token, err := b.Token(ctx)
		if err != nil {
			return err
		}
		err = auth(Client(mech, user, token))
		if err == nil || try > 0 || !refusal(err, refused) {
			return err
		}
		b.Invalidate(token)
	}
}

func refusal(err error, refused func(error) bool) bool {
	var ob *sasl.OAuthBearerError
	var xo *XOAuth2Error
	return errors.As(err, &ob) || errors.As(err, &xo) || (refused != nil && refused(err))
}
