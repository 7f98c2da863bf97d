package templates

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/lang"
)

// TestHTMLShowsPlayersMarkupAsText: a player's words and name reach the
// HTML part as text, never as markup, in every language, and the first
// render (which is when html/template escapes the templates) reads as the
// renders after it.
func TestHTMLShowsPlayersMarkupAsText(t *testing.T) {
	for _, l := range lang.All() {
		evil := `<script>alert("x")</script> & <a href="javascript:x">y</a> 'q' +1 " onmouseover="alert(1)`
		m := message(t, &Section{Kind: "post", Name: `Bob"><img src=x onerror=alert(1)>`, Text: evil})
		m.Lang = l.Tag
		first, err := Render("post", m)
		if err != nil {
			t.Fatal(err)
		}
		second, err := Render("post", m)
		if err != nil {
			t.Fatal(err)
		}
		if second.HTML != first.HTML || second.Text != first.Text {
			t.Errorf("%s: the second render differs:\n%s\n---\n%s", l.Tag, first.HTML, second.HTML)
		}
		for _, bad := range []string{"<script", "<img", `<a href="javascript`, `" onmouseover=`} {
			if strings.Contains(first.HTML, bad) {
				t.Errorf("%s: the HTML part holds %q", l.Tag, bad)
			}
		}
	}
}
