package story

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"sort"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
)

// The picture's geometry, in pixels. It is drawn 600 wide, the width of
// the mail's column, with text large enough to read when a phone shows it
// at 390.
const (
	picWidth   = 600
	picMargin  = 10
	picRow     = 28
	picTitle   = 34
	picGap     = 18
	picNameW   = 200
	picFlowL   = picMargin + picNameW
	picFlowR   = picWidth - picMargin - picNameW
	picTextPt  = 20
	picTitlePt = 21
)

// Colours: the sides as the mail's grid shows them, and grey for what is
// not (yet) known.
var (
	picBackground = color.RGBA{0xff, 0xff, 0xff, 0xff}
	picInk        = color.RGBA{0x22, 0x22, 0x22, 0xff}
	picMuted      = color.RGBA{0x7a, 0x7a, 0x74, 0xff}
	picTown       = color.RGBA{0x1f, 0x5f, 0xa8, 0xff}
	picMafia      = color.RGBA{0xb3, 0x26, 0x1e, 0xff}
	picRule       = color.RGBA{0xd9, 0xd9, 0xd2, 0xff}
)

var (
	fontsOnce             sync.Once
	regularFont, boldFont *opentype.Font
	fontsErr              error
)

// faces gives a picture its own faces of the Go fonts, which are compiled
// into the binary: the picture needs no font of the machine's and draws the
// same everywhere. The fonts are parsed once and are safe to share; a face
// is not (it keeps the buffers of the glyph it draws), so that Picture is
// safe to call from several goroutines, each drawing takes its own.
func faces() (regular, bold font.Face, err error) {
	fontsOnce.Do(func() {
		if regularFont, fontsErr = opentype.Parse(goregular.TTF); fontsErr != nil {
			fontsErr = fmt.Errorf("story picture: parse font: %w", fontsErr)
			return
		}
		if boldFont, fontsErr = opentype.Parse(gobold.TTF); fontsErr != nil {
			fontsErr = fmt.Errorf("story picture: parse font: %w", fontsErr)
		}
	})
	if fontsErr != nil {
		return nil, nil, fontsErr
	}
	if regular, err = opentype.NewFace(regularFont, &opentype.FaceOptions{Size: picTextPt, DPI: 72, Hinting: font.HintingFull}); err != nil {
		return nil, nil, fmt.Errorf("story picture: font face: %w", err)
	}
	if bold, err = opentype.NewFace(boldFont, &opentype.FaceOptions{Size: picTitlePt, DPI: 72, Hinting: font.HintingFull}); err != nil {
		return nil, nil, fmt.Errorf("story picture: font face: %w", err)
	}
	return regular, bold, nil
}

// panel is one closed round, ready to draw.
type panel struct {
	title   string
	voters  []Vote
	targets []target
	// noOne is how the picture's language names a null vote ("null"), the
	// tallies' word for it.
	noOne string
}

// noOne is the target of a null vote among a panel's targets: no name a
// player can have.
const noOne = "\x00no one"

type target struct {
	name  string
	votes int
}

// Picture draws the votes of each closed round flowing from each voter to
// their target, coloured by the voter's side once the game is over (grey
// before), as a PNG. It is a pure function of the story: the same story
// gives the same bytes. A story with no closed round has no picture (nil).
// word gives the picture's words in the game's language from their
// English (a language's Phrase; nil for English).
func Picture(h History, word func(english string) string) ([]byte, error) {
	if word == nil {
		word = func(s string) string { return s }
	}
	panels := panelsOf(h, word)
	if len(panels) == 0 {
		return nil, nil
	}
	regular, bold, err := faces()
	if err != nil {
		return nil, err
	}
	height := picMargin
	for _, p := range panels {
		height += panelHeight(p) + picGap
	}
	img := image.NewRGBA(image.Rect(0, 0, picWidth, height))
	draw.Draw(img, img.Bounds(), image.NewUniform(picBackground), image.Point{}, draw.Src)
	side := map[string]engine.Side{}
	for _, p := range h.Players {
		side[p.Name] = p.Side
	}
	flows := vector.NewRasterizer(picWidth, 0)
	y := picMargin
	for i, p := range panels {
		if i > 0 {
			fillRect(img, image.Rect(picMargin, y-picGap/2, picWidth-picMargin, y-picGap/2+1), picRule)
		}
		drawPanel(img, flows, p, y, side, regular, bold)
		y += panelHeight(p) + picGap
	}
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&b, paletted(img)); err != nil {
		return nil, fmt.Errorf("story picture: encode: %w", err)
	}
	return b.Bytes(), nil
}

func panelsOf(h History, word func(string) string) []panel {
	var out []panel
	for _, d := range h.Days {
		for _, r := range d.Rounds {
			if r.Closed.IsZero() {
				continue
			}
			p := panel{title: panelTitle(d, r, word), voters: r.Votes, noOne: word(lang.Key("null"))}
			count := map[string]int{}
			for _, v := range r.Votes {
				if t := voteTarget(v); t != "" {
					count[t]++
				}
			}
			for name, n := range count {
				p.targets = append(p.targets, target{name, n})
			}
			sort.Slice(p.targets, func(i, j int) bool {
				a, b := p.targets[i], p.targets[j]
				if a.votes != b.votes {
					return a.votes > b.votes
				}
				return a.name < b.name
			})
			out = append(out, p)
		}
	}
	return out
}

func panelTitle(d Day, r Round, word func(string) string) string {
	t := fmt.Sprintf(word(lang.Key("Day %d")), d.Number)
	switch r.Kind {
	case engine.Runoff:
		t = fmt.Sprintf(word(lang.Key("Day %d, runoff")), d.Number)
	case engine.Extra:
		t = fmt.Sprintf(word(lang.Key("After Night %d, extra round")), d.Number)
	}
	switch r.Outcome {
	case engine.Eliminated:
		t = fmt.Sprintf(word(lang.Key("%s: %s out")), t, r.Target)
	case engine.ToRunoff:
		t = fmt.Sprintf(word(lang.Key("%s: a tie")), t)
	case engine.Forfeited, engine.NoVotes:
		t = fmt.Sprintf(word(lang.Key("%s: no one out")), t)
	case engine.Void:
		t = fmt.Sprintf(word(lang.Key("%s: void")), t)
	}
	return t
}

// voteTarget is where a vote flows: a name, noOne, or "" for no vote.
func voteTarget(v Vote) string {
	switch {
	case v.Null:
		return noOne
	default:
		return v.Target
	}
}

func panelHeight(p panel) int {
	return picTitle + max(len(p.voters), len(p.targets))*picRow
}

func sideColour(s engine.Side) color.RGBA {
	switch s {
	case engine.Town:
		return picTown
	case engine.MafiaWin:
		return picMafia
	}
	return picMuted
}

func drawPanel(img *image.RGBA, flows *vector.Rasterizer, p panel, top int, side map[string]engine.Side, regular, bold font.Face) {
	drawText(img, bold, picMargin, top+picTitle-10, p.title, picInk)
	rows := max(len(p.voters), len(p.targets))
	voterTop := top + picTitle + (rows-len(p.voters))*picRow/2
	targetTop := top + picTitle + (rows-len(p.targets))*picRow/2
	targetY := map[string]int{}
	for i, t := range p.targets {
		y := targetTop + i*picRow + picRow/2
		targetY[t.name] = y
		name, c := t.name, picInk
		if name == noOne {
			name = p.noOne
		} else {
			c = sideColour(side[t.name])
		}
		label := fmt.Sprintf("%s (%d)", name, t.votes)
		drawText(img, regular, picFlowR+8, y+6, fit(regular, label, picNameW-8), c)
	}
	for i, v := range p.voters {
		y := voterTop + i*picRow + picRow/2
		c := sideColour(side[v.Voter])
		label := fit(regular, v.Voter, picNameW-12)
		w := font.MeasureString(regular, label).Round()
		drawText(img, regular, picFlowL-8-w, y+6, label, c)
		if ty, ok := targetY[voteTarget(v)]; ok {
			flow(img, flows, float32(picFlowL-2), float32(y), float32(picFlowR+2), float32(ty), c)
		}
	}
}

// flow draws a curve from a voter to their target. The rasterizer ends
// below the curve's lowest row rather than at the picture's foot: it costs
// its area, and a picture of a long game is many panels tall, with a flow
// for every vote of every round. It still starts at the picture's top
// and spans its width, so that the curve is rasterized from the very same
// coordinates and shades the very same pixels, to the byte. The flows of
// a picture share one rasterizer, r, and so its buffers: Reset clears
// them as a new one would be.
func flow(img *image.RGBA, r *vector.Rasterizer, x0, y0, x1, y1 float32, c color.RGBA) {
	const half = 1.6
	// The curve's lowest row, and two more for the shading of its edge.
	bottom := min(int(max(y0, y1)+half)+3, img.Bounds().Dy())
	r.Reset(picWidth, bottom)
	mid := (x0 + x1) / 2
	// The band between two cubic curves offset vertically: a stroke of
	// even thickness where the curve runs flat, enough for a thin flow.
	r.MoveTo(x0, y0-half)
	r.CubeTo(mid, y0-half, mid, y1-half, x1, y1-half)
	r.LineTo(x1, y1+half)
	r.CubeTo(mid, y1+half, mid, y0+half, x0, y0+half)
	r.ClosePath()
	src := image.NewUniform(color.RGBA{c.R, c.G, c.B, 0xff})
	r.DrawOp = draw.Over
	r.Draw(img, image.Rect(0, 0, picWidth, bottom).Intersect(img.Bounds()), src, image.Point{})
}

// paletted maps the picture onto a palette of its few colours, each
// blended with white in 16 steps for the edges of text and curves: an
// eighth of the bytes of full colour, in a mail that goes to every player.
// Each pixel takes its nearest colour, with no dithering, so the bytes
// stay the same for the same story.
func paletted(img *image.RGBA) *image.Paletted {
	pal := color.Palette{picBackground}
	for _, c := range []color.RGBA{picInk, picMuted, picTown, picMafia, picRule} {
		for step := 1; step <= 16; step++ {
			mix := func(v uint8) uint8 { return uint8(255 - (255-int(v))*step/16) }
			pal = append(pal, color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff})
		}
	}
	out := image.NewPaletted(img.Bounds(), pal)
	draw.Draw(out, out.Bounds(), img, image.Point{}, draw.Src)
	return out
}

func drawText(img *image.RGBA, face font.Face, x, y int, s string, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// fit cuts a label to a width, with "…".
func fit(face font.Face, s string, w int) string {
	if font.MeasureString(face, s).Round() <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 1 && font.MeasureString(face, string(r)+"…").Round() > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}
