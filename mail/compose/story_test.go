package compose_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/mail/compose"
)

// The end mail shows the story's picture in its HTML, attached as an
// inline PNG beside it; the plain text never refers to it.
func TestEndMailCarriesThePicture(t *testing.T) {
	t.Parallel()
	h, _ := playClassic(t)
	var ends int
	for _, m := range h.all {
		if m.Kind != compose.KindEnd {
			continue
		}
		ends++
		p := readBack(t, m.Raw)
		if len(p.images) != 1 {
			t.Fatalf("%s: %d pictures, want 1", m.Recipient, len(p.images))
		}
		for cid, b := range p.images {
			if cid != "dec26.story@example.org" {
				t.Errorf("%s: picture named %q", m.Recipient, cid)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: the picture is no PNG: %v", m.Recipient, err)
			}
			if w := img.Bounds().Dx(); w != 600 {
				t.Errorf("%s: picture %d px wide, want 600", m.Recipient, w)
			}
			if strings.Contains(p.text, "cid:") || strings.Contains(p.text, ".png") {
				t.Errorf("%s: the plain text refers to the picture", m.Recipient)
			}
			// MAFIAMAIL_STORY_OUT=DIR writes one end mail's HTML and
			// picture, to look at in a browser.
			if dir := os.Getenv("MAFIAMAIL_STORY_OUT"); dir != "" && m.Recipient == "s1" {
				html := strings.ReplaceAll(p.html, "cid:"+cid, "votes.png")
				if err := os.WriteFile(filepath.Join(dir, "end.html"), []byte(html), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "votes.png"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if ends == 0 {
		t.Fatal("no end mail")
	}
}
