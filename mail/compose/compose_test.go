package compose_test

import "testing"

func TestGoldenClassic(t *testing.T) {
	_, g := playClassic(t)
	g.check()
	g.covers()
}

func TestInvariantsClassic(t *testing.T) {
	h, _ := playClassic(t)
	checkInvariants(t, h)
}

func TestGoldenMafia150(t *testing.T) {
	_, g := playMafia150(t)
	g.check()
	g.covers()
}

func TestInvariantsMafia150(t *testing.T) {
	h, _ := playMafia150(t)
	checkInvariants(t, h)
}
