package story

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image/png"
	"os"
	"testing"
)

// The picture of a fixed game: its size, and its bytes, which only a change
// to the drawing may change (STORY_PICTURE_OUT=file.png writes it, to look
// at before setting the new hash here).
func TestPictureGolden(t *testing.T) {
	b, err := Picture(Build(ended(sampleLog())), nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	// Two closed rounds of Day 1 and none of Day 2: one panel of five
	// voters.
	if got := img.Bounds().Size(); got.X != 600 || got.Y != 10+34+5*28+18 {
		t.Errorf("size = %v", got)
	}
	sum := sha256.Sum256(b)
	const want = "c46ef2cf835e00e8f34b376c67e1712232d977f5b62bb420f931b7ef6ef26b2e"
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Errorf("picture hash = %s, want %s", got, want)
	}
	if out := os.Getenv("STORY_PICTURE_OUT"); out != "" {
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again, err := Picture(Build(ended(sampleLog())), nil)
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("a second drawing differs (err %v)", err)
	}
}

// Pictures drawn at once come out as one drawn alone: they share no face, whose glyph buffers one drawing would
// overwrite under another (go test -race tells it, and the bytes differ).
func TestPicturesDrawnAtOnceAreEachRight(t *testing.T) {
	want, err := Picture(Build(ended(sampleLog())), nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	got := make([][]byte, n)
	errs := make([]error, n)
	done := make(chan int)
	for i := range n {
		go func() {
			got[i], errs[i] = Picture(Build(ended(sampleLog())), nil)
			done <- i
		}()
	}
	for range n {
		<-done
	}
	for i := range n {
		if errs[i] != nil || !bytes.Equal(got[i], want) {
			t.Errorf("picture %d drawn beside others differs from one drawn alone (err %v)", i, errs[i])
		}
	}
}
