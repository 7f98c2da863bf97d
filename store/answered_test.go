package store

import (
	"context"
	"path/filepath"
	"testing"
)

// A reply finds, by its In-Reply-To and References, the copy of the host's
// mail its author was sent, with what every reader of that mail was sent;
// never another reader's copy, and nothing for an unknown Message-ID.
func TestSentToFindsTheAuthorsCopy(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "answered.db"))
	mustCreateGame(t, s, "g1")
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for _, m := range []OutMessage{
			{MessageID: "<a1@host>", Game: "g1", Kind: "thread", From: "host@example.org", To: []string{"alice@example.org"},
				Raw: rawMail("<a1@host>", "post"), Public: "\n> I trust Bob.", PublicIn: "thread"},
			{MessageID: "<b1@host>", Game: "g1", Kind: "thread", From: "host@example.org", To: []string{"bob@example.org"},
				Raw: rawMail("<b1@host>", "post"), Public: "\n> I trust Bob.", PublicIn: "thread"},
			{MessageID: "<a2@host>", Game: "g1", Kind: "role", From: "host@example.org", To: []string{"alice@example.org"},
				Raw: rawMail("<a2@host>", "role")},
		} {
			if _, err := tx.Enqueue(ctx, m, t0); err != nil {
				return err
			}
		}
		return nil
	})
	for _, c := range []struct {
		ids          []string
		to, want, in string
	}{
		{[]string{"<a1@host>"}, "Alice@Example.org", "<a1@host>", "thread"},
		{[]string{"<g1.thread.d1@host>", "b1@host", "<a1@host>"}, "alice@example.org", "<a1@host>", "thread"},
		{[]string{"<b1@host>"}, "alice@example.org", "", ""},
		{[]string{"<a2@host>"}, "alice@example.org", "<a2@host>", ""},
		{[]string{"<zz@host>"}, "alice@example.org", "", ""},
	} {
		got, ok, err := s.SentTo(ctx, c.ids, c.to)
		if err != nil {
			t.Fatal(err)
		}
		if c.want == "" {
			if ok {
				t.Errorf("%v for %s found %s", c.ids, c.to, got.MessageID)
			}
			continue
		}
		if !ok || got.MessageID != c.want || got.Game != "g1" || got.PublicIn != c.in || len(got.Raw) == 0 {
			t.Errorf("%v for %s: %+v %v, want %s", c.ids, c.to, got, ok, c.want)
		}
		if c.in != "" && got.Public != "\n> I trust Bob." {
			t.Errorf("%v: public lines %q", c.ids, got.Public)
		}
	}
}
