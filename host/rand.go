package host

import "crypto/rand"

// cryptoRand is the role draw's random source (S2).
var cryptoRand = rand.Reader
